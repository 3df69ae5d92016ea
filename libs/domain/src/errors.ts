/**
 * A command the state refuses. Not retryable: the same command against the same state is refused
 * again. Surfaces map it to 409 (REST), exit 1 (CLI), `term` (broker).
 */
export class CommandRefused extends Error {
  readonly retryable = false;
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CommandRefused';
  }
}

/** Bad input to a command (400 on REST). Not retryable. */
export class InvalidCommand extends Error {
  readonly retryable = false;
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'InvalidCommand';
  }
}
