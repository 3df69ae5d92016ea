/**
 * The agent-runner: takes attempt jobs from the shared `agent` work queue (any replica), runs the
 * session, and records its outcome. While a session runs the job is kept alive with working(),
 * so it is never handed to a second runner; a runner that dies stops heartbeating, and the job
 * is redelivered after the ack wait to another runner, which continues the attempt from its last
 * operator exchange. A job for an attempt that already moved on (captured, failed, parked, or a
 * superseded resume) is acknowledged without running anything. A checkout that cannot be made
 * and will not be by trying again (a missing ref) fails the attempt at once with the code in
 * its reason; any other failure is thrown to the transport (retried, then dead-lettered).
 */
import * as path from 'node:path';
import { Controller, Inject, type OnModuleDestroy } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import type { AgentBackend } from '@stageflow/agents';
import { decideAttempt } from '@stageflow/domain';
import type { Job } from '@stageflow/eventlog';
import { INFRASTRUCTURE, LOGGER, workQueue } from '@stageflow/messaging';
import type { AgentJob } from '@stageflow/proto';
import type { Infrastructure, Logger } from '@stageflow/runtime';
import { AGENT_BACKEND } from './tokens';
import { runAttempt } from './run-attempt';
import { CheckoutFailed } from './run-workspace';
import { answeredCount } from './resume';

@Controller()
export class AgentRunnerController implements OnModuleDestroy {
  private readonly shutdown = new AbortController();

  constructor(
    @Inject(INFRASTRUCTURE) private readonly infra: Infrastructure,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(AGENT_BACKEND) private readonly backend: Promise<AgentBackend>,
  ) {}

  onModuleDestroy(): void {
    this.shutdown.abort();
  }

  @EventPattern(workQueue('agent', Number(process.env.SF_AGENT_CONCURRENCY ?? 4)))
  async run(@Payload() job: AgentJob, @Ctx() delivery: Job<AgentJob>): Promise<void> {
    const { state, events } = await this.infra.runs.load(job.runId);
    const stage = state.stages[job.stageId];
    const attempt = stage?.attempts.find((a) => a.n === job.attempt);
    if (!attempt || attempt.phase !== 'running') return;
    if (answeredCount(stage, attempt.n) !== job.resume) return; // a newer job continues this attempt
    if (state.outcome) {
      await this.infra.runs.execute(job.runId, (s) => decideAttempt({ type: 'FailAttempt', stageId: job.stageId, attempt: job.attempt, kind: 'cancelled', reason: `run ${state.outcome}`, now: new Date().toISOString() }, s));
      return;
    }
    const cancel = new AbortController();
    const onShutdown = () => cancel.abort();
    this.shutdown.signal.addEventListener('abort', onShutdown, { once: true });
    const heartbeat = setInterval(() => {
      void delivery.working().catch(() => undefined);
      void this.infra.runs.load(job.runId).then(
        ({ state: current }) => current.outcome && cancel.abort(),
        () => undefined,
      );
    }, Math.max(200, Math.min(2000, Math.floor(this.infra.queueLimits.agent.ackWaitMs / 3))));
    this.logger.info('running attempt', { run: job.runId, stage: job.stageId, attempt: job.attempt, delivery: delivery.deliveryCount });
    try {
      const outcome = await runAttempt({
        infra: this.infra,
        backend: await this.backend,
        state,
        events,
        stageId: job.stageId,
        attempt: job.attempt,
        root: this.infra.config.mode === 'embedded' ? this.infra.config.home : path.join(this.infra.config.workDir),
        signal: cancel.signal,
      });
      this.logger.info('attempt session ended', { run: job.runId, stage: job.stageId, attempt: job.attempt, outcome: outcome.kind });
    } catch (err) {
      if (!(err instanceof CheckoutFailed) || err.retryable) throw err;
      this.logger.warn('attempt failed: no checkout', { run: job.runId, stage: job.stageId, attempt: job.attempt, code: err.code });
      const reason = `${err.code}: ${err.message}`;
      await this.infra.runs.execute(job.runId, (s) => decideAttempt({ type: 'FailAttempt', stageId: job.stageId, attempt: job.attempt, kind: 'runner_error', reason, now: new Date().toISOString() }, s));
    } finally {
      clearInterval(heartbeat);
      this.shutdown.signal.removeEventListener('abort', onShutdown);
    }
  }
}
