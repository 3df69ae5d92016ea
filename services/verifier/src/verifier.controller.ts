/**
 * The verifier: every captured candidate envelope becomes a verify job (enqueued when the
 * verifier's dispatcher sees EnvelopeCaptured; the job id is the attempt, so redelivery adds
 * nothing); any replica takes it, reports progress while checks run, and appends the attempt's
 * checks and disposition once. A job whose deliveries run out is dead-lettered and the attempt
 * gets disposition `error` (the stage then fails with `verification error: …`).
 */
import * as path from 'node:path';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { decideAttempt } from '@stageflow/domain';
import type { Job, StoredMessage } from '@stageflow/eventlog';
import { eventStream, STATE_HANDLER_CONCURRENCY, INFRASTRUCTURE, LOGGER, workQueue } from '@stageflow/messaging';
import { offloadEvidence, runIdOf, type Infrastructure, type Logger } from '@stageflow/runtime';
import { verifyJobId, type VerifyJob } from './jobs';
import { verifyAttempt } from './verify-attempt';

@Controller()
export class VerifierController {
  constructor(
    @Inject(INFRASTRUCTURE) private readonly infra: Infrastructure,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @EventPattern(eventStream('verifier-dispatch', '{ns}.evt.run.>', STATE_HANDLER_CONCURRENCY))
  async onRunMessage(@Payload() message: StoredMessage): Promise<void> {
    const runId = runIdOf(message.subject);
    for (const event of this.infra.runs.eventsOf(message)) {
      if (event.type !== 'EnvelopeCaptured') continue;
      const job: VerifyJob = { runId, stageId: event.stageId, attempt: event.attempt };
      await this.infra.queues.enqueue('verify', job, verifyJobId(job));
    }
  }

  @EventPattern(workQueue('verify', Number(process.env.SF_VERIFY_CONCURRENCY ?? 4)))
  async verify(@Payload() job: VerifyJob, @Ctx() delivery: Job<VerifyJob>): Promise<void> {
    const { state } = await this.infra.runs.load(job.runId);
    const attempt = state.stages[job.stageId]?.attempts.find((a) => a.n === job.attempt);
    if (!attempt || attempt.phase !== 'captured') return; // verified already, or nothing to verify
    this.logger.info('verifying', { run: job.runId, stage: job.stageId, attempt: job.attempt, delivery: delivery.deliveryCount });
    const results = await verifyAttempt({
      state,
      stageId: job.stageId,
      attempt: job.attempt,
      blobs: this.infra.blobs,
      scratchRoot: path.join(this.infra.config.workDir, 'verify'),
      onProgress: () => void delivery.working().catch(() => undefined),
      progressIntervalMs: Math.max(200, Math.min(5000, Math.floor(this.infra.queueLimits.verify.ackWaitMs / 3))),
    });
    const checks = await offloadEvidence(results, this.infra.blobs);
    await this.infra.runs.execute(job.runId, (current) =>
      decideAttempt({ type: 'RecordVerification', stageId: job.stageId, attempt: job.attempt, now: new Date().toISOString(), checks }, current),
    );
  }
}
