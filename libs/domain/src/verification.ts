/** Verification results as they are recorded per attempt. */
import type { CheckType } from './pipeline';

export type CheckStatus = 'passed' | 'failed' | 'error';

/** The attempt's verification disposition (000_*): a durable fact recovery decides on. */
export type Disposition = 'not_run' | 'passed' | 'failed' | 'error';

export interface CheckResult {
  readonly id: string;
  readonly type: CheckType;
  readonly phase: 'after';
  readonly status: CheckStatus;
  /** One line saying why it failed or errored; absent when passed. */
  readonly message?: string;
  /** Type-specific evidence (command output, file facts, diff of the checkout...). JSON only. */
  readonly evidence: { readonly [key: string]: unknown };
  readonly started_at: string;
  readonly finished_at: string;
}
