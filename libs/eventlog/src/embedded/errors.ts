import { EventLogError } from '../errors';
import { WrongExpectedSequenceError } from '../types';

const RETRYABLE = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_IOERR', 'SQLITE_FULL']);

/**
 * Runs a storage call, mapping SQLite failures to EventLogError: a busy or locked database, or an
 * I/O error, may pass on retry; a closed instance or a corrupt file will not.
 */
export function guarded<R>(call: () => R): R {
  try {
    return call();
  } catch (err) {
    if (err instanceof EventLogError || err instanceof WrongExpectedSequenceError) throw err;
    const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
    const message = err instanceof Error ? err.message : String(err);
    throw new EventLogError(`embedded event log: ${message}`, RETRYABLE.has(code.replace(/_[A-Z]+$/, '')) || RETRYABLE.has(code), {
      cause: err,
    });
  }
}
