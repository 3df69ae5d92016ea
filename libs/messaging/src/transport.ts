/**
 * A NestJS custom transport over the Stageflow event log and work queues (JetStream or the
 * embedded log: the same interface). Handlers are plain `@EventPattern` methods; the transport
 * settles each delivery from the handler's outcome:
 * - work jobs: resolved → ack (unless the handler settled it); thrown → `reactionTo(error)`.
 * - event subscriptions: resolved → acknowledged (position advances); thrown retryable (or
 *   unknown) → redelivered after a delay while deliveries remain; thrown non-retryable, or on the
 *   last allowed delivery → a poison message: recorded under `<ns>.dead.events.<durable>` with its
 *   reason, reported to `onDeadEvent` (which ends its run in `error`), and skipped, so one poison
 *   message cannot stall a service or be redelivered forever.
 */
import { CustomTransportStrategy, Server } from '@nestjs/microservices';
import { subscriptionNamed, topology, type Consumer, type EventDelivery, type EventLog, type Job, type StoredMessage, type Subscription, type WorkQueues } from '@stageflow/eventlog';
import { lastValueFrom, isObservable } from 'rxjs';
import type { Logger } from '@stageflow/runtime';
import { describeError, reactionTo, RetryLater } from './errors';
import { parsePattern } from './patterns';

/** A subscription message given up on: recorded on `<ns>.dead.events.<durable>`. */
export interface DeadEvent {
  readonly durable: string;
  readonly seq: number;
  readonly subject: string;
  readonly deliveries: number;
  readonly reason: string;
}

export interface TransportOptions {
  readonly log: EventLog;
  readonly queues: WorkQueues;
  readonly namespace: string;
  readonly logger: Logger;
  readonly retryDelayMs?: number;
  /** Called once a poison message is recorded (services end its run in `error`); a throw is logged, never retried. */
  readonly onDeadEvent?: (letter: DeadEvent) => Promise<void>;
}

/** The durable's deliveries per message from the topology table, for logs that create their own consumer. */
function maxDeliverOf(durable: string): { maxDeliver?: number } {
  const maxDeliver = subscriptionNamed(topology(), durable)?.delivery.maxDeliver;
  return maxDeliver !== undefined && maxDeliver > 0 ? { maxDeliver } : {};
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
            await this.options.log.subscribe(pattern.durable, pattern.filter.replace('{ns}', this.options.namespace), (message: StoredMessage, delivery: EventDelivery) => this.handleStoredEvent(pattern.durable, message, delivery, invoke), {
              retryDelayMs: this.options.retryDelayMs,
              concurrency: pattern.concurrency ?? 1,
              ...maxDeliverOf(pattern.durable),
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

  private async handleStoredEvent(durable: string, message: StoredMessage, delivery: EventDelivery, invoke: (data: unknown, context: unknown) => Promise<void>): Promise<void> {
    try {
      await invoke(message, message);
    } catch (err) {
      const last = delivery.deliveryCount >= delivery.maxDeliver;
      if (reactionTo(err) === 'nak' && !last) throw err;
      const letter: DeadEvent = {
        durable,
        seq: message.seq,
        subject: message.subject,
        deliveries: delivery.deliveryCount,
        reason: reactionTo(err) === 'nak' ? `failed on delivery ${delivery.deliveryCount} of ${delivery.maxDeliver}: ${describeError(err)}` : describeError(err),
      };
      this.options.logger.error('event handler could not process a message; recorded and skipped', { ...letter });
      await this.options.log.append(`${this.options.namespace}.dead.events.${durable}`, letter);
      try {
        await this.options.onDeadEvent?.(letter);
      } catch (hookError) {
        this.options.logger.error('a dead event could not be reported to its run', { durable, seq: message.seq, error: describeError(hookError) });
      }
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
