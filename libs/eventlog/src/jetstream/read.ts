import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { randomUUID } from 'node:crypto';
import type { StoredMessage } from '../types';
import { fromJsMsg, nanos } from './messages';

/** Messages per pull request. */
const BATCH = 1000;
/** How long one pull waits for messages. */
const PULL_EXPIRES_MS = 2000;
/** Consecutive empty pulls after which a read ends (the stream lost the messages meanwhile). */
const EMPTY_PULLS_BEFORE_GIVING_UP = 5;
/** An ephemeral reader left behind by a crashed process is removed by the server after this. */
const INACTIVE_THRESHOLD_MS = 10_000;

/**
 * Reads the messages matching `filter` with seq > afterSeq, in order, at most `limit`, through an
 * ephemeral, in-memory, unacknowledged pull consumer (available on nats-server 2.9). The read is a
 * snapshot: it returns what the consumer counted as pending when it was created.
 */
export async function readRange<T>(
  js: JetStreamClient,
  jsm: JetStreamManager,
  stream: string,
  filter: string,
  afterSeq: number,
  limit: number,
): Promise<StoredMessage<T>[]> {
  const name = `read_${randomUUID()}`;
  const info = await jsm.consumers.add(stream, {
    name,
    filter_subject: filter,
    ...(afterSeq > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: afterSeq + 1 } : { deliver_policy: DeliverPolicy.All }),
    ack_policy: AckPolicy.None,
    mem_storage: true,
    num_replicas: 1,
    inactive_threshold: nanos(INACTIVE_THRESHOLD_MS),
  });
  try {
    const messages: StoredMessage<T>[] = [];
    // Each delivered message says how many are still pending for this reader, so the read ends
    // exactly at the snapshot's last message; a pull that comes back empty (a busy server) is
    // asked again until EMPTY_PULLS_BEFORE_GIVING_UP pulls in a row bring nothing.
    let pending = info.num_pending;
    let emptyPulls = 0;
    const consumer = js.consumers.getConsumerFromInfo(info);
    while (pending > 0 && messages.length < limit && emptyPulls < EMPTY_PULLS_BEFORE_GIVING_UP) {
      const batch = await consumer.fetch({ max_messages: Math.min(pending, limit - messages.length, BATCH), expires: PULL_EXPIRES_MS });
      let received = 0;
      for await (const msg of batch) {
        messages.push(fromJsMsg<T>(msg));
        pending = msg.info.pending;
        received++;
      }
      emptyPulls = received === 0 ? emptyPulls + 1 : 0;
    }
    return messages;
  } finally {
    await jsm.consumers.delete(stream, name).catch(() => undefined);
  }
}
