import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { decideAdvance, decideRequest, type PipelineDefinition } from '@stageflow/domain';
import { loadConfig, openInfrastructure, type Infrastructure } from '@stageflow/runtime';
import { failAttemptsOfDeadJobs } from './dead-letters';

const pipeline: PipelineDefinition = {
  id: 'p',
  stages: [{ id: 'a', system_prompt: 'x', model: 'm', io: { input: { schema: { type: 'object' } }, output: { schema: { type: 'object' } } }, verify: [], gate_kinds: [], entry: true, route: [], replay_safe: true }],
};

describe('agent jobs that run out of deliveries', () => {
  let home: string;
  let infra: Infrastructure;
  beforeEach(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-agent-dead-'));
    infra = await openInfrastructure(loadConfig({ STAGEFLOW_HOME: home }), { queueOverrides: { agent: { ackWaitMs: 500, maxDeliver: 1 } } });
  });
  afterEach(async () => {
    await infra.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('fail their attempt with runner_error instead of leaving it running', async () => {
    const now = new Date().toISOString();
    await infra.runs.execute('r1', (s) => decideRequest({ type: 'RequestRun', runId: 'r1', pipeline, input: {}, checkout: { kind: 'fresh' }, requestedBy: 't', now }, s));
    await infra.runs.execute('r1', (s) => decideAdvance({ type: 'AdvanceRun', now, validateInput: () => null }, s));
    failAttemptsOfDeadJobs(infra);
    await infra.queues.enqueue('agent', { runId: 'r1', stageId: 'a', attempt: 1, resume: 0 }, 'agent.r1.a.1.0');
    const consumer = await infra.queues.consume('agent', async (job) => job.term('the runner crashed'));
    let attempt = (await infra.runs.load('r1')).state.stages.a.attempts[0];
    for (let i = 0; i < 200 && attempt.phase === 'running'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      attempt = (await infra.runs.load('r1')).state.stages.a.attempts[0];
    }
    await consumer.stop();
    expect(attempt).toMatchObject({ phase: 'failed', failureKind: 'runner_error' });
    expect(attempt.failure).toMatch(/the agent-runner could not finish the attempt: the runner crashed/);
  });
});
