/**
 * Broker reactions by error kind. Every error a handler throws maps to exactly one:
 * - `retryable: false` (a refusal, bad input, a poison message): term and record.
 * - anything else (retryable, or unknown): nak with delay; past max deliveries, dead-lettered.
 * Optimistic-concurrency conflicts never reach here: the run store reloads and decides again.
 */
export type BrokerReaction = 'nak' | 'term';

export function reactionTo(error: unknown): BrokerReaction {
  const retryable = (error as { retryable?: unknown } | null)?.retryable;
  return retryable === false ? 'term' : 'nak';
}

export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** Thrown by handlers for work that must be tried again later (e.g. an input not yet visible). */
export class RetryLater extends Error {
  readonly retryable = true;
  constructor(
    message: string,
    readonly delayMs = 1000,
  ) {
    super(message);
    this.name = 'RetryLater';
  }
}
