/**
 * Reading events of any stored version. Version 1 is the first; when an event's shape changes,
 * its version is bumped and a step from the old shape to the new one is added here, so logs
 * written by older releases stay readable.
 */
import { EVENT_VERSION, type RunEvent } from './events';

export class UnknownEventVersion extends Error {
  readonly retryable = false;
  constructor(readonly version: unknown, readonly eventType: unknown) {
    super(`event ${String(eventType)} has version ${String(version)}; this release reads up to ${EVENT_VERSION}`);
    this.name = 'UnknownEventVersion';
  }
}

export function upcast(raw: unknown): RunEvent {
  const event = raw as { v?: unknown; type?: unknown };
  if (event.v === EVENT_VERSION) return raw as RunEvent;
  throw new UnknownEventVersion(event.v, event.type);
}
