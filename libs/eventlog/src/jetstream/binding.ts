import { JetStreamApiCodes, JetStreamApiError, type Consumer, type JetStreamClient } from '@nats-io/jetstream';
import { EventLogError } from '../errors';
import { toEventLogError } from './errors';

/** What a process reports when its namespace lacks a stream or consumer that `sf setup` creates. */
export function notSetUp(what: string, namespace: string): EventLogError {
  return new EventLogError(`${what} does not exist: run \`sf setup\` for namespace "${namespace}" (with admin credentials) before starting services`, false);
}

export function isNotFound(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.ConsumerNotFound || err.code === JetStreamApiCodes.StreamNotFound)
  );
}

/** Binds to a durable consumer that `sf setup` created; never creates one. */
export async function bindConsumer(js: JetStreamClient, stream: string, durable: string, namespace: string): Promise<Consumer> {
  try {
    const consumer = await js.consumers.get(stream, durable);
    await consumer.info(true);
    return consumer;
  } catch (err) {
    if (isNotFound(err)) throw notSetUp(`durable consumer "${durable}" on stream ${stream}`, namespace);
    throw toEventLogError(err, `bind consumer ${durable}`);
  }
}
