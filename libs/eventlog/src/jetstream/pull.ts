import { JetStreamApiError, type Consumer, type ConsumerConfig, type ConsumerMessages, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';

/** How long one pull request waits for a message before the loop asks again. */
const PULL_EXPIRES_MS = 5000;

/** Creates the durable consumer, or updates it to this configuration when it exists. */
export async function ensureConsumer(
  js: JetStreamClient,
  jsm: JetStreamManager,
  stream: string,
  config: Partial<ConsumerConfig> & { durable_name: string },
): Promise<Consumer> {
  try {
    const info = await jsm.consumers.add(stream, config);
    return js.consumers.getConsumerFromInfo(info);
  } catch (err) {
    if (!(err instanceof JetStreamApiError)) throw err;
    const info = await jsm.consumers.update(stream, config.durable_name, config);
    return js.consumers.getConsumerFromInfo(info);
  }
}

/**
 * Pulls at most one message. The pull is in `pulls` while it runs, so that it can be stopped;
 * `stopped` is checked after it is registered, closing the race with a concurrent interrupt.
 */
export async function pullOne(consumer: Consumer, pulls: Set<ConsumerMessages>, stopped: () => boolean): Promise<JsMsg | undefined> {
  const pull = await consumer.fetch({ max_messages: 1, expires: PULL_EXPIRES_MS });
  pulls.add(pull);
  try {
    if (stopped()) pull.stop();
    for await (const msg of pull) return msg;
    return undefined;
  } finally {
    pulls.delete(pull);
  }
}
