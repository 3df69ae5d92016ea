/**
 * The verifier scaled out: two replicas share the verify queue, each in its own working directory
 * (apart from the agent-runner's); one killed mid-check has its job redelivered to the other and
 * the attempt ends with exactly one disposition; a check longer than the ack wait reports
 * progress and is not redelivered.
 */
import * as path from 'node:path';
import { assertBuilt, deployment, ROOT, type Deployment, type ServiceProcess } from './support/cluster';
import { natsRunEvents } from './support/events';

jest.setTimeout(120_000);

const AGENT = `script:${path.join(ROOT, 'examples/hello/agent.script.yaml')}`;
const deliveries = (p: ServiceProcess) => [...p.logs().matchAll(/"msg":"verifying".*"delivery":(\d+)/g)].map((m) => Number(m[1]));

describe('verifier replicas e2e', () => {
  let d: Deployment;
  beforeAll(() => assertBuilt());
  afterEach(async () => d?.stop());

  it('a replica killed mid-check: the other takes the job and the attempt gets exactly one disposition', async () => {
    d = deployment({ SF_ACK_WAIT_MS: '2500' });
    await Promise.all([d.start('scheduler'), d.start('recovery'), d.start('agent-runner', ['--agent', AGENT])]);
    const replicas = await Promise.all([d.start('verifier'), d.start('verifier')]);
    expect(new Set(replicas.map((r) => r.home)).size).toBe(2);
    const running = d.sf(['run', '--pipeline', path.join(ROOT, 'e2e/fixtures/slow-verify.pipeline.yaml'), '--json'], { timeoutMs: 90_000 });
    const holder = await Promise.race(replicas.map((r) => r.waitForLog(/"msg":"verifying"/, 30_000).then(() => r)));
    const other = replicas.find((r) => r !== holder)!;
    await holder.kill('SIGKILL');
    const run = await running;
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(deliveries(other)).toEqual([2]);
    const verified = (await natsRunEvents(d, summary.run_id)).filter((e) => e.type === 'AttemptVerified');
    expect(verified).toHaveLength(1);
    expect(verified[0]).toMatchObject({ stageId: 'greet', attempt: 1, disposition: 'passed' });
  });

  it('a check longer than the ack wait keeps its job by reporting progress', async () => {
    d = deployment({ SF_ACK_WAIT_MS: '1500' });
    await Promise.all([d.start('scheduler'), d.start('recovery'), d.start('agent-runner', ['--agent', AGENT])]);
    const replicas = await Promise.all([d.start('verifier'), d.start('verifier')]);
    const run = await d.sf(['run', '--pipeline', path.join(ROOT, 'e2e/fixtures/long-check.pipeline.yaml'), '--json'], { timeoutMs: 90_000 });
    expect(run.code).toBe(0);
    expect(replicas.flatMap(deliveries)).toEqual([1]);
  });
});
