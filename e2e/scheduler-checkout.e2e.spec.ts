/**
 * The run's checkout travels with the run: two agent-runners with different working directories
 * (each its own STAGEFLOW_HOME) share no disk, and stage two, run by the second runner, reads what
 * stage one wrote on the first. The handover is forced: runner A takes stage one and is stopped
 * before the verifier even starts; runner B starts only after stage one succeeded.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunEvent } from '@stageflow/domain';
import { assertBuilt, deployment, ROOT, type Deployment } from './support/cluster';
import { natsRunEvents } from './support/events';

jest.setTimeout(90_000);

const FIXTURES = path.join(ROOT, 'e2e/fixtures/scheduler');
const AGENT = `script:${path.join(FIXTURES, 'agent.script.yaml')}`;

/** Polls the run's events until `done` holds for them. */
async function eventsUntil(d: Deployment, runId: string, done: (events: RunEvent[]) => boolean, timeoutMs = 60_000): Promise<RunEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await natsRunEvents(d, runId);
    if (done(events)) return events;
    if (Date.now() > deadline) throw new Error(`run ${runId}: condition not met within ${timeoutMs} ms; events: ${events.map((e) => e.type).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('the run checkout across agent-runner replicas e2e', () => {
  let d: Deployment;
  beforeAll(() => assertBuilt());
  afterAll(async () => d?.stop());

  it('stage two on runner B reads what stage one wrote on runner A', async () => {
    d = deployment();
    await d.start('scheduler');
    await d.start('recovery');
    const runnerA = await d.start('agent-runner', ['--agent', AGENT]);
    const running = d.sf(['run', '--pipeline', path.join(FIXTURES, 'checkout.pipeline.yaml'), '--json'], { timeoutMs: 80_000 });

    const line = await runnerA.waitForLog(/"msg":"attempt session ended".*"stage":"co_write"/, 60_000);
    const runId = (JSON.parse(line) as { run: string }).run;
    await runnerA.kill('SIGTERM');
    await d.start('verifier');
    await eventsUntil(d, runId, (events) => events.some((e) => e.type === 'StageSucceeded' && e.stageId === 'co_write'));
    const runnerB = await d.start('agent-runner', ['--agent', AGENT]);

    const run = await running;
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.run_id).toBe(runId);
    expect(summary.stages.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
      ['co_write', 'succeeded'],
      ['co_read', 'succeeded'],
    ]);
    expect(runnerB.logs()).toMatch(/"msg":"running attempt".*"stage":"co_read"/);
    expect(runnerA.logs()).not.toMatch(/"stage":"co_read"/);

    // Each runner worked in its own directory: B's copy of the checkout was brought to the state A
    // left (from the blob store), then B's own change was made there.
    const checkoutOf = (home: string) => path.join(home, 'work', 'runs', runId, 'checkout');
    expect(runnerA.home).not.toBe(runnerB.home);
    expect(fs.readFileSync(path.join(checkoutOf(runnerB.home), 'src', 'a.txt'), 'utf8')).toBe('written by stage one\n');
    expect(fs.readFileSync(path.join(checkoutOf(runnerB.home), 'src', 'b.txt'), 'utf8')).toBe('written by stage one\n');
    expect(fs.existsSync(path.join(checkoutOf(runnerA.home), 'src', 'a.txt'))).toBe(true);
    expect(fs.existsSync(path.join(checkoutOf(runnerA.home), 'src', 'b.txt'))).toBe(false);

    const events = await natsRunEvents(d, runId);
    expect(events.flatMap((e) => (e.type === 'AttemptVerified' ? [[e.stageId, e.disposition]] : []))).toEqual([
      ['co_write', 'passed'],
      ['co_read', 'passed'],
    ]);
  });
});
