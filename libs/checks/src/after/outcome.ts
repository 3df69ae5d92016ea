import type { CheckStatus } from '../domain';

/** What a single check decides; runAfterChecks adds id, type, phase and timestamps. */
export interface CheckOutcome {
  readonly status: CheckStatus;
  /** Present unless passed. */
  readonly message?: string;
  readonly evidence: { readonly [key: string]: unknown };
}

export function outcome(problems: readonly string[], evidence: CheckOutcome['evidence']): CheckOutcome {
  return problems.length === 0 ? { status: 'passed', evidence } : { status: 'failed', message: problems.join('; '), evidence };
}
