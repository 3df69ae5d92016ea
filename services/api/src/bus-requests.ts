/**
 * Run requests from other services over the bus: `<ns>.cmd.run.request` (JSON RunRequestCommand,
 * `Nats-Msg-Id` as the idempotency key), served by every API replica in one queue group. The
 * reply names the run id, or the typed reason for refusal (also recorded on
 * `<ns>.evt.request.rejected`).
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { subjects, type RunRequestCommand, type RunRequestReply } from '@stageflow/domain';
import { INFRASTRUCTURE, LOGGER } from '@stageflow/messaging';
import { validateRunRequest } from '@stageflow/proto';
import type { Infrastructure, Logger } from '@stageflow/runtime';
import { RunRequests, type Requester } from './run-requests';

@Injectable()
export class BusRequests implements OnApplicationBootstrap, OnModuleDestroy {
  private serving?: { stop(): Promise<void> };

  constructor(
    @Inject(INFRASTRUCTURE) private readonly infra: Infrastructure,
    @Inject(RunRequests) private readonly requests: RunRequests,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.infra.bus) return;
    const subject = subjects(this.infra.config.namespace).runRequests;
    this.serving = await this.infra.bus.serve(subject, `${this.infra.config.namespace}-api`, async (request): Promise<RunRequestReply> => {
      const problem = request.data === undefined ? 'the body is not JSON' : validateRunRequest(request.data);
      if (problem) return this.requests.refuse('request.invalid', `invalid run request: ${problem}`, request.msgId);
      const reply = await this.requests.accept(request.data as RunRequestCommand, request.msgId, busRequester(request.data));
      this.logger.info('run request', { key: request.msgId, ...reply });
      return reply;
    });
    this.logger.info('serving run requests', { subject });
  }

  async onModuleDestroy(): Promise<void> {
    await this.serving?.stop();
  }
}

/** On the bus the sender's NATS credentials are what is checked, and the request names who it is from. */
function busRequester(data: unknown): Requester {
  const named = (data as { requested_by?: unknown } | null)?.requested_by;
  return { by: typeof named === 'string' && named ? named : 'bus' };
}
