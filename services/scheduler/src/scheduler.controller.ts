/**
 * The scheduler: follows every run's events, decides which stage attempts start (and which
 * stages are skipped, and when the run ends), and puts each started attempt on the agent work
 * queue. Enqueueing happens when the scheduler *sees* the StageAttemptStarted event, so an
 * attempt started by any service (scheduler, recovery, api) is enqueued exactly through here;
 * the job id is derived from the attempt, so a redelivered event enqueues nothing new.
 */
import { Controller, Inject } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { decideAdvance, type RunEvent } from '@stageflow/domain';
import { eventStream, STATE_HANDLER_CONCURRENCY, INFRASTRUCTURE } from '@stageflow/messaging';
import type { StoredMessage } from '@stageflow/eventlog';
import { INPUT_VALIDATOR, runIdOf, type Infrastructure, type InputValidator } from '@stageflow/runtime';
import { answeredCount } from '@stageflow/agent-runner';
import { agentJobId, type AgentJob } from './jobs';


/** Events after which the DAG may move. */
const ADVANCING: ReadonlySet<RunEvent['type']> = new Set([
  'RunRequested',
  'StageSucceeded',
  'StageFailed',
  'StageSkipped',
  'ManualRecoveryDecided',
  'StageRetryRequested',
  'FeedbackLoopDecided',
]);

@Controller()
export class SchedulerController {
  constructor(
    @Inject(INFRASTRUCTURE) private readonly infra: Infrastructure,
    @Inject(INPUT_VALIDATOR) private readonly validateInput: InputValidator,
  ) {}

  @EventPattern(eventStream('scheduler', '{ns}.evt.run.>', STATE_HANDLER_CONCURRENCY))
  async onRunMessage(@Payload() message: StoredMessage): Promise<void> {
    const runId = runIdOf(message.subject);
    const events = this.infra.runs.eventsOf(message);
    for (const event of events) {
      if (event.type === 'StageAttemptStarted') await this.enqueue({ runId, stageId: event.stageId, attempt: event.attempt, resume: 0 });
      if (event.type === 'OperatorAnswered') {
        const { state } = await this.infra.runs.load(runId);
        const stage = state.stages[event.stageId];
        if (stage) await this.enqueue({ runId, stageId: event.stageId, attempt: event.attempt, resume: answeredCount(stage, event.attempt) });
      }
    }
    if (events.some((e) => ADVANCING.has(e.type))) {
      await this.infra.runs.execute(runId, (state) =>
        decideAdvance({ type: 'AdvanceRun', now: new Date().toISOString(), validateInput: this.validateInput }, state),
      );
    }
  }

  private async enqueue(job: AgentJob): Promise<void> {
    await this.infra.queues.enqueue('agent', job, agentJobId(job));
  }
}
