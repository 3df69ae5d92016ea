/** Thrown when a check cannot be run at all (its result is `error`, not `failed`). */
export class CheckCannotRunError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckCannotRunError';
  }
}

/** The `code` of a Node system error (realm-independent: no instanceof). */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

export function errorMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string') return error.message;
  return String(error);
}
