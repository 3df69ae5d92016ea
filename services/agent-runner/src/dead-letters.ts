/**
 * When an attempt's job runs out of deliveries (its runners kept dying, or the runner itself kept
 * failing), the attempt must not stay `running` forever: it fails with `runner_error` and the
 * stage's policy decides what follows (an ordinary `sf runs retry` is allowed).
 */
import { decideAttempt } from '@stageflow/domain';
import type { DeadLetter } from '@stageflow/eventlog';
import type { AgentJob } from '@stageflow/proto';
import type { Infrastructure } from '@stageflow/runtime';

export function failAttemptsOfDeadJobs(infra: Infrastructure): void {
  infra.queues.onDeadLetter(async (letter: DeadLetter) => {
    if (letter.queue !== 'agent') return;
    const job = letter.data as AgentJob;
    await infra.runs.execute(job.runId, (state) => {
      const attempt = state.stages[job.stageId]?.attempts.find((a) => a.n === job.attempt);
      if (!attempt || attempt.phase !== 'running') return [];
      return decideAttempt(
        { type: 'FailAttempt', stageId: job.stageId, attempt: job.attempt, kind: 'runner_error', reason: `the agent-runner could not finish the attempt: ${letter.reason} (after ${letter.deliveries} deliveries)`, now: new Date().toISOString() },
        state,
      );
    });
  });
}
