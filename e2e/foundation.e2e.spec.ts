/**
 * The foundation end to end: one verified stage with every service as its own OS process against
 * real NATS and Postgres; and a verifier killed with SIGKILL while it holds the verification job
 * still leaves exactly one disposition for the attempt.
 */
import * as path from 'node:path';
import { assertBuilt, deployment, ROOT, type Deployment } from './support/cluster';
import { natsRunEvents } from './support/events';

jest.setTimeout(120_000);

const HELLO = path.join(ROOT, 'examples/hello/hello.pipeline.yaml');
const AGENT = `script:${path.join(ROOT, 'examples/hello/agent.script.yaml')}`;

describe('foundation e2e', () => {
  let d: Deployment;
  beforeAll(() => assertBuilt());
  afterEach(async () => d?.stop());

  it('runs hello with each service as its own process and the run succeeds', async () => {
    d = deployment();
    await Promise.all([
      d.start('scheduler', ['--port', '0']),
      d.start('recovery'),
      d.start('verifier'),
      d.start('agent-runner', ['--agent', AGENT]),
    ]);
    const run = await d.sf(['run', '--pipeline', HELLO, '--json']);
    expect(run.stderr).not.toMatch(/Error/);
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({ pipeline: 'hello', status: 'succeeded', stages: [{ id: 'greet', status: 'succeeded', attempts: [{ n: 1, disposition: 'passed', failure: null }] }] });
    expect(summary.stages[0].attempts[0].checks.map((c: { id: string; status: string }) => [c.id, c.status])).toEqual([
      ['greeting-file', 'passed'],
      ['greeting-says-hello', 'passed'],
    ]);
    const shown = await d.sf(['runs', 'show', '--run', summary.run_id, '--json']);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toEqual(summary);
  });

  it('a verifier killed while it holds the job is replaced and the attempt gets exactly one disposition', async () => {
    d = deployment({ SF_ACK_WAIT_MS: '2500' });
    await Promise.all([d.start('scheduler'), d.start('recovery'), d.start('agent-runner', ['--agent', AGENT])]);
    const first = await d.start('verifier');
    const running = d.sf(['run', '--pipeline', path.join(ROOT, 'e2e/fixtures/slow-verify.pipeline.yaml'), '--json'], { timeoutMs: 90_000 });
    await first.waitForLog(/"msg":"verifying"/, 30_000);
    await first.kill('SIGKILL');
    const second = await d.start('verifier');
    const run = await running;
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.status).toBe('succeeded');
    expect(second.logs()).toMatch(/"msg":"verifying".*"delivery":2/);
    const events = await natsRunEvents(d, summary.run_id);
    const dispositions = events.filter((e) => e.type === 'AttemptVerified' && e.stageId === 'greet' && e.attempt === 1);
    expect(dispositions).toHaveLength(1);
    expect(dispositions[0]).toMatchObject({ disposition: 'passed' });
  });
});
