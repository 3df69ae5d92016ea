/**
 * When a verify job's deliveries run out, the verifier itself could not finish: the attempt is
 * recorded with disposition `error` (no automatic repair follows; `sf runs retry` may).
 */
import { decideAttempt } from '@stageflow/domain';
import type { DeadLetter } from '@stageflow/eventlog';
import type { Infrastructure } from '@stageflow/runtime';
import type { VerifyJob } from './jobs';

export function recordVerificationErrors(infra: Infrastructure): void {
  infra.queues.onDeadLetter(async (letter: DeadLetter) => {
    if (letter.queue !== 'verify') return;
    const job = letter.data as VerifyJob;
    await infra.runs.execute(job.runId, (state) => {
      const attempt = state.stages[job.stageId]?.attempts.find((a) => a.n === job.attempt);
      if (!attempt || attempt.phase !== 'captured') return [];
      return decideAttempt(
        { type: 'RecordVerification', stageId: job.stageId, attempt: job.attempt, now: new Date().toISOString(), checks: [], error: `${letter.reason} (after ${letter.deliveries} deliveries)` },
        state,
      );
    });
  });
}
