import type { OperatorQuestion, RunEvent } from './events';
import { decideOperator, type OperatorCommand } from './operator';
import type { OnVerifyFail } from './pipeline';
import { runStatus } from './run-state';
import { summarizeRun } from './summary';
import { check, ev, given, NOW, pipeline, simulate, stage, success } from './testing';

const manualPolicy: OnVerifyFail = { mode: 'manual', max_attempts: 3, retry_safety: 'side_effecting', include_failed_checks: true };
const manual = (p: Partial<OnVerifyFail> = {}) =>
  pipeline(stage('deploy', { entry: true, route: [{ to: 'announce' }], on_verify_fail: { ...manualPolicy, ...p } }), stage('announce'));
const failing = [check('smoke', 'failed', 'HTTP 500')];

/** deploy's attempt 1 failed verification under manual recovery: one decision pending. */
function pendingDecision(p: Partial<OnVerifyFail> = {}) {
  const sim = simulate(manual(p));
  sim.advance();
  const decided = sim.finish('deploy', success(), failing);
  expect(sim.types(decided).slice(2)).toEqual(['StageFailed:deploy', 'ManualRecoveryOpened:deploy']);
  return sim;
}

const guidance = (text = 'Fix the health endpoint'): OperatorCommand => ({ type: 'RecoverWithGuidance', stageId: 'deploy', guidance: text, by: 'op', now: NOW });
const stop: OperatorCommand = { type: 'StopManualRecovery', stageId: 'deploy', by: 'op', now: NOW };
const retry = (stageId = 'deploy'): OperatorCommand => ({ type: 'RetryStage', stageId, by: 'op', now: NOW });
const MANUAL_RETRY_REFUSAL = 'stage deploy uses manual recovery; use the recovery action instead of retry';

describe('operator: manual recovery', () => {
  it('pending: the stage is failed, successors are held, the run is waiting', () => {
    const sim = pendingDecision();
    expect(sim.status('announce')).toBe('pending');
    expect(runStatus(sim.state)).toBe('waiting');
  });

  it('guidance starts a manual_retry attempt carrying the failed-check capsule and the guidance', () => {
    given(pendingDecision().events)
      .when(decideOperator, guidance())
      .then(
        { type: 'ManualRecoveryDecided', stageId: 'deploy', attempt: 1, decision: 'guidance', guidance: 'Fix the health endpoint', by: 'op' },
        {
          type: 'StageAttemptStarted',
          stageId: 'deploy',
          attempt: 2,
          reason: 'manual_retry',
          guidance: 'Fix the health endpoint',
          capsule: { attempt: 1, failed_checks: [{ id: 'smoke', status: 'failed', message: 'HTTP 500' }] },
        },
      );
  });

  it('a second decision on the same failure is refused', () => {
    const sim = pendingDecision();
    sim.operator(guidance());
    given(sim.events).when(decideOperator, guidance('again')).thenRefused('recovery.already_decided');
    given(sim.events).when(decideOperator, stop).thenRefused('recovery.already_decided');
  });

  it('empty guidance is invalid', () => {
    given(pendingDecision().events).when(decideOperator, guidance('  ')).thenRefused('recovery.guidance_empty');
  });

  it('a guided attempt that fails again opens a new decision', () => {
    const sim = pendingDecision();
    sim.operator(guidance());
    const decided = sim.finish('deploy', success(), failing);
    expect(sim.types(decided).slice(2)).toEqual(['StageFailed:deploy', 'ManualRecoveryOpened:deploy']);
    expect(decided[3]).toMatchObject({ attempt: 2 });
    given(sim.events).when(decideOperator, guidance()).then({ type: 'ManualRecoveryDecided', attempt: 2 }, { type: 'StageAttemptStarted', attempt: 3 });
  });

  it('at max_attempts guidance is refused: only --stop is left', () => {
    const sim = pendingDecision({ max_attempts: 2 });
    sim.operator(guidance());
    sim.finish('deploy', success(), failing);
    given(sim.events).when(decideOperator, guidance()).thenRefused('recovery.attempts_exhausted', /only --stop is left/);
    given(sim.events).when(decideOperator, stop).then({ type: 'ManualRecoveryDecided', attempt: 2, decision: 'stop' });
  });

  it('stop releases the cascade: successors are skipped and the run fails', () => {
    const sim = pendingDecision();
    const decided = sim.operator(stop);
    expect(sim.types(decided)).toEqual(['ManualRecoveryDecided:deploy', 'StageSkipped:announce', 'RunFailed']);
    expect(summarizeRun(sim.state).stages[1]).toMatchObject({ status: 'skipped', skip_reason: 'parent_failed' });
  });

  it('refuses a recovery decision on a stage that is not manual, or has no failure awaiting one', () => {
    const p = pipeline(stage('a', { entry: true }));
    given(ev.requested(p), ev.started('a'), ev.failed('a'))
      .when(decideOperator, { type: 'StopManualRecovery', stageId: 'a', by: 'op', now: NOW })
      .thenRefused('recovery.not_manual');
    given(ev.requested(manual()), ev.started('deploy')).when(decideOperator, stop).thenRefused('recovery.not_verification_failure');
    given(ev.requested(manual())).when(decideOperator, { ...stop, stageId: 'nope' } as OperatorCommand).thenRefused('stage.not_found');
    given().when(decideOperator, stop).thenRefused('run.not_found');
  });
});

