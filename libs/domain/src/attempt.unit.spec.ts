import { decideAttempt, MAX_REASON_CHARS, type AttemptCommand } from './attempt';
import { check, ev, given, NOW, pipeline, stage, success } from './testing';

const p = pipeline(stage('a', { entry: true }));
const ref = { stageId: 'a', attempt: 1, now: NOW } as const;
type Body = AttemptCommand extends infer C ? (C extends AttemptCommand ? Omit<C, 'stageId' | 'attempt' | 'now'> : never) : never;
const cmd = (c: Body) => ({ ...ref, ...c }) as AttemptCommand;
const running = [ev.requested(p), ev.started('a')];
const captured = [...running, ev.captured('a')];

describe('attempt decider', () => {
  it('refuses a command on an attempt that does not exist', () => {
    given(running).when(decideAttempt, { ...cmd({ type: 'RecordBaseline', manifest: 'm' }), attempt: 7 }).thenRefused('attempt.not_found');
  });

  it('records the checkout baseline once', () => {
    given(running).when(decideAttempt, cmd({ type: 'RecordBaseline', manifest: 'm' })).then({ type: 'CheckoutBaselineRecorded', manifest: 'm' });
    given(running).when(decideAttempt, cmd({ type: 'RecordBaseline', manifest: 'm' })).thenIdempotent();
  });

  it('asks the operator once per exchange id and parks the stage', () => {
    const ask = cmd({ type: 'AskOperator', exchangeId: 'x1', question: { kind: 'confirm', question: 'ok?' }, resume: { s: 1 } });
    given(running).when(decideAttempt, ask).then({ type: 'OperatorQuestionAsked', exchangeId: 'x1', resume: { s: 1 } });
    given(running).when(decideAttempt, ask).thenIdempotent();
  });

  it('captures the envelope once; a later capture or failure of that attempt is a no-op', () => {
    const capture = cmd({ type: 'CaptureEnvelope', envelope: success({ k: 1 }), checkoutSnapshot: 'c', artifactsSnapshot: 'a' });
    given(running).when(decideAttempt, capture).then({ type: 'EnvelopeCaptured', envelope: { payload: { k: 1 } } });
    given(captured).when(decideAttempt, capture).thenNothing();
    given(captured).when(decideAttempt, cmd({ type: 'FailAttempt', kind: 'timeout', reason: 'late' })).thenNothing();
  });

  it('records rejections and reminders while open; reminders only move forward', () => {
    given(running).when(decideAttempt, cmd({ type: 'RejectEnvelope', reason: 'summary must be non-empty' })).then({ type: 'EnvelopeRejected' });
    given(running).when(decideAttempt, cmd({ type: 'SendReminder', reminder: 1, lastRejection: 'x' })).then({ type: 'ReminderSent', reminder: 1, lastRejection: 'x' });
    given(running).when(decideAttempt, cmd({ type: 'SendReminder', reminder: 1 })).thenIdempotent();
    given(captured).when(decideAttempt, cmd({ type: 'RejectEnvelope', reason: 'late' })).thenNothing();
  });

  it('records a turn transcript while open; a duplicate or a turn after the capture is a no-op', () => {
    const turn = cmd({ type: 'RecordTurn', turn: 1, transcript: 'sha256:t1', toolCalls: 2, result: 'ended' });
    given(running).when(decideAttempt, turn).then({ type: 'AgentTurnRecorded', turn: 1, transcript: 'sha256:t1', toolCalls: 2, result: 'ended' });
    const [recorded] = given(running).when(decideAttempt, turn).thenIdempotent();
    given(captured).when(decideAttempt, turn).thenNothing();
    // A redelivered event is harmless: the attempt lists the transcript once.
    expect(given(running, recorded!, recorded!).state.stages.a!.attempts[0]!.transcripts).toEqual([{ turn: 1, digest: 'sha256:t1' }]);
  });

  it('caps a failure reason', () => {
    const [failed] = given(running).when(decideAttempt, cmd({ type: 'FailAttempt', kind: 'provider_error', reason: 'e'.repeat(2000) })).then({ type: 'AttemptFailed', kind: 'provider_error' });
    expect((failed as { reason: string }).reason).toHaveLength(MAX_REASON_CHARS);
  });

  it('verification: passed, failed (naming the checks), or error (the verifier could not finish); once', () => {
    given(captured).when(decideAttempt, cmd({ type: 'RecordVerification', checks: [check('t')] })).then({ type: 'AttemptVerified', disposition: 'passed', failure: null });
    given(captured)
      .when(decideAttempt, cmd({ type: 'RecordVerification', checks: [check('t', 'failed'), check('u', 'error'), check('v')] }))
      .then({ type: 'AttemptVerified', disposition: 'failed', failure: 'failed checks: t, u' });
    given(captured).when(decideAttempt, cmd({ type: 'RecordVerification', checks: [], error: 'snapshot missing' })).then({ type: 'AttemptVerified', disposition: 'error', failure: 'snapshot missing' });
    given(captured).when(decideAttempt, cmd({ type: 'RecordVerification', checks: [] })).thenIdempotent();
  });

  it('refuses verification without a captured candidate', () => {
    given(running).when(decideAttempt, cmd({ type: 'RecordVerification', checks: [] })).thenRefused('verification.no_candidate');
  });
});
