/**
 * A parked session resumes on another agent-runner replica that shares no disk with the one that
 * parked it: the answer is taken by the second runner, and the artifacts the session wrote
 * before asking reach it (the verifier's after-phase check reads them), so the attempt passes.
 */
import * as path from 'node:path';
import type { RunSummary } from '@stageflow/domain';
import { assertBuilt, deployment, ROOT, type Deployment } from './support/cluster';

jest.setTimeout(110_000);

const FIXTURES = path.join(ROOT, 'e2e/fixtures/agents');
const AGENT = `script:${path.join(FIXTURES, 'agent.script.yaml')}`;

describe('resuming a parked attempt on another replica e2e', () => {
  let d: Deployment;
  beforeAll(() => assertBuilt());
  afterEach(async () => d?.stop());

  it('an answer resumes the session on a second runner with the artifacts written before the question', async () => {
    d = deployment();
    await Promise.all([d.start('scheduler'), d.start('recovery'), d.start('verifier')]);
    const first = await d.start('agent-runner', ['--agent', AGENT]);
    const asked = await d.sf(['run', '--pipeline', path.join(FIXTURES, 'artifact-gate.pipeline.yaml'), '--json'], { timeoutMs: 90_000 });
    expect(asked.code).toBe(2);
    const waiting = JSON.parse(asked.stdout) as RunSummary;
    expect(waiting.stages).toEqual([expect.objectContaining({ id: 'ask_artifact', status: 'waiting', waiting_for: 'answer' })]);
    await first.kill('SIGTERM');

    const second = await d.start('agent-runner', ['--agent', AGENT]);
    const answered = await d.sf(['runs', 'answer', '--run', waiting.run_id, '--stage', 'ask_artifact', '--decision', 'accept', '--json'], { timeoutMs: 90_000 });
    expect(second.logs()).toMatch(/"msg":"running attempt".*"stage":"ask_artifact"/);
    expect(answered.code).toBe(0);
    const summary = JSON.parse(answered.stdout) as RunSummary;
    expect(summary.stages).toEqual([
      expect.objectContaining({ id: 'ask_artifact', status: 'succeeded', attempts: [expect.objectContaining({ n: 1, disposition: 'passed', checks: [{ id: 'plan', type: 'artifact', phase: 'after', status: 'passed' }] })] }),
    ]);
  });
});
