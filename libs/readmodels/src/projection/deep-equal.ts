/**
 * Structural equality of JSON-like values, where a missing key equals a key holding `undefined`
 * (a fold that went through JSON and one that did not compare equal). Identical references
 * short-circuit, so comparing two folds that share untouched sub-trees is cheap.
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    return a.every((item, i) => deepEqual(item, b[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
  for (const key of keys) if (!deepEqual(x[key], y[key])) return false;
  return true;
}
