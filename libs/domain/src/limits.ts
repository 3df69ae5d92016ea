/**
 * Bounds on values that come from outside (pipeline authors, callers, agents) and end up in a
 * timer, a date, or a recursive walk. Every check here is iterative: it cannot overflow the stack
 * on the input it bounds.
 */

/** The largest delay a Node.js timer honours (2^31 - 1 ms, about 24.8 days); longer ones fire at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** The default upper bound on a `timeout_ms` a pipeline may declare (24 h); see `SF_MAX_TIMEOUT_MS`. */
export const DEFAULT_MAX_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/** Deepest nesting of objects and arrays accepted in a run input (and any other caller JSON). */
export const MAX_INPUT_DEPTH = 64;

/** Largest run input accepted, as UTF-8 JSON. */
export const MAX_INPUT_BYTES = 1024 * 1024;

/** A delay a timer can hold: a finite number clamped to [0, MAX_TIMER_MS]; anything else is 0. */
export function timerDelayMs(ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) return 0;
  return Math.min(Math.floor(ms), MAX_TIMER_MS);
}

/**
 * `now` plus `ms` as an ISO date that is always valid: `ms` is clamped like a timer delay, so a
 * stored deadline never becomes `Invalid Date` whatever the definition it came from says.
 */
export function deadlineAfter(now: string, ms: number): string {
  const start = Date.parse(now);
  return new Date((Number.isFinite(start) ? start : 0) + timerDelayMs(ms)).toISOString();
}

/** Whether objects and arrays in `value` nest deeper than `maxDepth` (a scalar has depth 0). Iterative. */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  const stack: { readonly value: unknown; readonly depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const next = stack.pop() as { value: unknown; depth: number };
    if (typeof next.value !== 'object' || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > maxDepth) return true;
    for (const child of Object.values(next.value)) stack.push({ value: child, depth });
  }
  return false;
}

export type InputLimitCode = 'input.too_deep' | 'input.too_large';

/**
 * Why a caller-supplied JSON value is refused, or undefined when it is within bounds. Depth is
 * checked first, so the size check (JSON.stringify, recursive) only ever sees shallow values.
 */
export function inputLimitProblem(value: unknown, limits: { readonly maxDepth?: number; readonly maxBytes?: number } = {}): { readonly code: InputLimitCode; readonly message: string } | undefined {
  const maxDepth = limits.maxDepth ?? MAX_INPUT_DEPTH;
  const maxBytes = limits.maxBytes ?? MAX_INPUT_BYTES;
  if (nestsDeeperThan(value, maxDepth)) return { code: 'input.too_deep', message: `input nests deeper than ${maxDepth} levels` };
  const bytes = new TextEncoder().encode(JSON.stringify(value) ?? '').length;
  if (bytes > maxBytes) return { code: 'input.too_large', message: `input is ${bytes} bytes of JSON, more than ${maxBytes}` };
  return undefined;
}
