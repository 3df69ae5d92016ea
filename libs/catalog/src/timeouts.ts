import { DEFAULT_MAX_TIMEOUT_MS, MAX_TIMER_MS } from '@stageflow/domain';
import { isPositiveInteger } from './guards';

/**
 * The largest `timeout_ms` a catalog accepts: `SF_MAX_TIMEOUT_MS` when it is a positive integer
 * no larger than a timer can hold (2147483647), else 24 h. Read on every check, so a process
 * configured after start sees its setting.
 */
export function maxTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const configured = Number(env.SF_MAX_TIMEOUT_MS);
  return isPositiveInteger(configured) && configured <= MAX_TIMER_MS ? configured : DEFAULT_MAX_TIMEOUT_MS;
}

/** Why `value` is not a usable `timeout_ms`, or undefined when it is one. */
export function timeoutProblem(value: unknown): string | undefined {
  if (!isPositiveInteger(value)) return 'timeout_ms must be a positive integer (milliseconds)';
  const max = maxTimeoutMs();
  if (value > max) return `timeout_ms must be at most ${max} ms (SF_MAX_TIMEOUT_MS; default 24 h)`;
  return undefined;
}
