import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { isPlainObject, type PlainObject } from './guards';
import { ioSchemaProblems } from './ioSchemaShape';
import { linearRegExp } from './linearRegExp';

/** Checks one value; an empty list means the value conforms. */
export type IoValidator = (value: unknown) => string[];

export type CompiledIoSchema =
  | { readonly ok: true; readonly validate: IoValidator }
  | { readonly ok: false; readonly problems: readonly string[] };

/** Patterns run on RE2 (linearRegExp): validation time is linear in the payload. */
const ajv = new Ajv({ allErrors: true, strict: false, unicodeRegExp: true, code: { regExp: linearRegExp } });

/**
 * Compiles an io schema (refs already inlined, as in a resolved StageDefinition) once into a
 * validator. Only the io subset's keywords take effect; unknown keywords are dropped, `nullable`
 * becomes a union with null. Messages read like `payload.items[0].title must be string`.
 */
export function compileIoSchema(schema: unknown): CompiledIoSchema {
  if (!isPlainObject(schema)) return { ok: false, problems: ['schema: must be an object'] };
  const problems = ioSchemaProblems(schema);
  if (problems.length > 0) return { ok: false, problems };
  let validateFn: ValidateFunction;
  try {
    validateFn = ajv.compile(toJsonSchema(schema));
  } catch (error) {
    return { ok: false, problems: [`schema: ${error instanceof Error ? error.message : String(error)}`] };
  }
  return {
    ok: true,
    validate: (value) => (validateFn(value) ? [] : (validateFn.errors ?? []).map(describeError)),
  };
}

const COPIED_KEYWORDS: Readonly<Record<string, readonly string[]>> = {
  object: ['required', 'additionalProperties'],
  array: ['minItems', 'maxItems'],
  string: ['enum', 'pattern', 'minLength', 'maxLength'],
  integer: ['enum', 'minimum', 'maximum'],
  number: ['minimum', 'maximum'],
  boolean: [],
};

function toJsonSchema(node: PlainObject): PlainObject {
  const type = node.type as string;
  const out: PlainObject = { type: node.nullable === true ? [type, 'null'] : type };
  for (const keyword of COPIED_KEYWORDS[type] ?? []) {
    if (node[keyword] !== undefined) out[keyword] = node[keyword];
  }
  if (Array.isArray(out.enum) && node.nullable === true) out.enum = [...out.enum, null];
  if (type === 'object' && isPlainObject(node.properties)) {
    const properties: PlainObject = {};
    for (const [name, child] of Object.entries(node.properties)) properties[name] = toJsonSchema(child as PlainObject);
    out.properties = properties;
  }
  if (type === 'array' && isPlainObject(node.items)) out.items = toJsonSchema(node.items);
  return out;
}

function describeError(error: ErrorObject): string {
  const where = error.instancePath
    .split('/')
    .slice(1)
    .map((segment) => (/^\d+$/.test(segment) ? `[${segment}]` : `.${segment.replace(/~1/g, '/').replace(/~0/g, '~')}`))
    .join('');
  return `payload${where} ${error.message ?? 'is invalid'}`;
}
