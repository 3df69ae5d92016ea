import type { JsMsg, StoredMsg } from '@nats-io/jetstream';
import type { StoredMessage } from '../types';

const MSG_ID = 'Nats-Msg-Id';

export function encode(data: unknown): string {
  return JSON.stringify(data ?? null);
}

function decode<T>(bytes: Uint8Array): T {
  return JSON.parse(new TextDecoder().decode(bytes)) as T;
}

/** A message delivered by a consumer, as the log presents it. */
export function fromJsMsg<T>(msg: JsMsg): StoredMessage<T> {
  const message = { seq: msg.seq, subject: msg.subject, data: decode<T>(msg.data), time: msg.time.toISOString() };
  const msgId = msg.headers?.get(MSG_ID);
  return msgId ? { ...message, msgId } : message;
}

/** A message fetched by sequence from the stream. */
export function fromStoredMsg<T>(msg: StoredMsg): StoredMessage<T> {
  const message = { seq: msg.seq, subject: msg.subject, data: decode<T>(msg.data), time: msg.time.toISOString() };
  const msgId = msg.header?.get(MSG_ID);
  return msgId ? { ...message, msgId } : message;
}

/** JetStream configuration durations are nanoseconds. */
export function nanos(ms: number): number {
  return ms * 1_000_000;
}
