/**
 * Agent-runner replicas end to end: every service its own OS process against real NATS and
 * Postgres, with the script agent. Two runners on one work queue take different attempts and
 * no attempt runs twice; a runner killed with SIGKILL in the middle of a session leaves the job
 * unacknowledged, another runner picks it up after the ack wait and finishes the attempt, which
 * ends with exactly one captured envelope.
 */
import * as path from 'node:path';
import type { RunEvent, RunSummary } from '@stageflow/domain';
import { assertBuilt, deployment, ROOT, type Deployment, type ServiceProcess } from './support/cluster';
import { natsRunEvents } from './support/events';

jest.setTimeout(110_000);

const FIXTURES = path.join(ROOT, 'e2e/fixtures/agents');
const AGENT = `script:${path.join(FIXTURES, 'agent.script.yaml')}`;

/** The `running attempt` log lines of a runner: which attempt, on which delivery. */
function attemptsRun(runner: ServiceProcess): { stage: string; attempt: number; delivery: number }[] {
  return runner
    .logs()
    .split('\n')
    .filter((line) => line.includes('"msg":"running attempt"'))
    .map((line) => JSON.parse(line) as { stage: string; attempt: number; delivery: number });
}

describe('agent-runner replicas e2e', () => {
  let d: Deployment;
  beforeAll(() => assertBuilt());
  afterEach(async () => d?.stop());

  it('two agent-runners on one queue take different attempts and none runs twice', async () => {
    d = deployment();
    const oneAtATime = { SF_AGENT_CONCURRENCY: '1' };
    await Promise.all([d.start('scheduler'), d.start('recovery'), d.start('verifier')]);
    const [a, b] = await Promise.all([d.start('agent-runner', ['--agent', AGENT], oneAtATime), d.start('agent-runner', ['--agent', AGENT], oneAtATime)]);
    const run = await d.sf(['run', '--pipeline', path.join(FIXTURES, 'branches.pipeline.yaml'), '--json'], { timeoutMs: 90_000 });
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout) as RunSummary;
    expect(summary.stages.map((s) => [s.id, s.status])).toEqual([['left', 'succeeded'], ['right', 'succeeded']]);

    const ranByA = attemptsRun(a);
    const ranByB = attemptsRun(b);
    expect(ranByA).toHaveLength(1);
    expect(ranByB).toHaveLength(1);
    expect([ranByA[0]!.stage, ranByB[0]!.stage].sort()).toEqual(['left', 'right']);
    expect([...ranByA, ...ranByB].map((r) => r.delivery)).toEqual([1, 1]);

    const events = await natsRunEvents(d, summary.run_id);
    for (const stageId of ['left', 'right']) {
      expect(events.filter((e) => e.type === 'StageAttemptStarted' && e.stageId === stageId)).toHaveLength(1);
      expect(events.filter((e) => e.type === 'EnvelopeCaptured' && e.stageId === stageId)).toHaveLength(1);
    }
  });

  it('a runner killed mid-session is replaced: another runner picks the attempt up after the ack wait and finishes it', async () => {
    d = deployment({ SF_ACK_WAIT_MS: '3000' });
    await Promise.all([d.start('scheduler'), d.start('recovery'), d.start('verifier')]);
    const first = await d.start('agent-runner', ['--agent', AGENT]);
    const running = d.sf(['run', '--pipeline', path.join(FIXTURES, 'long.pipeline.yaml'), '--json'], { timeoutMs: 100_000 });
    await first.waitForLog(/"msg":"running attempt".*"stage":"long"/, 60_000);
    await first.kill('SIGKILL');
    const second = await d.start('agent-runner', ['--agent', AGENT]);

    const run = await running;
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout) as RunSummary;
    expect(summary.stages).toEqual([expect.objectContaining({ id: 'long', status: 'succeeded', attempts: [expect.objectContaining({ n: 1, disposition: 'passed' })] })]);
    expect(first.logs()).not.toMatch(/"msg":"attempt session ended"/);
    expect(attemptsRun(second).map(({ stage, attempt, delivery }) => ({ stage, attempt, delivery }))).toEqual([{ stage: 'long', attempt: 1, delivery: 2 }]);

    const events = await natsRunEvents(d, summary.run_id);
    const ofAttempt = (type: RunEvent['type']) => events.filter((e) => e.type === type && 'stageId' in e && e.stageId === 'long');
    expect(ofAttempt('StageAttemptStarted')).toHaveLength(1);
    expect(ofAttempt('CheckoutBaselineRecorded')).toHaveLength(1);
    expect(ofAttempt('EnvelopeCaptured')).toHaveLength(1);
    expect(ofAttempt('AttemptVerified')).toHaveLength(1);
  });
});
