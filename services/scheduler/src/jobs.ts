/** The agent work queue's job: run (or resume) one stage attempt. */
export interface AgentJob {
  readonly runId: string;
  readonly stageId: string;
  readonly attempt: number;
  /** 0 for the attempt's start; the stream sequence of the operator answer it resumes after. */
  readonly resume: number;
}

export const agentJobId = (job: AgentJob) => `agent.${job.runId}.${job.stageId}.${job.attempt}.${job.resume}`;
