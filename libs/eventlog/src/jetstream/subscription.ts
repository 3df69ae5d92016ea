import { AckPolicy, DeliverPolicy, type Consumer, type ConsumerMessages, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { runLoops, type Loops, type Source } from '../loops';
import { invalidArgument } from '../errors';
import { assertName, assertSubscribable, type Subjects } from '../subjects';
import { DEFAULT_SUBSCRIPTION_MAX_DELIVER, type MessageHandler, type SubscribeOptions, type Subscription } from '../types';
import { fromJsMsg, nanos } from './messages';
import { bindConsumer } from './binding';
import { natsCall } from './errors';
import { ensureConsumer, pullOne } from './pull';

export const DEFAULT_RETRY_DELAY_MS = 1000;
export const DEFAULT_SUBSCRIPTION_ACK_WAIT_MS = 30_000;

/**
 * Durable subscriptions: one durable pull consumer per name on the events stream. A service binds
 * to the consumer `sf setup` created from the topology table (its delivery settings are the
 * consumer's); with `provision` (admin, tests) a missing consumer is created with
 * max_ack_pending = concurrency (default 1, so across every replica exactly one message is in
 * flight and delivery is in order). The handler's message is acked (and the ack confirmed) after it resolves, nak'd with the
 * retry delay when it throws, and kept alive with working() while it runs.
 */
export class JetStreamSubscriptions {
  private readonly running = new Set<Loops>();
  private readonly keepAlives = new Set<NodeJS.Timeout>();

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly stream: string,
    private readonly subjects: Subjects,
    private readonly provision: boolean,
  ) {}

  async subscribe(durable: string, filter: string, handler: MessageHandler, options: SubscribeOptions): Promise<Subscription> {
    assertName('durable', durable);
    assertSubscribable(this.subjects, filter);
    const retryDelayMs = options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
    let consumer: Consumer;
    let ackWaitMs = options.ackWaitMs ?? DEFAULT_SUBSCRIPTION_ACK_WAIT_MS;
    let maxDeliver = options.maxDeliver ?? DEFAULT_SUBSCRIPTION_MAX_DELIVER;
    if (this.provision) {
      consumer = await natsCall(`subscribe ${durable}`, () =>
        ensureConsumer(this.js, this.jsm, this.stream, {
          durable_name: durable,
          filter_subject: filter,
          deliver_policy: DeliverPolicy.All,
          ack_policy: AckPolicy.Explicit,
          ack_wait: nanos(ackWaitMs),
          max_ack_pending: Math.max(1, options.concurrency ?? 1),
          max_deliver: maxDeliver,
        }),
      );
    } else {
      consumer = await bindConsumer(this.js, this.stream, durable, this.subjects.namespace);
      const config = (await consumer.info(true)).config;
      if (config.filter_subject !== filter) throw invalidArgument(`durable consumer "${durable}" filters ${config.filter_subject}, not ${filter}: run \`sf setup\``);
      ackWaitMs = (config.ack_wait ?? 0) / 1_000_000 || ackWaitMs;
      maxDeliver = config.max_deliver !== undefined && config.max_deliver > 0 ? config.max_deliver : Infinity;
    }
    const source = pullSource(consumer);
    const loops = runLoops(Math.max(1, options.concurrency ?? 1), source, (msg) => this.deliver(msg, handler, ackWaitMs, retryDelayMs, maxDeliver));
    this.running.add(loops);
    return {
      stop: async () => {
        this.running.delete(loops);
        await loops.stop();
      },
    };
  }

  private async deliver(msg: JsMsg, handler: MessageHandler, ackWaitMs: number, retryDelayMs: number, maxDeliver: number): Promise<void> {
    const keepAlive = setInterval(() => settleQuietly(() => msg.working()), ackWaitMs / 3);
    this.keepAlives.add(keepAlive);
    try {
      await handler(fromJsMsg(msg), { deliveryCount: msg.info.deliveryCount, maxDeliver });
      await msg.ackAck();
    } catch {
      settleQuietly(() => msg.nak(retryDelayMs));
    } finally {
      clearInterval(keepAlive);
      this.keepAlives.delete(keepAlive);
    }
  }

  /** Stops fetching everywhere; handlers in flight finish on their own and their settle is dropped. */
  abandon(): void {
    for (const loops of this.running) void loops.stop();
    this.running.clear();
    for (const timer of this.keepAlives) clearInterval(timer);
    this.keepAlives.clear();
  }
}

/** Pulls one message at a time per loop; interrupt() ends every pull in progress. */
export function pullSource(consumer: Consumer): Source<JsMsg> {
  const pulls = new Set<ConsumerMessages>();
  let stopped = false;
  return {
    next: async () => {
      if (stopped) return undefined;
      return pullOne(consumer, pulls, () => stopped);
    },
    interrupt: () => {
      stopped = true;
      for (const pull of pulls) pull.stop();
    },
  };
}

/** A settle that cannot be sent (the connection is closed) leaves the message to be redelivered after its ack wait. */
function settleQuietly(send: () => void): void {
  try {
    send();
  } catch {
    // Redelivered after the ack wait.
  }
}
