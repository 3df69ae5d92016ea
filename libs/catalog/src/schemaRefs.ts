import { isPlainObject, type PlainObject } from './guards';

export const SCHEMA_REF_PREFIX = '#/schemas/';

export type RefExpansion =
  | { readonly ok: true; readonly schema: PlainObject }
  | { readonly ok: false; readonly reason: 'unresolved' | 'cycle' | 'malformed'; readonly message: string };

/** The name in `#/schemas/NAME`, or undefined when the ref has another form. */
export function schemaRefName(ref: unknown): string | undefined {
  if (typeof ref !== 'string' || !ref.startsWith(SCHEMA_REF_PREFIX)) return undefined;
  const name = ref.slice(SCHEMA_REF_PREFIX.length);
  return name === '' || name.includes('/') ? undefined : name;
}

/** `{ $ref: '#/schemas/NAME' }` and nothing else: the named-ref shape Clone Chains are built from. */
export function bareNamedRef(schema: unknown): string | undefined {
  if (!isPlainObject(schema)) return undefined;
  const keys = Object.keys(schema);
  if (keys.length !== 1 || keys[0] !== '$ref') return undefined;
  return schemaRefName(schema.$ref) === undefined ? undefined : (schema.$ref as string);
}

/**
 * Inlines every `$ref` (under `properties` and `items`, where the io subset allows schemas) from the
 * pipeline's `schemas:` map. Guarantees: terminates on any input (a ref met again on its own
 * expansion path is reported as a cycle); never mutates its inputs.
 */
export function expandSchemaRefs(schema: unknown, schemas: PlainObject | undefined): RefExpansion {
  try {
    return { ok: true, schema: expandNode(schema, schemas, [], 'schema') };
  } catch (error) {
    if (error instanceof ExpansionError) return { ok: false, reason: error.reason, message: error.message };
    throw error;
  }
}

class ExpansionError extends Error {
  constructor(
    readonly reason: 'unresolved' | 'cycle' | 'malformed',
    message: string,
  ) {
    super(message);
  }
}

function expandNode(node: unknown, schemas: PlainObject | undefined, stack: readonly string[], where: string): PlainObject {
  if (!isPlainObject(node)) throw new ExpansionError('malformed', `${where}: schema must be an object`);
  if (node.$ref !== undefined) {
    const name = schemaRefName(node.$ref);
    if (name === undefined) {
      throw new ExpansionError('malformed', `${where}: $ref must have the form #/schemas/<name>, got ${JSON.stringify(node.$ref)}`);
    }
    if (stack.includes(name)) {
      const chain = [...stack, name].map((item) => `${SCHEMA_REF_PREFIX}${item}`).join(' -> ');
      throw new ExpansionError('cycle', `${where}: $ref cycle ${chain}`);
    }
    const target = schemas !== undefined && Object.prototype.hasOwnProperty.call(schemas, name) ? schemas[name] : undefined;
    if (target === undefined) {
      throw new ExpansionError('unresolved', `${where}: unresolved $ref "${SCHEMA_REF_PREFIX}${name}" (no such entry in the pipeline's schemas:)`);
    }
    return expandNode(target, schemas, [...stack, name], where);
  }
  const copy: PlainObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' && isPlainObject(value)) {
      const properties: PlainObject = {};
      for (const [name, child] of Object.entries(value)) {
        properties[name] = expandNode(child, schemas, stack, `${where}.properties.${name}`);
      }
      copy.properties = properties;
    } else if (key === 'items') {
      copy.items = expandNode(value, schemas, stack, `${where}.items`);
    } else {
      copy[key] = value;
    }
  }
  return copy;
}
