/** Thrown when a check cannot be run at all (its result is `error`, not `failed`). */
export class CheckCannotRunError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckCannotRunError';
  }
}
