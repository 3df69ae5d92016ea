import { hasOwn, isPlainObject, isStringArray, type PlainObject } from './guards';
import { compileLinearPattern } from './linearRegExp';

export const IO_SCHEMA_TYPES = ['object', 'string', 'number', 'integer', 'boolean', 'array'] as const;

/**
 * Checks an expanded (ref-free) schema against the io subset of 001_*: root `type: object` and not
 * nullable; node types object|string|number|integer|boolean|array; the subset's keywords well
 * formed. Unknown keywords are ignored. Returns every problem found, each naming its schema path.
 */
export function ioSchemaProblems(schema: PlainObject): string[] {
  const problems: string[] = [];
  if (schema.type !== 'object') problems.push(`schema: root type must be object, got ${JSON.stringify(schema.type)}`);
  if (schema.nullable === true) problems.push('schema: root cannot be nullable');
  checkNode(schema, 'schema', problems);
  return problems;
}

function checkNode(node: unknown, where: string, problems: string[]): void {
  if (!isPlainObject(node)) {
    problems.push(`${where}: schema must be an object`);
    return;
  }
  const type = node.type;
  if (typeof type !== 'string' || !(IO_SCHEMA_TYPES as readonly string[]).includes(type)) {
    problems.push(`${where}: type must be one of ${IO_SCHEMA_TYPES.join(', ')}, got ${JSON.stringify(type)}`);
    return;
  }
  if (hasOwn(node, 'nullable') && typeof node.nullable !== 'boolean') problems.push(`${where}: nullable must be a boolean`);
  checkEnum(node, type, where, problems);
  switch (type as (typeof IO_SCHEMA_TYPES)[number]) {
    case 'object':
      checkObject(node, where, problems);
      return;
    case 'array':
      if (!hasOwn(node, 'items')) problems.push(`${where}: array requires items`);
      else checkNode(node.items, `${where}.items`, problems);
      checkNonNegativeInt(node, 'minItems', where, problems);
      checkNonNegativeInt(node, 'maxItems', where, problems);
      checkOrdered(node, 'minItems', 'maxItems', where, problems);
      return;
    case 'string':
      if (hasOwn(node, 'pattern')) checkPattern(node.pattern, where, problems);
      checkNonNegativeInt(node, 'minLength', where, problems);
      checkNonNegativeInt(node, 'maxLength', where, problems);
      checkOrdered(node, 'minLength', 'maxLength', where, problems);
      return;
    case 'number':
    case 'integer':
      for (const bound of ['minimum', 'maximum']) {
        if (hasOwn(node, bound) && (typeof node[bound] !== 'number' || !Number.isFinite(node[bound]))) {
          problems.push(`${where}: ${bound} must be a number`);
        }
      }
      return;
    case 'boolean':
      return;
    default: {
      const unreachable: never = type as never;
      throw new Error(`unhandled io schema type ${String(unreachable)}`);
    }
  }
}

function checkObject(node: PlainObject, where: string, problems: string[]): void {
  if (hasOwn(node, 'properties')) {
    if (!isPlainObject(node.properties)) problems.push(`${where}: properties must be an object`);
    else for (const [name, child] of Object.entries(node.properties)) checkNode(child, `${where}.properties.${name}`, problems);
  }
  if (hasOwn(node, 'required') && !isStringArray(node.required)) problems.push(`${where}: required must be an array of strings`);
  if (hasOwn(node, 'additionalProperties') && typeof node.additionalProperties !== 'boolean') {
    problems.push(`${where}: additionalProperties must be a boolean`);
  }
}

function checkEnum(node: PlainObject, type: string, where: string, problems: string[]): void {
  if (!hasOwn(node, 'enum') || (type !== 'string' && type !== 'integer')) return;
  const values = node.enum;
  if (!Array.isArray(values) || values.length === 0) {
    problems.push(`${where}: enum must be a non-empty array`);
  } else if (type === 'string' && !values.every((v) => typeof v === 'string')) {
    problems.push(`${where}: enum values must be strings`);
  } else if (type === 'integer' && !values.every((v) => typeof v === 'number' && Number.isInteger(v))) {
    problems.push(`${where}: enum values must be integers`);
  }
}

function checkPattern(pattern: unknown, where: string, problems: string[]): void {
  if (typeof pattern !== 'string') {
    problems.push(`${where}: pattern must be a string`);
    return;
  }
  const compiled = compileLinearPattern(pattern);
  if (!compiled.ok) problems.push(`${where}: pattern cannot run on the linear-time engine (RE2: no lookaround, no backreferences): ${compiled.problem}`);
}

function checkNonNegativeInt(node: PlainObject, keyword: string, where: string, problems: string[]): void {
  if (!hasOwn(node, keyword)) return;
  const value = node[keyword];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    problems.push(`${where}: ${keyword} must be a non-negative integer`);
  }
}

function checkOrdered(node: PlainObject, low: string, high: string, where: string, problems: string[]): void {
  const min = node[low];
  const max = node[high];
  if (typeof min === 'number' && typeof max === 'number' && min > max) problems.push(`${where}: ${low} must be <= ${high}`);
}
