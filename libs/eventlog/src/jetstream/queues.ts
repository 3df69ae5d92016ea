import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { AckPolicy, DeliverPolicy, JetStreamApiCodes, JetStreamApiError, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { DeadLetterListeners, runJob, type Delivery } from '../jobs';
import { runLoops, type Loops } from '../loops';
import { assertName, type Subjects } from '../subjects';
import type { ConsumeOptions, Consumer, DeadLetter, EventLog, JobHandler, QueueOptions } from '../types';
import { natsCall, toEventLogError } from './errors';
import { encode, nanos } from './messages';
import { bindConsumer } from './binding';
import { ensureConsumer } from './pull';
import { DEFAULT_RETRY_DELAY_MS, pullSource } from './subscription';

/**
 * Work queues on the work stream (workqueue retention: an acknowledged job is removed). Each queue
 * has one durable pull consumer named after it, shared by every replica, so the server hands each
 * job to one puller at a time and redelivers it when its ack wait passes without ack / nak / working().
 */
export class JetStreamWorkQueues {
  private readonly listeners = new DeadLetterListeners();
  private readonly running = new Set<Loops>();

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly stream: string,
    private readonly subjects: Subjects,
    private readonly log: EventLog,
    private readonly nc: NatsConnection,
  ) {}

  /** Creates or updates the queue's consumer: an admin operation (`sf setup`); services only consume. */
  async declare(queue: string, options: QueueOptions): Promise<void> {
    assertName('queue', queue);
    await natsCall(`declare queue ${queue}`, () =>
      ensureConsumer(this.js, this.jsm, this.stream, {
        durable_name: queue,
        filter_subject: this.subjects.work(queue),
        deliver_policy: DeliverPolicy.All,
        ack_policy: AckPolicy.Explicit,
        ack_wait: nanos(options.ackWaitMs),
        max_deliver: options.maxDeliver,
        ...(options.backoffMs ? { backoff: options.backoffMs.map(nanos) } : {}),
        max_ack_pending: -1,
      }),
    );
  }

  async enqueue(queue: string, data: unknown, msgId: string): Promise<{ readonly duplicate: boolean }> {
    assertName('queue', queue);
    const ack = await natsCall(`enqueue on ${queue}`, () => this.js.publish(this.subjects.work(queue), encode(data), { msgID: msgId }));
    return { duplicate: ack.duplicate };
  }

  async consume<T = unknown>(queue: string, handler: JobHandler<T>, options: ConsumeOptions = {}): Promise<Consumer> {
    assertName('queue', queue);
    const consumer = await bindConsumer(this.js, this.stream, queue, this.subjects.namespace);
    const info = await natsCall(`consume ${queue}`, () => consumer.info(true));
    const maxDeliver = info.config.max_deliver ?? -1;
    const retryDelayMs = options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
    const loops = runLoops(options.concurrency ?? 1, pullSource(consumer), (msg) =>
      runJob(this.delivery<T>(queue, msg, maxDeliver), handler, retryDelayMs),
    );
    this.running.add(loops);
    const lost = this.recordLostOnLastDelivery(queue);
    return {
      stop: async () => {
        this.running.delete(loops);
        lost.unsubscribe();
        await loops.stop();
      },
    };
  }

  /**
   * A job whose last allowed delivery was never settled (its consumer died) is not redelivered by
   * the server, which says so with a MAX_DELIVERIES advisory: the job is then recorded as a dead
   * letter like any other (same msg id as the handler's own dead-lettering, so every replica that
   * hears the advisory records it once) and removed from the work stream.
   */
  private recordLostOnLastDelivery(queue: string): Subscription {
    return this.nc.subscribe(`$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${this.stream}.${queue}`, {
      callback: (err, advisory) => {
        if (err) return;
        void this.deadLetterLost(queue, advisory.json<{ stream_seq: number; deliveries: number }>()).catch(() => undefined);
      },
    });
  }

  private async deadLetterLost(queue: string, advisory: { stream_seq: number; deliveries: number }): Promise<void> {
    const stored = await this.jsm.streams.getMessage(this.stream, { seq: advisory.stream_seq }).catch(() => null);
    if (!stored) return;
    const letter: DeadLetter = {
      queue,
      jobId: stored.header?.get('Nats-Msg-Id') || String(stored.seq),
      data: stored.json<unknown>(),
      deliveries: advisory.deliveries,
      reason: `no outcome after ${advisory.deliveries} deliveries (its consumer stopped without settling the job)`,
      time: new Date().toISOString(),
    };
    const recorded = await this.log.append(this.subjects.dead(queue), letter, { msgId: `dead:${queue}:${stored.seq}` });
    await this.jsm.streams.deleteMessage(this.stream, stored.seq, false).catch(() => undefined);
    if (!recorded.duplicate) await this.listeners.notify(letter);
  }

  private delivery<T>(queue: string, msg: JsMsg, maxDeliver: number): Delivery<T> {
    return {
      id: msg.headers?.get('Nats-Msg-Id') ?? String(msg.seq),
      queue,
      data: msg.json<T>(),
      deliveryCount: msg.info.deliveryCount,
      maxDeliver: maxDeliver > 0 ? maxDeliver : Infinity,
      ack: () => natsCall(`ack on ${queue}`, () => msg.ackAck()).then(() => undefined),
      nak: async (delayMs) => msg.nak(delayMs),
      working: async () => msg.working(),
      deadLetter: (reason) => this.deadLetter(queue, msg, reason),
    };
  }

  /**
   * Records the dead letter (msg id `dead:<queue>:<work stream seq>`, so a repeat records nothing),
   * terminates the delivery and removes the job from the work stream, then notifies listeners.
   */
  private async deadLetter(queue: string, msg: JsMsg, reason: string): Promise<void> {
    const letter: DeadLetter = {
      queue,
      jobId: msg.headers?.get('Nats-Msg-Id') ?? String(msg.seq),
      data: msg.json<unknown>(),
      deliveries: msg.info.deliveryCount,
      reason,
      time: new Date().toISOString(),
    };
    const recorded = await this.log.append(this.subjects.dead(queue), letter, { msgId: `dead:${queue}:${msg.seq}` });
    msg.term(reason);
    await this.jsm.streams.deleteMessage(this.stream, msg.seq, false).catch((err: unknown) => {
      if (!isMessageNotFound(err)) throw toEventLogError(err, `remove dead job from ${queue}`);
    });
    if (!recorded.duplicate) await this.listeners.notify(letter);
  }

  onDeadLetter(listener: (letter: DeadLetter) => Promise<void>): void {
    this.listeners.add(listener);
  }

  async deadLetters(queue: string): Promise<readonly DeadLetter[]> {
    assertName('queue', queue);
    const read = await this.log.readSubject<DeadLetter>(this.subjects.dead(queue));
    return read.messages.map((message) => message.data);
  }

  /** Stops every consumer without waiting for jobs in flight (they are redelivered after their ack wait). */
  async close(): Promise<void> {
    for (const loops of this.running) void loops.stop();
    this.running.clear();
  }
}

function isMessageNotFound(err: unknown): boolean {
  return err instanceof JetStreamApiError && err.code === JetStreamApiCodes.NoMessageFound;
}
