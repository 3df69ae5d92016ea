/**
 * Decoding a stored run message: one message is one decision, `{ events: RunEvent[] }`, every
 * event upcast to the current schema and admitted by its signature (a verdict or operator
 * decision without a valid one becomes the `SignatureRefused` the fold records instead). A message
 * of any other shape, or with an event of an unknown schema version, is refused here; the
 * projector records it in `undecodable_messages` with the reason and moves past it (a rebuild by
 * a newer version reads again what an older one could not).
 */
import { upcast, type RunEvent } from '@stageflow/domain';
import type { StoredMessage } from '@stageflow/eventlog';

export class UndecodableMessageError extends Error {
  constructor(readonly seq: number, readonly subject: string, detail: string) {
    super(`message ${seq} on ${subject}: ${detail}`);
    this.name = 'UndecodableMessageError';
  }
}

/** Checks signatures (EventSignatures of @stageflow/runtime): `admit` returns the event or its refusal. */
export interface EventAdmission {
  admit(runId: string, event: RunEvent): RunEvent;
}

/** The run id is the last token of `<ns>.evt.run.<runId>`. */
export const runIdOfSubject = (subject: string): string => subject.slice(subject.lastIndexOf('.') + 1);

export function decisionEvents(message: StoredMessage, signatures: EventAdmission): RunEvent[] {
  const data = message.data as { events?: unknown } | null;
  if (typeof data !== 'object' || data === null || !Array.isArray(data.events)) {
    throw new UndecodableMessageError(Number(message.seq), message.subject, 'not a decision batch ({ events: [...] })');
  }
  const runId = runIdOfSubject(message.subject);
  return data.events.map((event) => signatures.admit(runId, upcast(event)));
}
