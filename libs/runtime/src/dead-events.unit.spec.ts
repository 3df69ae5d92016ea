import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { decideRequest, runStatus, type PipelineDefinition } from '@stageflow/domain';
import { endRunOfDeadMessage, loadConfig, openInfrastructure, type Infrastructure } from './index';

const pipeline: PipelineDefinition = {
  id: 'p',
  stages: [{ id: 'a', system_prompt: 'x', model: 'm', io: { input: { schema: { type: 'object' } }, output: { schema: { type: 'object' } } }, verify: [], gate_kinds: [], entry: true, route: [], replay_safe: true }],
};

describe('a dead-lettered message about a run', () => {
  let home: string;
  let infra: Infrastructure;
  beforeEach(async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-dead-events-'));
    infra = await openInfrastructure(loadConfig({ STAGEFLOW_HOME: home }));
    await infra.runs.execute('r1', (s) => decideRequest({ type: 'RequestRun', runId: 'r1', pipeline, input: {}, checkout: { kind: 'fresh' }, requestedBy: 't', now: new Date().toISOString() }, s));
  });
  afterEach(async () => {
    await infra.close();
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('ends the run in error, naming the subscriber, the message and the reason; a second report changes nothing', async () => {
    const letter = { durable: 'scheduler', seq: 7, subject: 'sf.evt.run.r1', reason: 'failed on delivery 10 of 10: TypeError: boom' };
    await endRunOfDeadMessage(infra, letter);
    await endRunOfDeadMessage(infra, letter);
    const { state, events } = await infra.runs.load('r1');
    expect(runStatus(state)).toBe('error');
    expect(state.outcomeReason).toBe('scheduler could not process sf.evt.run.r1 seq 7: failed on delivery 10 of 10: TypeError: boom');
    expect(events.filter((e) => e.type === 'RunErrored')).toHaveLength(1);
  });

  it('touches no run when the message was on another subject', async () => {
    await endRunOfDeadMessage(infra, { durable: 'x', seq: 1, subject: 'sf.evt.pipeline.r1', reason: 'r' });
    expect(runStatus((await infra.runs.load('r1')).state)).toBe('running');
  });
});
