/**
 * Every event of a run, as appended to `sf.evt.run.<runId>`. Past tense, readonly, one
 * discriminated union. Each carries its schema version `v`; `upcast` (in `upcast.ts`) turns any
 * older version into the current one on read, so old logs stay readable.
 */
import type { StageEnvelope } from './envelope';
import type { GateKind, PipelineDefinition } from './pipeline';
import type { CheckResult, Disposition } from './verification';

export const EVENT_VERSION = 1;

export type Checkout =
  | { readonly kind: 'fresh' }
  | { readonly kind: 'path'; readonly path: string }
  | { readonly kind: 'git'; readonly url: string; readonly ref: string };

export type AttemptReason = 'initial' | 'repair' | 'manual_retry' | 'retry' | 'loop_replay';

/** What a repair or manual retry prompt receives about the attempt that failed verification. */
export interface RepairCapsule {
  readonly attempt: number;
  readonly summary: string;
  readonly failed_checks: readonly {
    readonly id: string;
    readonly type: string;
    readonly status: string;
    readonly message?: string;
    readonly evidence?: { readonly [key: string]: unknown };
  }[];
}

export interface OperatorQuestion {
  readonly kind: GateKind;
  readonly question: string;
  /** artifact_backed: run-relative artifact paths the decision is about. */
  readonly artifacts?: readonly string[];
  /** multi_question: sub-questions, each answered exactly. */
  readonly questions?: readonly { readonly id: string; readonly kind: 'free_text' | 'confirm'; readonly question: string }[];
}

export interface OperatorAnswer {
  readonly decision?: 'accept' | 'reject';
  readonly text?: string;
  readonly answers?: { readonly [questionId: string]: string | { readonly decision: 'accept' | 'reject'; readonly text?: string } };
}

export type AttemptFailureKind =
  | 'agent_failure'
  | 'missing_emit'
  | 'provider_error'
  | 'timeout'
  | 'cancelled'
  | 'input_invalid'
  | 'runner_error';

export type SkipReason =
  | 'if_miss'
  | 'parent_failed'
  | 'parent_skipped'
  | 'all_parents_skipped'
  | 'not_chosen'
  | 'operator';

export type StageFailureKind =
  | 'agent'
  | 'verification'
  | 'verification_error'
  | 'manual_stop'
  | 'input'
  | 'missing_field'
  /** A loop source sent work back after max_replays under `on_max_replays: require_continue`. */
  | 'feedback_loop_exhausted'
  /** An operator abandoned a parked feedback loop. */
  | 'feedback_loop_abandoned'
  /** A clone emitter's Clone Array was missing, empty, over the cap, or held a non-object. */
  | 'clone_array_invalid'
  /** A clone child template whose instances did not all succeed. */
  | 'clone_instance_failed';

/**
 * What a replayed stage's agent sees about the feedback loop that sent work back (001_*
 * "Feedback Loop Context"): never scraped from transcripts, always from the source's envelope.
 */
export interface FeedbackLoopContext {
  readonly loop_id: string;
  readonly replay_id: string;
  /** 1-based number of this replay. */
  readonly replay: number;
  readonly source: string;
  readonly target: string;
  /** The source's send-back envelope. */
  readonly send_back: {
    readonly summary: string;
    readonly artifacts: readonly string[];
    readonly payload?: { readonly [key: string]: unknown };
  };
  /** Replays still allowed after this one before on_max_replays applies. */
  readonly remaining_replays: number;
  /** Stage ids replayed, from the target through the source, in YAML order. */
  readonly route: readonly string[];
  /** This stage's attempt before the replay, when it had one. */
  readonly prior_attempt?: number;
  readonly replay_session?: string;
}

export type FeedbackDecision = 'extend' | 'continue' | 'abandon';

/**
 * An ed25519 signature over the event and what it is about (see signatures.ts). Verdicts carry
 * the verifier's, operator decisions the api's (operator role); other events carry none.
 */
export interface EventSignature {
  /** Key id of the signing key; the reader looks it up among the keys trusted for the role. */
  readonly kid: string;
  /** The candidate the event is about (see `candidateOf`), or null when it names no capture. */
  readonly candidate: string | null;
  /** base64url of the 64-byte ed25519 signature. */
  readonly sig: string;
}

interface RunEventBase {
  readonly v: typeof EVENT_VERSION;
  readonly runId: string;
  /** ISO-8601; decided by the caller, never read from a clock inside the domain. */
  readonly at: string;
  /** Present on verdicts and operator decisions (`signerRoleOf`); an event of those kinds without a valid one is never applied. */
  readonly signature?: EventSignature;
}

interface AttemptEventBase extends RunEventBase {
  readonly stageId: string;
  readonly attempt: number;
}