describe('operator: retry', () => {
  it('is refused for a manual-verification failure, before and after stop', () => {
    const sim = pendingDecision();
    given(sim.events).when(decideOperator, retry()).thenRefused('retry.manual_recovery', MANUAL_RETRY_REFUSAL);
    sim.operator(stop);
    given(sim.events).when(decideOperator, retry()).thenRefused('retry.manual_recovery', MANUAL_RETRY_REFUSAL);
  });

  it('is refused for a repair-policy verification failure (the policy decides) and for a stage that has not failed', () => {
    const p = pipeline(stage('a', { entry: true, on_verify_fail: { ...manualPolicy, mode: 'repair', max_attempts: 1, retry_safety: 'idempotent' } }));
    const sim = simulate(p);
    sim.advance();
    given(sim.events).when(decideOperator, retry('a')).thenRefused('retry.not_failed');
    sim.finish('a', success(), failing);
    given(sim.events).when(decideOperator, retry('a')).thenRefused('retry.verification_failed');
  });

  it('after an agent failure: allowed, and it reopens the failed run (cascaded skips go back to pending)', () => {
    const sim = simulate(pipeline(stage('a', { entry: true, route: [{ to: 'b' }] }), stage('b')));
    sim.advance();
    sim.succeed('a');
    expect(sim.types(sim.failAgent('b')).at(-1)).toBe('RunFailed');
    expect(runStatus(sim.state)).toBe('failed');
    const decided = sim.operator(retry('b'));
    expect(decided).toMatchObject([
      { type: 'StageRetryRequested', stageId: 'b', by: 'op' },
      { type: 'StageAttemptStarted', stageId: 'b', attempt: 2, reason: 'retry', input: {} },
    ]);
    expect(runStatus(sim.state)).toBe('running');
    expect(sim.types(sim.succeed('b')).at(-1)).toBe('RunSucceeded');
  });

  it('after a verification_error: allowed', () => {
    given(ev.requested(manual()), ev.started('deploy'), ev.captured('deploy'), ev.verifierError('deploy'), ev.failed('deploy', 1, 'verification_error'))
      .when(decideOperator, retry())
      .then({ type: 'StageRetryRequested' }, { type: 'StageAttemptStarted', attempt: 2, reason: 'retry' });
  });

  it('is refused on a stopped (cancelled) run and for a stage that never started', () => {
    const cancelled: RunEvent = { v: 1, runId: 'run-1', at: NOW, type: 'RunCancelled', by: 'op' };
    given(ev.requested(manual()), ev.started('deploy'), ev.failed('deploy'), cancelled).when(decideOperator, retry()).thenRefused('run.stopped');
    given(ev.requested(manual()), ev.failed('deploy', 0, 'input')).when(decideOperator, retry()).thenRefused('retry.no_attempt');
  });
});

