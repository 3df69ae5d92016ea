import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { randomUUID } from 'node:crypto';
import type { StoredMessage } from '../types';
import { fromJsMsg, nanos } from './messages';

/** Messages per pull request. */
const BATCH = 1000;
/** A pull that receives nothing for this long ends the read (the stream lost the messages meanwhile). */
const PULL_EXPIRES_MS = 2000;
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
    let remaining = Math.min(info.num_pending, limit);
    const consumer = js.consumers.getConsumerFromInfo(info);
    while (remaining > 0) {
      const before = messages.length;
      const batch = await consumer.fetch({ max_messages: Math.min(remaining, BATCH), expires: PULL_EXPIRES_MS });
      for await (const msg of batch) {
        messages.push(fromJsMsg<T>(msg));
        remaining--;
      }
      if (messages.length === before) break;
    }
    return messages;
  } finally {
    await jsm.consumers.delete(stream, name).catch(() => undefined);
  }
}
