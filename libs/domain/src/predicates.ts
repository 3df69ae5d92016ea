/** Route `if` predicates, evaluated type-strictly against a succeeded source's payload. */
import type { RoutePredicate } from './pipeline';

export type PredicateResult = { readonly kind: 'hit' } | { readonly kind: 'miss' } | { readonly kind: 'missing_field'; readonly field: string };

const HIT: PredicateResult = { kind: 'hit' };
const MISS: PredicateResult = { kind: 'miss' };

function lookup(payload: unknown, field: string): { found: boolean; value?: unknown } {
  let current: unknown = payload;
  for (const part of field.split('.')) {
    if (current === null || typeof current !== 'object' || Array.isArray(current) || !(part in current)) {
      return { found: false };
    }
    current = (current as Record<string, unknown>)[part];
  }
  return { found: true, value: current };
}

const sameType = (a: unknown, b: unknown) =>
  typeof a === typeof b && (a === null) === (b === null) && Array.isArray(a) === Array.isArray(b);

function compare(op: string, actual: unknown, expected: unknown): boolean {
  switch (op) {
    case 'eq':
      return sameType(actual, expected) && actual === expected;
    case 'ne':
      return !(sameType(actual, expected) && actual === expected);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      if (typeof actual !== 'number' || typeof expected !== 'number') return false;
      if (op === 'gt') return actual > expected;
      if (op === 'gte') return actual >= expected;
      if (op === 'lt') return actual < expected;
      return actual <= expected;
    }
    case 'in':
      return Array.isArray(expected) && expected.some((e) => sameType(actual, e) && actual === e);
    case 'not_in':
      return Array.isArray(expected) && !expected.some((e) => sameType(actual, e) && actual === e);
    default:
      return false;
  }
}

export function evaluatePredicate(predicate: RoutePredicate, payload: unknown): PredicateResult {
  if ('all' in predicate) {
    for (const p of predicate.all) {
      const r = evaluatePredicate(p, payload);
      if (r.kind !== 'hit') return r;
    }
    return HIT;
  }
  if ('any' in predicate) {
    let result: PredicateResult = MISS;
    for (const p of predicate.any) {
      const r = evaluatePredicate(p, payload);
      if (r.kind === 'missing_field') return r;
      if (r.kind === 'hit') result = HIT;
    }
    return result;
  }
  if ('not' in predicate) {
    const r = evaluatePredicate(predicate.not, payload);
    if (r.kind === 'missing_field') return r;
    return r.kind === 'hit' ? MISS : HIT;
  }
  const { found, value } = lookup(payload, predicate.field);
  if (!found) return { kind: 'missing_field', field: predicate.field };
  return compare(predicate.op, value, predicate.value) ? HIT : MISS;
}
