import { AckPolicy, DeliverPolicy, type Consumer, type ConsumerMessages, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { runLoops, type Loops, type Source } from '../loops';
import { assertFilter, assertName } from '../subjects';
import type { MessageHandler, SubscribeOptions, Subscription } from '../types';
import { fromJsMsg, nanos } from './messages';
import { ensureConsumer, pullOne } from './pull';

export const DEFAULT_RETRY_DELAY_MS = 1000;
export const DEFAULT_SUBSCRIPTION_ACK_WAIT_MS = 30_000;

/**
 * Durable subscriptions: one durable pull consumer per name on the events stream, with
 * max_ack_pending 1, so across every replica exactly one message is in flight and delivery is in
 * order. The handler's message is acked (and the ack confirmed) after it resolves, nak'd with the
 * retry delay when it throws, and kept alive with working() while it runs.
 */
export class JetStreamSubscriptions {
  private readonly running = new Set<Loops>();

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly stream: string,
  ) {}

  async subscribe(durable: string, filter: string, handler: MessageHandler, options: SubscribeOptions): Promise<Subscription> {
    assertName('durable', durable);
    assertFilter(filter);
    const ackWaitMs = options.ackWaitMs ?? DEFAULT_SUBSCRIPTION_ACK_WAIT_MS;
    const retryDelayMs = options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
    const consumer = await ensureConsumer(this.js, this.jsm, this.stream, {
      durable_name: durable,
      filter_subject: filter,
      deliver_policy: DeliverPolicy.All,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(ackWaitMs),
      max_ack_pending: 1,
      max_deliver: -1,
    });
    const source = pullSource(consumer);
    const loops = runLoops(1, source, (msg) => deliver(msg, handler, ackWaitMs, retryDelayMs));
    this.running.add(loops);
    return {
      stop: async () => {
        this.running.delete(loops);
        await loops.stop();
      },
    };
  }

  abandon(): void {
    for (const loops of this.running) void loops.stop();
    this.running.clear();
  }
}

/** Pulls one message at a time; interrupt() ends the pull in progress. */
export function pullSource(consumer: Consumer): Source<JsMsg> {
  let current: ConsumerMessages | undefined;
  let stopped = false;
  return {
    next: async () => {
      if (stopped) return undefined;
      return pullOne(consumer, (pull) => (current = pull), () => stopped);
    },
    interrupt: () => {
      stopped = true;
      current?.stop();
    },
  };
}

async function deliver(msg: JsMsg, handler: MessageHandler, ackWaitMs: number, retryDelayMs: number): Promise<void> {
  const keepAlive = setInterval(() => msg.working(), ackWaitMs / 3);
  try {
    await handler(fromJsMsg(msg));
    clearInterval(keepAlive);
    await msg.ackAck();
  } catch {
    clearInterval(keepAlive);
    try {
      msg.nak(retryDelayMs);
    } catch {
      // The connection is gone: the message is redelivered after its ack wait.
    }
  }
}
