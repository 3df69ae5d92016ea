/**
 * A NestJS custom transport over the Stageflow event log and work queues (JetStream or the
 * embedded log: the same interface). Handlers are plain `@EventPattern` methods; the transport
 * settles each delivery from the handler's outcome:
 * - work jobs: resolved → ack (unless the handler settled it); thrown → `reactionTo(error)`.
 * - event subscriptions: resolved → acknowledged (position advances); thrown retryable →
 *   redelivered after a delay; thrown non-retryable → recorded under `<ns>.dead.events.<durable>`
 *   and skipped, so one poison event cannot stall a service.
 */
import { CustomTransportStrategy, Server } from '@nestjs/microservices';
import type { Consumer, EventLog, Job, StoredMessage, Subscription, WorkQueues } from '@stageflow/eventlog';
import { lastValueFrom, isObservable } from 'rxjs';
import type { Logger } from '@stageflow/runtime';
import { describeError, reactionTo, RetryLater } from './errors';
import { parsePattern } from './patterns';

export interface TransportOptions {
  readonly log: EventLog;
  readonly queues: WorkQueues;
  readonly namespace: string;
  readonly logger: Logger;
  readonly retryDelayMs?: number;
}

export class StageflowTransport extends Server implements CustomTransportStrategy {
  private readonly consumers: Consumer[] = [];
  private readonly subscriptions: Subscription[] = [];
  private started = false;

  constructor(private readonly options: TransportOptions) {
    super();
  }

  get ready(): boolean {
    return this.started;
  }

  on(): void {
    throw new Error('StageflowTransport does not support event listeners');
  }

  unwrap<T>(): T {
    return this.options as unknown as T;
  }

  async listen(callback: (err?: unknown) => void): Promise<void> {
    try {
      for (const [key, handler] of this.getHandlers()) {
        const pattern = parsePattern(key);
        if (!pattern) throw new Error(`handler pattern ${key} is not a Stageflow pattern`);
        const invoke = async (data: unknown, context: unknown) => {
          const result = await handler(data, context);
          if (isObservable(result)) await lastValueFrom(result, { defaultValue: undefined });
        };
        if (pattern.kind === 'work') {
          this.consumers.push(
            await this.options.queues.consume(pattern.queue, (job: Job) => this.handleJob(job, invoke), {
              concurrency: pattern.concurrency ?? 1,
              retryDelayMs: this.options.retryDelayMs,
            }),
          );
        } else {
          this.subscriptions.push(
            await this.options.log.subscribe(pattern.durable, pattern.filter.replace('{ns}', this.options.namespace), (message: StoredMessage) => this.handleStoredEvent(pattern.durable, message, invoke), {
              retryDelayMs: this.options.retryDelayMs,
              concurrency: pattern.concurrency ?? 1,
            }),
          );
        }
      }
      this.started = true;
      callback();
    } catch (err) {
      callback(err);
    }
  }

  private async handleJob(job: Job, invoke: (data: unknown, context: unknown) => Promise<void>): Promise<void> {
    let settled = false;
    const tracked: Job = {
      ...job,
      id: job.id,
      queue: job.queue,
      data: job.data,
      deliveryCount: job.deliveryCount,
      ack: async () => ((settled = true), job.ack()),
      nak: async (delay?: number) => ((settled = true), job.nak(delay)),
      term: async (reason: string) => ((settled = true), job.term(reason)),
      working: () => job.working(),
    };
    try {
      await invoke(job.data, tracked);
      if (!settled) await job.ack();
    } catch (err) {
      if (settled) throw err;
      const reaction = reactionTo(err);
      this.options.logger.warn('job failed', { queue: job.queue, job: job.id, delivery: job.deliveryCount, reaction, error: describeError(err) });
      if (reaction === 'term') await job.term(describeError(err));
      else await job.nak(err instanceof RetryLater ? err.delayMs : this.options.retryDelayMs ?? 1000);
    }
  }

  private async handleStoredEvent(durable: string, message: StoredMessage, invoke: (data: unknown, context: unknown) => Promise<void>): Promise<void> {
    try {
      await invoke(message, message);
    } catch (err) {
      if (reactionTo(err) === 'nak') throw err;
      this.options.logger.error('event handler refused a message; recorded and skipped', { durable, seq: message.seq, error: describeError(err) });
      await this.options.log.append(`${this.options.namespace}.dead.events.${durable}`, {
        durable,
        seq: message.seq,
        subject: message.subject,
        reason: describeError(err),
      });
    }
  }

  /** Stops fetching and waits for the work in flight; unfinished jobs are redelivered elsewhere. */
  async close(): Promise<void> {
    this.started = false;
    await Promise.all([...this.consumers.map((c) => c.stop()), ...this.subscriptions.map((s) => s.stop())]);
    this.consumers.length = 0;
    this.subscriptions.length = 0;
  }
}
