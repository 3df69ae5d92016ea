import type { RunEvent } from './events';
import { decideRecovery } from './recovery';
import { evolve, foldRun, type RunState } from './run-state';
import { canonicalJson, refusalOf, signatureProblem, signerRoleOf } from './signatures';
import { summarizeRun } from './summary';
import { ev, given, NOW, pipeline, signedAll, signedFor, stage } from './testing';

const strip = ({ version: _version, ...rest }: RunState) => rest;
const onePipeline = pipeline(stage('a', { entry: true }));
const captured = signedAll([ev.requested(onePipeline), ev.started('a'), ev.captured('a')]);
const afterCapture = foldRun(captured);
const attemptOf = (state: RunState) => state.stages.a.attempts[0];

/** Folds `events` once, and again with every event applied twice: both give the same state. */
function foldTwice(events: readonly RunEvent[]): RunState {
  const once = foldRun(events);
  expect(strip(foldRun(events.flatMap((e) => [e, e])))).toEqual(strip(once));
  return once;
}

describe('which events are signed, and by whom', () => {
  it('verdicts by a verifier key, operator decisions by an operator key, nothing else', () => {
    expect(signerRoleOf(ev.verified('a'))).toBe('verifier');
    expect(signerRoleOf({ v: 1, runId: 'r', at: NOW, type: 'RunCancelled', by: 'op' })).toBe('operator');
    expect(signerRoleOf(ev.skipped('a', 'operator'))).toBe('operator');
    expect(signerRoleOf(ev.skipped('a', 'if_miss'))).toBeUndefined();
    expect(signerRoleOf(ev.captured('a'))).toBeUndefined();
    expect(signerRoleOf(ev.succeeded('a'))).toBeUndefined();
  });

  it('canonical JSON sorts keys at every level and drops undefined members as JSON does', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { f: 2, e: undefined }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"f":2}]},"b":1}');
    expect(canonicalJson(JSON.parse(JSON.stringify({ z: 'é', a: 1.5 })))).toBe('{"a":1.5,"z":"é"}');
  });
});

describe('the fold applies a verdict only with a signature for its candidate', () => {
  it('a signed verdict on the captured candidate passes the attempt, and recovery passes the stage', () => {
    const state = foldTwice([...captured, signedFor(afterCapture, ev.verified('a'))]);
    expect(attemptOf(state)).toMatchObject({ phase: 'verified', disposition: 'passed' });
    expect(decideRecovery({ type: 'ApplyRecoveryPolicy', stageId: 'a', attempt: 1, now: NOW }, state)).toMatchObject([{ type: 'StageSucceeded' }]);
    expect(state.refusals).toBeUndefined();
  });

  it('an unsigned verdict is not applied: the attempt ends error, the refusal is recorded, the stage fails', () => {
    const state = foldTwice([...captured, ev.verified('a')]);
    expect(attemptOf(state)).toMatchObject({ phase: 'verified', disposition: 'error', failure: 'verdict refused: unsigned' });
    expect(state.refusals).toEqual([{ at: expect.any(String), refusedType: 'AttemptVerified', stageId: 'a', attempt: 1, reason: 'unsigned' }]);
    expect(decideRecovery({ type: 'ApplyRecoveryPolicy', stageId: 'a', attempt: 1, now: NOW }, state)).toMatchObject([{ type: 'StageFailed', kind: 'verification_error' }]);
    expect(summarizeRun(state).security).toEqual([{ at: expect.any(String), refused: 'AttemptVerified', stage: 'a', attempt: 1, reason: 'unsigned' }]);
  });

  it('a verdict signed for another candidate is refused', () => {
    const other = { ...signedFor(afterCapture, ev.verified('a')), signature: { kid: 'test', sig: 'test', candidate: 'checkout:sha256:x artifacts:sha256:y' } };
    const state = foldTwice([...captured, other]);
    expect(attemptOf(state)).toMatchObject({ disposition: 'error' });
    expect(state.refusals?.[0].reason).toMatch(/^signed for candidate checkout:sha256:x/);
  });

  it('a refusal derived by the reader folds like the refusal the fold derives itself', () => {
    const derived = foldTwice([...captured, refusalOf(ev.verified('a'), 'unsigned')]);
    expect(strip(derived)).toEqual(strip(foldRun([...captured, ev.verified('a')])));
  });

  it('a refused verdict after a genuine one changes nothing but the record', () => {
    const genuine = [...captured, signedFor(afterCapture, ev.verified('a'))];
    const state = foldTwice([...genuine, { ...ev.verified('a', 1, [], 'forged'), at: '2025-01-01T00:05:00.000Z' }]);
    expect(attemptOf(state)).toMatchObject({ disposition: 'passed' });
    expect(state.refusals).toHaveLength(1);
  });

  it('a StageSucceeded without a passed verdict for its attempt does not pass the stage', () => {
    expect(foldTwice([...captured, ev.succeeded('a')]).stages.a.status).toBe('running');
    const refused = foldTwice([...captured, ev.verified('a'), ev.succeeded('a')]);
    expect(refused.stages.a.status).toBe('running');
  });

  it('a StageSucceeded keeps the envelope its passed verdict was about, whatever it carries', () => {
    const passed = evolve(afterCapture, signedFor(afterCapture, ev.verified('a')));
    const state = evolve(passed, { ...ev.succeeded('a'), envelope: { status: 'success', summary: 'forged', artifacts: [] } } as RunEvent);
    expect(state.stages.a).toMatchObject({ status: 'succeeded', envelope: { summary: 'done' } });
  });
});

