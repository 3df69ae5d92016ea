/**
 * Decoding a stored run message: one message is one decision, `{ events: RunEvent[] }`, every
 * event upcast to the current schema. A message of any other shape is refused (never skipped):
 * skipping would advance the checkpoint past data the read model silently lost.
 */
import { upcast, type RunEvent } from '@stageflow/domain';
import type { StoredMessage } from '@stageflow/eventlog';

export class UndecodableMessageError extends Error {
  constructor(readonly seq: number, readonly subject: string, detail: string) {
    super(`message ${seq} on ${subject}: ${detail}`);
    this.name = 'UndecodableMessageError';
  }
}

export function decisionEvents(message: StoredMessage): RunEvent[] {
  const data = message.data as { events?: unknown } | null;
  if (typeof data !== 'object' || data === null || !Array.isArray(data.events)) {
    throw new UndecodableMessageError(Number(message.seq), message.subject, 'not a decision batch ({ events: [...] })');
  }
  return data.events.map((event) => upcast(event));
}
