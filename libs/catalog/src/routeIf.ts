import { PREDICATE_OPS, type PredicateOp, type RoutePredicate } from '@stageflow/domain';
import { hasOwn, isPlainObject, type PlainObject } from './guards';
import { resolveFieldPath } from './schemaFieldPath';

export type PredicateParse = { readonly ok: true; readonly value: RoutePredicate } | { readonly ok: false; readonly message: string };

const MEMBERSHIP_OPS: readonly PredicateOp[] = ['in', 'not_in'];
const ORDER_OPS: readonly PredicateOp[] = ['gt', 'gte', 'lt', 'lte'];
const SCALAR_TYPES = ['string', 'number', 'integer', 'boolean'];

/** Parses an `if` node: exactly one of a leaf `{field, op, value}`, `{all}`, `{any}` or `{not}`. */
export function parsePredicate(raw: unknown): PredicateParse {
  if (!isPlainObject(raw)) return { ok: false, message: 'must be a predicate mapping' };
  const compositions = ['all', 'any', 'not'].filter((key) => hasOwn(raw, key));
  const leafKeys = ['field', 'op', 'value'].filter((key) => hasOwn(raw, key));
  if (compositions.length > 1 || (compositions.length === 1 && leafKeys.length > 0)) {
    return { ok: false, message: 'must be exactly one of { field, op, value }, { all }, { any } or { not }' };
  }
  const allowed = compositions.length === 1 ? compositions : ['field', 'op', 'value'];
  const unknown = Object.keys(raw).find((key) => !allowed.includes(key));
  if (unknown !== undefined) return { ok: false, message: `unknown key "${unknown}"` };
  const [composition] = compositions;
  if (composition === 'not') {
    const inner = parsePredicate(raw.not);
    return inner.ok ? { ok: true, value: { not: inner.value } } : inner;
  }
  if (composition === 'all' || composition === 'any') {
    const list = raw[composition];
    if (!Array.isArray(list) || list.length === 0) return { ok: false, message: `${composition} must be a non-empty list` };
    const children: RoutePredicate[] = [];
    for (const child of list) {
      const parsed = parsePredicate(child);
      if (!parsed.ok) return parsed;
      children.push(parsed.value);
    }
    return { ok: true, value: composition === 'all' ? { all: children } : { any: children } };
  }
  return parseLeaf(raw);
}

function parseLeaf(raw: PlainObject): PredicateParse {
  if (typeof raw.field !== 'string' || raw.field === '') return { ok: false, message: 'field must be a non-empty string' };
  if (typeof raw.op !== 'string' || !(PREDICATE_OPS as readonly string[]).includes(raw.op)) {
    return { ok: false, message: `unknown op ${JSON.stringify(raw.op)} (expected one of ${PREDICATE_OPS.join(', ')})` };
  }
  if (!hasOwn(raw, 'value')) return { ok: false, message: 'value is required' };
  const op = raw.op as PredicateOp;
  if (MEMBERSHIP_OPS.includes(op) && (!Array.isArray(raw.value) || raw.value.length === 0)) {
    return { ok: false, message: `${op} value must be a non-empty list` };
  }
  return { ok: true, value: { field: raw.field, op, value: raw.value } };
}

/**
 * Checks a parsed predicate against the source stage's expanded output schema: every field a path
 * of required non-array properties; ops type-strict. Returns the first problem, or undefined.
 */
export function predicateSchemaProblem(predicate: RoutePredicate, outputSchema: PlainObject): string | undefined {
  if ('all' in predicate) return firstProblem(predicate.all, outputSchema);
  if ('any' in predicate) return firstProblem(predicate.any, outputSchema);
  if ('not' in predicate) return predicateSchemaProblem(predicate.not, outputSchema);
  const resolved = resolveFieldPath(outputSchema, predicate.field);
  if (!resolved.ok) {
    switch (resolved.issue) {
      case 'array_index':
        return `field "${predicate.field}" goes through an array; array and index paths are not allowed`;
      case 'optional':
        return `field "${predicate.field}" must be required at every level of io.output.schema`;
      case 'unknown':
        return `field "${predicate.field}" is not a property of io.output.schema`;
      default: {
        const unreachable: never = resolved.issue;
        return String(unreachable);
      }
    }
  }
  const fieldType = resolved.type;
  if (ORDER_OPS.includes(predicate.op)) {
    return fieldType === 'number' || fieldType === 'integer' ? undefined : `op ${predicate.op} is only valid for number or integer fields, "${predicate.field}" is ${fieldType}`;
  }
  if (!SCALAR_TYPES.includes(fieldType)) {
    return `op ${predicate.op} is only valid for string, number, integer or boolean fields, "${predicate.field}" is ${fieldType}`;
  }
  const candidates = MEMBERSHIP_OPS.includes(predicate.op) ? (predicate.value as unknown[]) : [predicate.value];
  if (!candidates.every((value) => matchesScalarType(value, fieldType))) {
    return `value of op ${predicate.op} must be ${MEMBERSHIP_OPS.includes(predicate.op) ? 'a list of ' : ''}${fieldType} like field "${predicate.field}" (comparison is type-strict)`;
  }
  return undefined;
}

function firstProblem(children: readonly RoutePredicate[], schema: PlainObject): string | undefined {
  for (const child of children) {
    const problem = predicateSchemaProblem(child, schema);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function matchesScalarType(value: unknown, type: string): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    default:
      return false;
  }
}