describe('operator decisions are applied only signed', () => {
  const cancel: RunEvent = { v: 1, runId: 'run-1', at: NOW, type: 'RunCancelled', by: 'op' };

  it('an unsigned cancel is recorded, not applied; a signed one stops the run', () => {
    const refused = foldTwice([...captured, cancel]);
    expect(refused.outcome).toBeUndefined();
    expect(refused.refusals).toMatchObject([{ refusedType: 'RunCancelled', reason: 'unsigned' }]);
    expect(foldTwice([...captured, signedFor(afterCapture, cancel)]).outcome).toBe('stopped');
  });

  it('an unsigned answer does not resume a parked attempt', () => {
    const asked = given(ev.requested(onePipeline), ev.started('a'), {
      v: 1, runId: 'run-1', at: NOW, type: 'OperatorQuestionAsked', stageId: 'a', attempt: 1, exchangeId: 'x', question: { kind: 'free_text', question: 'q?' }, resume: {},
    }).state;
    const answer: RunEvent = { v: 1, runId: 'run-1', at: NOW, type: 'OperatorAnswered', stageId: 'a', attempt: 1, exchangeId: 'x', answer: { text: 'a' }, by: 'op' };
    expect(signatureProblem(asked, answer)).toBe('unsigned');
    expect(evolve(asked, answer).stages.a).toMatchObject({ status: 'waiting', exchanges: [{ exchangeId: 'x' }] });
    expect(evolve(asked, answer).stages.a.exchanges[0].answer).toBeUndefined();
    expect(evolve(asked, signedFor(asked, answer)).stages.a.exchanges[0].answer).toEqual({ text: 'a' });
  });
});

describe('a run succeeds only over settled stages', () => {
  const succeededRun = (state: RunState) => state.outcome;

  it('given a stage whose verdict was refused, when RunSucceeded is appended, then the run has no outcome', () => {
    const state = foldTwice([...captured, ev.verified('a'), { v: 1, runId: afterCapture.runId, at: NOW, type: 'RunSucceeded' }]);
    expect(succeededRun(state)).toBeUndefined();
  });

  it('given every stage passed, when RunSucceeded is appended, then the run succeeded', () => {
    const passed = signedFor(afterCapture, ev.verified('a'));
    const state = foldTwice([...captured, passed, ev.succeeded('a'), { v: 1, runId: afterCapture.runId, at: NOW, type: 'RunSucceeded' }]);
    expect(succeededRun(state)).toBe('succeeded');
  });
});
