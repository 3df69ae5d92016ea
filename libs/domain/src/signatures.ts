/**
 * Which events must be signed, by whom, and over what. The cryptography lives outside the
 * domain (libs/runtime/src/signing); this file states the rules every reader applies.
 *
 * Guarantees:
 * - A verdict (`AttemptVerified`) is signed by a verifier key; an operator decision
 *   (answers, manual recovery decisions, retries, cancels, feedback-loop decisions, operator
 *   skips) by an operator key. No other event needs a signature.
 * - The signed bytes (`signedBytes`) cover the namespace, the run id of the subject the event
 *   is read from, the candidate, and the whole event but its signature (so its type, stage,
 *   attempt and content). A signed event copied to another namespace, run, stage or attempt, or
 *   edited in any field, no longer verifies.
 * - `evolve` applies a signed-kind event only when it carries a signature whose candidate is the
 *   attempt's own capture (`signatureProblem`); the reader has already checked the signature
 *   itself, or replaced the event by `SignatureRefused`.
 */
import type { EventSignature, RunEvent, SignatureRefused } from './events';
import type { RunState } from './run-state';

export type SignerRole = 'verifier' | 'operator';

export const SIGNER_ROLES: readonly SignerRole[] = ['verifier', 'operator'];

/** The role whose key must sign `event`, or undefined when it needs no signature. */
export function signerRoleOf(event: RunEvent): SignerRole | undefined {
  switch (event.type) {
    case 'AttemptVerified':
      return 'verifier';
    case 'OperatorAnswered':
    case 'ManualRecoveryDecided':
    case 'StageRetryRequested':
    case 'RunCancelled':
    case 'FeedbackLoopDecided':
      return 'operator';
    case 'StageSkipped':
      return event.reason === 'operator' ? 'operator' : undefined;
    case 'RunRequested':
    case 'StageAttemptStarted':
    case 'CheckoutBaselineRecorded':
    case 'OperatorQuestionAsked':
    case 'EnvelopeRejected':
    case 'ReminderSent':
    case 'AgentTurnRecorded':
    case 'EnvelopeCaptured':
    case 'AttemptFailed':
    case 'StageSucceeded':
    case 'StageFailed':
    case 'ManualRecoveryOpened':
    case 'FeedbackLoopReplayed':
    case 'FeedbackLoopParked':
    case 'CloneInstancesMinted':
    case 'RunSucceeded':
    case 'RunFailed':
    case 'RunErrored':
    case 'SignatureRefused':
      return undefined;
    default: {
      const unreachable: never = event;
      throw new Error(`unknown event ${(unreachable as { type: string }).type}`);
    }
  }
}

/**
 * What a verdict is about: the sealed snapshot digests (content-addressed manifests) of the
 * attempt's captured candidate, or null when the attempt has captured nothing.
 */
export function candidateOf(state: RunState, stageId: string | undefined, attempt: number | undefined): string | null {
  if (stageId === undefined || attempt === undefined) return null;
  const captured = state.stages[stageId]?.attempts.find((a) => a.n === attempt);
  if (!captured?.checkoutSnapshot || !captured.artifactsSnapshot) return null;
  return `checkout:${captured.checkoutSnapshot} artifacts:${captured.artifactsSnapshot}`;
}

/** The candidate a signature on `event` must name, given the state it is applied to. */
export function expectedCandidate(state: RunState, event: RunEvent): string | null {
  const stageId = 'stageId' in event ? event.stageId : undefined;
  const attempt = 'attempt' in event ? event.attempt : undefined;
  return candidateOf(state, stageId, attempt);
}

/**
 * Why `evolve` must not apply `event` to `state`, or null when it may: a signed-kind event needs
 * a signature naming the candidate of the attempt it is about (so a verdict on one capture can
 * never pass another).
 */
export function signatureProblem(state: RunState, event: RunEvent): string | null {
  if (!signerRoleOf(event)) return null;
  if (!event.signature) return 'unsigned';
  const expected = expectedCandidate(state, event);
  if (event.signature.candidate !== expected) {
    return `signed for candidate ${event.signature.candidate ?? 'none'}, but the attempt's candidate is ${expected ?? 'none'}`;
  }
  return null;
}

/** The security event recorded in place of a refused signed-kind event. */
export function refusalOf(event: RunEvent, reason: string, runId = event.runId): SignatureRefused {
  return {
    v: event.v,
    runId,
    at: event.at,
    type: 'SignatureRefused',
    refusedType: event.type,
    ...('stageId' in event && typeof event.stageId === 'string' ? { stageId: event.stageId } : {}),
    ...('attempt' in event && typeof event.attempt === 'number' ? { attempt: event.attempt } : {}),
    ...(typeof event.signature?.kid === 'string' ? { kid: event.signature.kid } : {}),
    reason,
  };
}

/** `event` without its signature: the content a signature covers. */
export function unsigned(event: RunEvent): RunEvent {
  if (!event.signature) return event;
  const { signature: _signature, ...rest } = event;
  return rest as RunEvent;
}

/**
 * The bytes a signature covers, as canonical JSON (keys sorted, undefined members dropped, as
 * JSON would), so a stored and re-read event yields the same bytes. `runId` is the run of the
 * subject the event is read from (or appended to), not the event's own field.
 */
export function signedBytes(context: { readonly namespace: string; readonly runId: string }, event: RunEvent, candidate: string | null): string {
  return canonicalJson({ ns: context.namespace, run: context.runId, candidate, event: unsigned(event) });
}

export function withSignature(event: RunEvent, signature: EventSignature): RunEvent {
  return { ...event, signature };
}

/** JSON with object keys in code-unit order at every level; identical values give identical text. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value);
    return text === undefined ? 'null' : text;
  }
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const entries = Object.keys(value)
    .sort()
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}