export interface RunRequested extends RunEventBase {
  readonly type: 'RunRequested';
  readonly pipeline: PipelineDefinition;
  readonly input: { readonly [key: string]: unknown };
  readonly checkout: Checkout;
  readonly labels: { readonly [key: string]: string };
  readonly idempotencyKey?: string;
  readonly requestedBy: string;
  /** What the caller's `X-Stageflow-Operator` said (a display note, not verified); `requestedBy` is the authenticated identity. */
  readonly claimedBy?: string;
}

export interface StageAttemptStarted extends AttemptEventBase {
  readonly type: 'StageAttemptStarted';
  readonly reason: AttemptReason;
  readonly input: { readonly [key: string]: unknown };
  /** Upstream envelopes the prompt carries; a join gets them keyed by stage in YAML order. */
  readonly upstream: { readonly [stageId: string]: StageEnvelope };
  /** Recorded at start so a resumed attempt gets only what is left of its budget. */
  readonly deadlineAt: string;
  readonly capsule?: RepairCapsule;
  readonly guidance?: string;
  /** Present on `loop_replay` attempts. */
  readonly loopContext?: FeedbackLoopContext;
}

export interface CheckoutBaselineRecorded extends AttemptEventBase {
  readonly type: 'CheckoutBaselineRecorded';
  /** Content-addressed manifest of the checkout before the agent started. */
  readonly manifest: string;
}

export interface OperatorQuestionAsked extends AttemptEventBase {
  readonly type: 'OperatorQuestionAsked';
  readonly exchangeId: string;
  readonly question: OperatorQuestion;
  /** Opaque session state the agent backend resumes from on any replica. */
  readonly resume: { readonly [key: string]: unknown };
}

export interface OperatorAnswered extends AttemptEventBase {
  readonly type: 'OperatorAnswered';
  readonly exchangeId: string;
  readonly answer: OperatorAnswer;
  readonly by: string;
  /** What the caller's `X-Stageflow-Operator` said (a display note, not verified); `by` is the authenticated identity. */
  readonly claimedBy?: string;
}

export interface EnvelopeRejected extends AttemptEventBase {
  readonly type: 'EnvelopeRejected';
  readonly reason: string;
}

export interface ReminderSent extends AttemptEventBase {
  readonly type: 'ReminderSent';
  readonly reminder: number;
  readonly lastRejection?: string;
}

/** One agent turn's transcript (input, tool calls, result; secrets redacted), stored as a blob. */
export interface AgentTurnRecorded extends AttemptEventBase {
  readonly type: 'AgentTurnRecorded';
  readonly turn: number;
  /** Blob digest of the turn's transcript JSON. */
  readonly transcript: string;
  readonly toolCalls: number;
  readonly result: 'ended' | 'provider_error' | 'aborted';
}

export interface EnvelopeCaptured extends AttemptEventBase {
  readonly type: 'EnvelopeCaptured';
  readonly envelope: StageEnvelope;
  /** Sealed snapshots (manifest digests) of what the attempt left. */
  readonly checkoutSnapshot: string;
  readonly artifactsSnapshot: string;
}

export interface AttemptFailed extends AttemptEventBase {
  readonly type: 'AttemptFailed';
  readonly kind: AttemptFailureKind;
  readonly reason: string;
  /** Present when the agent emitted status: failure. */
  readonly envelope?: StageEnvelope;
}

export interface AttemptVerified extends AttemptEventBase {
  readonly type: 'AttemptVerified';
  readonly disposition: Exclude<Disposition, 'not_run'>;
  readonly checks: readonly CheckResult[];
  /** Names the failed check ids, or the verifier's own error; null when passed. */
  readonly failure: string | null;
}

export interface StageSucceeded extends RunEventBase {
  readonly type: 'StageSucceeded';
  readonly stageId: string;
  readonly attempt: number;
  readonly envelope: StageEnvelope;
}

export interface StageFailed extends RunEventBase {
  readonly type: 'StageFailed';
  readonly stageId: string;
  readonly attempt: number;
  readonly kind: StageFailureKind;
  readonly reason: string;
}

export interface ManualRecoveryOpened extends RunEventBase {
  readonly type: 'ManualRecoveryOpened';
  readonly stageId: string;
  readonly attempt: number;
}

export interface ManualRecoveryDecided extends RunEventBase {
  readonly type: 'ManualRecoveryDecided';
  readonly stageId: string;
  readonly attempt: number;
  readonly decision: 'guidance' | 'stop';
  readonly guidance?: string;
  readonly by: string;
  /** What the caller's `X-Stageflow-Operator` said (a display note, not verified); `by` is the authenticated identity. */
  readonly claimedBy?: string;
}

export interface StageRetryRequested extends RunEventBase {
  readonly type: 'StageRetryRequested';
  readonly stageId: string;
  readonly by: string;
  /** What the caller's `X-Stageflow-Operator` said (a display note, not verified); `by` is the authenticated identity. */
  readonly claimedBy?: string;
}

export interface StageSkipped extends RunEventBase {
  readonly type: 'StageSkipped';
  readonly stageId: string;
  readonly reason: SkipReason;
  readonly detail?: string;
}

