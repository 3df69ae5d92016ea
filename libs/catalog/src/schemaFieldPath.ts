import { isPlainObject, isStringArray, type PlainObject } from './guards';

export type FieldPathResolution =
  | { readonly ok: true; readonly type: string }
  | { readonly ok: false; readonly issue: 'unknown' | 'optional' | 'array_index' };

/**
 * Walks a dot-separated field path through an expanded output schema. Every segment must be a
 * required property of an object node; array nodes and index segments are refused.
 */
export function resolveFieldPath(schema: PlainObject, field: string): FieldPathResolution {
  let node: PlainObject = schema;
  for (const segment of field.split('.')) {
    if (node.type === 'array' || /^\d+$/.test(segment)) return { ok: false, issue: 'array_index' };
    if (node.type !== 'object' || !isPlainObject(node.properties)) return { ok: false, issue: 'unknown' };
    const child = node.properties[segment];
    if (!Object.prototype.hasOwnProperty.call(node.properties, segment) || !isPlainObject(child)) return { ok: false, issue: 'unknown' };
    if (!(isStringArray(node.required) && node.required.includes(segment))) return { ok: false, issue: 'optional' };
    node = child;
  }
  return typeof node.type === 'string' ? { ok: true, type: node.type } : { ok: false, issue: 'unknown' };
}
