/**
 * Work-queue job payloads. A job names an attempt and nothing more: the worker folds the run's
 * events for everything else, so a redelivered or stale job can never carry outdated state.
 * Delivered at least once; handlers are idempotent on (runId, stageId, attempt).
 */

/** On `sf.work.agent`: run (or resume) the agent session of one stage attempt. */
export interface AgentJob {
  readonly runId: string;
  readonly stageId: string;
  readonly attempt: number;
  /** How many operator answers the attempt had when this job was queued: 0 starts it, n resumes after the n-th answer. */
  readonly resume: number;
}

/** On `sf.work.verify`: run the after-phase checks of one captured attempt. */
export interface VerifyJob {
  readonly runId: string;
  readonly stageId: string;
  readonly attempt: number;
}

/** Job ids are derived from what the job does, so enqueueing the same work twice adds one job. */
export const agentJobId = (job: AgentJob) => `agent.${job.runId}.${job.stageId}.${job.attempt}.${job.resume}`;
export const verifyJobId = (job: VerifyJob) => `verify.${job.runId}.${job.stageId}.${job.attempt}`;

/** Work-queue subjects; `ns` as in the domain's `subjects`. */
export const workSubjects = (ns = 'sf') => ({
  agent: `${ns}.work.agent`,
  verify: `${ns}.work.verify`,
});
