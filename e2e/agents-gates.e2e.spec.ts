/**
 * Operator questions end to end on the embedded default with the script agent: each gate kind
 * (free_text, confirm, multi_question, artifact_backed) parks the run, `sf run` exits 2, and a
 * second OS process (`sf runs answer`) records the answer and continues the run in the
 * foreground; a rejected confirm fails the emit-phase gate.
 */
import * as path from 'node:path';
import type { RunSummary } from '@stageflow/domain';
import type { VerificationReport } from '@stageflow/runtime';
import { assertBuilt, ROOT } from './support/cluster';
import { embedded, type Embedded } from './support/embedded';
import { stageOf, statuses } from './support/summaries';

jest.setTimeout(90_000);

const FIXTURES = path.join(ROOT, 'e2e/fixtures/agents');
const AGENT = `script:${path.join(FIXTURES, 'agent.script.yaml')}`;


describe('operator questions e2e (embedded default, script agent)', () => {
  let sf: Embedded;
  const run = (name: string, code: number) => sf.json<RunSummary>(['run', '--pipeline', path.join(FIXTURES, `${name}.pipeline.yaml`), '--json'], code);
  const answer = (runId: string, stageId: string, code: number, flags: string[]) => sf.json<RunSummary>(['runs', 'answer', '--run', runId, '--stage', stageId, '--json', ...flags], code);

  beforeAll(() => assertBuilt());
  beforeEach(() => (sf = embedded({ SF_AGENT: AGENT })));
  afterEach(() => sf.cleanup());

  it('each gate kind parks the run (exit 2) and an answer from a second process continues it to success', async () => {
    const asked = await run('gates', 2);
    expect(asked.status).toBe('waiting');
    expect(stageOf(asked, 'ask_text')).toMatchObject({ status: 'waiting', waiting_for: 'answer', attempts: [{ n: 1 }] });
    const runId = asked.run_id;

    const afterText = await answer(runId, 'ask_text', 2, ['--text', 'Ada']);
    expect(statuses(afterText)).toEqual([['ask_text', 'succeeded'], ['ask_confirm', 'waiting'], ['ask_multi', 'pending'], ['ask_artifact', 'pending']]);

    const afterConfirm = await answer(runId, 'ask_confirm', 2, ['--decision', 'accept', '--text', 'go']);
    expect(statuses(afterConfirm)).toEqual([['ask_text', 'succeeded'], ['ask_confirm', 'succeeded'], ['ask_multi', 'waiting'], ['ask_artifact', 'pending']]);

    const afterMulti = await answer(runId, 'ask_multi', 2, ['--answers', JSON.stringify({ version: '1.2.0', publish: { decision: 'accept' } })]);
    expect(statuses(afterMulti)).toEqual([['ask_text', 'succeeded'], ['ask_confirm', 'succeeded'], ['ask_multi', 'succeeded'], ['ask_artifact', 'waiting']]);

    const done = await answer(runId, 'ask_artifact', 0, ['--decision', 'accept', '--text', 'plan looks right']);
    expect(done.status).toBe('succeeded');
    for (const id of ['ask_text', 'ask_confirm', 'ask_multi', 'ask_artifact']) {
      // One attempt each: the answered session resumed, it did not start over as a new attempt.
      expect(stageOf(done, id)).toMatchObject({ status: 'succeeded', attempts: [{ n: 1, disposition: 'passed', failure: null }] });
    }
  });

  it('a rejected confirm fails the emit-phase gate: the agent is told why, and the attempt fails once its reminders run out', async () => {
    const asked = await run('confirm', 2);
    expect(stageOf(asked, 'ask_confirm')).toMatchObject({ status: 'waiting', waiting_for: 'answer' });

    const rejected = await answer(asked.run_id, 'ask_confirm', 1, ['--decision', 'reject', '--text', 'not today']);
    expect(rejected.status).toBe('failed');
    const stage = stageOf(rejected, 'ask_confirm');
    expect(stage.status).toBe('failed');
    expect(stage.attempts).toHaveLength(1);
    expect(stage.attempts[0]!.failure).toMatch(/^missing emit_stage_envelope \(last rejection: emit-phase check confirmed failed: .*was reject, not accept/);

    const [attempt] = (await sf.json<VerificationReport>(['runs', 'verify', '--run', asked.run_id, '--stage', 'ask_confirm', '--json'], 0)).attempts;
    expect(attempt!.rejections).toEqual([expect.stringMatching(/^emit-phase check confirmed failed: .*confirm question .* was reject, not accept/)]);
    expect(attempt!.reminders).toBe(2);
  });
});