describe('operator: cancel', () => {
  const cancel: OperatorCommand = { type: 'CancelRun', by: 'op', reason: 'wrong input', now: NOW };
  it('cancels a live run once', () => {
    given(ev.requested(manual()), ev.started('deploy')).when(decideOperator, cancel).then({ type: 'RunCancelled', by: 'op', reason: 'wrong input' });
    const after = given(ev.requested(manual()), { v: 1, runId: 'run-1', at: NOW, type: 'RunCancelled', by: 'op' } as RunEvent);
    expect(runStatus(after.state)).toBe('stopped');
    after.when(decideOperator, cancel).thenRefused('run.finished');
    given().when(decideOperator, cancel).thenRefused('run.not_found');
  });

  it('records who the caller claims to be apart from by, and nothing when it claims nothing', () => {
    given(ev.requested(manual()), ev.started('deploy'))
      .when(decideOperator, { ...cancel, claimedBy: 'alice' })
      .then({ type: 'RunCancelled', by: 'op', claimedBy: 'alice', reason: 'wrong input' });
    const [unclaimed] = given(ev.requested(manual()), ev.started('deploy')).when(decideOperator, cancel).then({ type: 'RunCancelled', by: 'op' });
    expect(unclaimed).not.toHaveProperty('claimedBy');
  });
});

describe('operator: answers per gate kind', () => {
  const asked = (question: OperatorQuestion): RunEvent => ({
    v: 1,
    runId: 'run-1',
    at: NOW,
    type: 'OperatorQuestionAsked',
    stageId: 'deploy',
    attempt: 1,
    exchangeId: 'x1',
    question,
    resume: {},
  });
  const answer = (a: object): OperatorCommand => ({ type: 'AnswerOperator', stageId: 'deploy', answer: a, by: 'op', now: NOW });
  const on = (question: OperatorQuestion) => given(ev.requested(manual()), ev.started('deploy'), asked(question));

  it('a parked stage waits for an answer', () => {
    const g = on({ kind: 'confirm', question: 'ship?' });
    expect(runStatus(g.state)).toBe('waiting');
    expect(summarizeRun(g.state).stages[0]).toMatchObject({ status: 'waiting', waiting_for: 'answer' });
  });

  it.each([
    ['confirm', { kind: 'confirm', question: 'ship?' }, { decision: 'accept' }, { text: 'yes' }, 'answer.decision_required'],
    ['artifact_backed', { kind: 'artifact_backed', question: 'ok?', artifacts: ['a.md'] }, { decision: 'reject', text: 'no' }, {}, 'answer.decision_required'],
    ['free_text', { kind: 'free_text', question: 'which?' }, { text: 'payments' }, { text: '  ' }, 'answer.text_required'],
  ] as const)('%s: accepts a valid answer, refuses an invalid one', (_kind, question, good, bad, code) => {
    on(question as OperatorQuestion)
      .when(decideOperator, answer(good))
      .then({ type: 'OperatorAnswered', stageId: 'deploy', attempt: 1, exchangeId: 'x1', answer: good, by: 'op' });
    on(question as OperatorQuestion).when(decideOperator, answer(bad)).thenRefused(code);
  });

  it('multi_question: every sub-question exactly, each answered by its kind', () => {
    const q: OperatorQuestion = {
      kind: 'multi_question',
      question: 'details',
      questions: [
        { id: 'scope', kind: 'free_text', question: 'scope?' },
        { id: 'go', kind: 'confirm', question: 'go?' },
      ],
    };
    on(q).when(decideOperator, answer({ answers: { scope: 'api', go: { decision: 'accept' } } })).then({ type: 'OperatorAnswered' });
    on(q).when(decideOperator, answer({ answers: { scope: 'api' } })).thenRefused('answer.questions_mismatch', /missing go/);
    on(q).when(decideOperator, answer({ answers: { scope: 'api', go: { decision: 'accept' }, x: 'y' } })).thenRefused('answer.questions_mismatch', /unknown x/);
    on(q).when(decideOperator, answer({ answers: { scope: 'api', go: 'yes' } })).thenRefused('answer.decision_required');
    on(q).when(decideOperator, answer({ answers: { scope: '', go: { decision: 'reject' } } })).thenRefused('answer.text_required');
  });

  it('is refused with no open question (including a second answer to the same one)', () => {
    given(ev.requested(manual()), ev.started('deploy')).when(decideOperator, answer({ text: 'x' })).thenRefused('answer.no_question');
    const answered: RunEvent = { v: 1, runId: 'run-1', at: NOW, type: 'OperatorAnswered', stageId: 'deploy', attempt: 1, exchangeId: 'x1', answer: { text: 'a' }, by: 'op' };
    given(ev.requested(manual()), ev.started('deploy'), asked({ kind: 'free_text', question: 'q' }), answered)
      .when(decideOperator, answer({ text: 'b' }))
      .thenRefused('answer.no_question');
  });
});