/**
 * A loop source's `send_back` was honoured: the stages from the target through the source go
 * back to pending (attempts kept) and the scheduler starts them again with `loop_replay`.
 */
export interface FeedbackLoopReplayed extends RunEventBase {
  readonly type: 'FeedbackLoopReplayed';
  /** The loop source. */
  readonly stageId: string;
  /** The source attempt whose send_back this honours. */
  readonly attempt: number;
  readonly loopId: string;
  readonly target: string;
  /** 1-based replay number. */
  readonly replay: number;
  readonly route: readonly string[];
  readonly remainingReplays: number;
  readonly sendBack: FeedbackLoopContext['send_back'];
}

/** A send_back after max_replays under `wait_for_human`: the source waits for an operator. */
export interface FeedbackLoopParked extends RunEventBase {
  readonly type: 'FeedbackLoopParked';
  readonly stageId: string;
  readonly attempt: number;
  readonly loopId: string;
  readonly replays: number;
  readonly maxReplays: number;
}

/** The operator's decision on a parked loop (extend | continue | abandon). */
export interface FeedbackLoopDecided extends RunEventBase {
  readonly type: 'FeedbackLoopDecided';
  readonly stageId: string;
  readonly attempt: number;
  readonly loopId: string;
  readonly decision: FeedbackDecision;
  readonly reason?: string;
  readonly by: string;
  /** What the caller's `X-Stageflow-Operator` said (a display note, not verified); `by` is the authenticated identity. */
  readonly claimedBy?: string;
}

/** One Clone Instance `{child}~{n}`: it receives its array element only. */
export interface CloneInstance {
  readonly id: string;
  /** 1-based position in the Clone Array. */
  readonly n: number;
  readonly item: { readonly [key: string]: unknown };
}

/** On a clone emitter's success: the instances of the clone child, in Clone Array order. */
export interface CloneInstancesMinted extends RunEventBase {
  readonly type: 'CloneInstancesMinted';
  /** The clone child (template) stage. */
  readonly stageId: string;
  readonly emitter: string;
  readonly emitterAttempt: number;
  readonly mode: 'parallel' | 'sequential';
  readonly instances: readonly CloneInstance[];
}

export interface RunSucceeded extends RunEventBase {
  readonly type: 'RunSucceeded';
}

export interface RunFailed extends RunEventBase {
  readonly type: 'RunFailed';
  readonly reason: string;
}

export interface RunCancelled extends RunEventBase {
  readonly type: 'RunCancelled';
  readonly by: string;
  /** What the caller's `X-Stageflow-Operator` said (a display note, not verified); `by` is the authenticated identity. */
  readonly claimedBy?: string;
  readonly reason?: string;
}

/**
 * A verdict or operator decision whose signature was missing, unknown, of the wrong role, did
 * not verify, or named another candidate. Derived by the reader in place of the refused event
 * (never appended by a service, though appending one changes nothing more than deriving it):
 * the refused event is not applied; a refused verdict ends its attempt with disposition `error`.
 */
export interface SignatureRefused extends RunEventBase {
  readonly type: 'SignatureRefused';
  /** The type of the event that was refused. */
  readonly refusedType: string;
  readonly stageId?: string;
  readonly attempt?: number;
  /** The key id the refused event named, if any. */
  readonly kid?: string;
  readonly reason: string;
}

/**
 * The run cannot go on: a message about it was dead-lettered (a handler refused it, or it failed
 * on every allowed delivery). Terminal, status `error`; other runs are not affected.
 */
export interface RunErrored extends RunEventBase {
  readonly type: 'RunErrored';
  /** What could not be processed and why, e.g. `scheduler could not process seq 42: RangeError: …`. */
  readonly reason: string;
}

export type RunEvent =
  | RunRequested
  | StageAttemptStarted
  | CheckoutBaselineRecorded
  | OperatorQuestionAsked
  | OperatorAnswered
  | EnvelopeRejected
  | ReminderSent
  | AgentTurnRecorded
  | EnvelopeCaptured
  | AttemptFailed
  | AttemptVerified
  | StageSucceeded
  | StageFailed
  | ManualRecoveryOpened
  | ManualRecoveryDecided
  | StageRetryRequested
  | StageSkipped
  | FeedbackLoopReplayed
  | FeedbackLoopParked
  | FeedbackLoopDecided
  | CloneInstancesMinted
  | SignatureRefused
  | RunSucceeded
  | RunFailed
  | RunErrored
  | RunCancelled;

export type RunEventType = RunEvent['type'];

/** Stream subjects. `ns` isolates deployments and tests; the default is `sf`. */
export const subjects = (ns = 'sf') => ({
  run: (runId: string) => `${ns}.evt.run.${runId}`,
  allRuns: `${ns}.evt.run.>`,
  idempotency: (keyDigest: string) => `${ns}.evt.idem.${keyDigest}`,
  runRequests: `${ns}.cmd.run.request`,
  runRejections: `${ns}.evt.request.rejected`,
});
