/**
 * Work-queue job payloads. A job names an attempt and nothing more: the worker folds the run's
 * events for everything else, so a redelivered or stale job can never carry outdated state.
 * Delivered at least once; handlers must be idempotent on (runId, stageId, attempt).
 */
import type { AttemptReason } from '@stageflow/domain';

/** On `sf.work.agent`: run the agent session of one stage attempt. */
export interface AgentJob {
  readonly runId: string;
  readonly stageId: string;
  readonly attempt: number;
  /** Why the attempt exists; the same value as its `StageAttemptStarted.reason`. */
  readonly reason: AttemptReason;
}

/**
 * Why a verification is queued: `envelope_captured` right after the capture; `resume` when a
 * resumed run finds a captured attempt without a recorded verification.
 */
export type VerifyReason = 'envelope_captured' | 'resume';

/** On `sf.work.verify`: run the after-phase checks of one captured attempt. */
export interface VerifyJob {
  readonly runId: string;
  readonly stageId: string;
  readonly attempt: number;
  readonly reason: VerifyReason;
}

/** Work-queue subjects; `ns` as in the domain's `subjects`. */
export const workSubjects = (ns = 'sf') => ({
  agent: `${ns}.work.agent`,
  verify: `${ns}.work.verify`,
});
