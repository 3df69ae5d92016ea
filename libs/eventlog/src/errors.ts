/**
 * Failures of the event log other than an optimistic-concurrency conflict. `retryable` says
 * whether the same call may succeed later unchanged (a lost connection, a timeout) or never will
 * (a bad subject, a missing queue, a closed instance).
 */
export class EventLogError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'EventLogError';
  }
}

export function invalidArgument(message: string): EventLogError {
  return new EventLogError(message, false);
}
