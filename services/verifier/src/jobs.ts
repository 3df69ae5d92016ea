/** The verify work queue's job: run the after-phase checks of one captured attempt. */
export interface VerifyJob {
  readonly runId: string;
  readonly stageId: string;
  readonly attempt: number;
}

export const verifyJobId = (job: VerifyJob) => `verify.${job.runId}.${job.stageId}.${job.attempt}`;
