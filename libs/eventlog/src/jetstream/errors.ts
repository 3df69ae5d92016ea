import { JetStreamApiError } from '@nats-io/jetstream';
import { PermissionViolationError } from '@nats-io/nats-core';
import { EventLogError } from '../errors';
import { WrongExpectedSequenceError } from '../types';

/**
 * Maps a nats.js failure to EventLogError. Retryable: a lost or refused connection, a timeout, no
 * JetStream responder (server restarting, leader election) and server-side 5xx. Not retryable: a
 * closed instance, a permission the server refused (however nats.js wraps it), and every other JetStream API error (bad configuration or request).
 */
export function toEventLogError(err: unknown, context: string): Error {
  if (err instanceof EventLogError || err instanceof WrongExpectedSequenceError) return err;
  const message = `${context}: ${err instanceof Error ? err.message : String(err)}`;
  return new EventLogError(message, isRetryable(err), { cause: err });
}

/** nats.js error names (its classes set `name`) of failures that may pass on retry. */
const RETRYABLE_NAMES = new Set(['ConnectionError', 'TimeoutError', 'NoResponders', 'RequestError', 'JetStreamStatusError']);

function isRetryable(err: unknown): boolean {
  if (isPermissionViolation(err)) return false;
  if (err instanceof JetStreamApiError) return err.status >= 500;
  if (!(err instanceof Error)) return false;
  if (err.name === 'JetStreamError' || err.name === 'JetStreamNotEnabled') return err.cause instanceof Error && isRetryable(err.cause);
  return RETRYABLE_NAMES.has(err.name);
}

/** The server refused the subject to this user (nats.js may wrap the refusal in a RequestError). */
function isPermissionViolation(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) if (e instanceof PermissionViolationError) return true;
  return false;
}

/** Runs a call, rethrowing its failure as toEventLogError(context). */
export async function natsCall<R>(context: string, call: () => Promise<R>): Promise<R> {
  try {
    return await call();
  } catch (err) {
    throw toEventLogError(err, context);
  }
}
