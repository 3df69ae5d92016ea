/**
 * Validation at the boundaries: events before they are appended, run requests as they arrive on
 * `sf.cmd.run.request`. Both return `null` when the value conforms to the committed schema, or one
 * readable line naming the schema, the JSON pointer of the offending value, and the rule.
 * Schemas are compiled once, on first use.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type Ajv2020 from 'ajv/dist/2020';
import { createAjv, loadSchemas, SCHEMA_BASE_ID } from './registry';

interface Validators {
  /** Event `type` → that event's schema `$id`; the members of the committed `RunEvent` union. */
  readonly eventIds: ReadonlyMap<string, string>;
  readonly ajv: Ajv2020;
}

const RUN_REQUEST_ID = `${SCHEMA_BASE_ID}commands/RunRequestCommand.schema.json`;
const cache: { fast?: Validators; thorough?: Validators } = {};

/**
 * `fast` stops at the first error (the happy path); `thorough` collects all errors and runs only
 * on values already known to be invalid, so the message can come from the right union branch.
 * Each schema is compiled on its first use and kept (Ajv caches by `$id`).
 */
function validators(mode: 'fast' | 'thorough'): Validators {
  const hit = cache[mode];
  if (hit) return hit;
  const schemas = loadSchemas();
  const union = schemas.get('RunEvent.schema.json') as unknown as { oneOf: { $ref: string }[] };
  const eventIds = new Map(
    union.oneOf.map(({ $ref }) => [$ref.replace(/^events\//, '').replace(/\.schema\.json$/, ''), `${SCHEMA_BASE_ID}${$ref}`]),
  );
  return (cache[mode] = { eventIds, ajv: createAjv(schemas, { allErrors: mode === 'thorough' }) });
}

function check(mode: 'fast' | 'thorough', id: string, value: unknown): ValidateFunction {
  const validate = validators(mode).ajv.getSchema(id)!;
  validate(value);
  return validate;
}

/** `null` when `event` is a valid `RunEvent` of a known `type`; otherwise why not. */
export function validateEvent(event: unknown): string | null {
  const { eventIds } = validators('fast');
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    return 'RunEvent /: must be an object';
  }
  const type = (event as { type?: unknown }).type;
  const id = typeof type === 'string' ? eventIds.get(type) : undefined;
  if (!id) {
    return `RunEvent /type: must be one of ${[...eventIds.keys()].join(', ')} (got ${JSON.stringify(type)})`;
  }
  if (!check('fast', id, event).errors) return null;
  return describe(type as string, check('thorough', id, event).errors ?? []);
}

/** `null` when `cmd` is a valid `RunRequestCommand`; otherwise why not. */
export function validateRunRequest(cmd: unknown): string | null {
  if (!check('fast', RUN_REQUEST_ID, cmd).errors) return null;
  return describe('RunRequestCommand', check('thorough', RUN_REQUEST_ID, cmd).errors ?? []);
}

/** Where an error sits: instance depth, counting a named missing/unknown property as one deeper. */
const depth = (e: ErrorObject): number =>
  (e.instancePath === '' ? 0 : e.instancePath.split('/').length - 1) +
  (e.keyword === 'required' || e.keyword === 'additionalProperties' ? 1 : 0);

/** The union branch (`…/anyOf/N/`) an error was raised in, or null outside unions. */
const branchOf = (e: ErrorObject): string | null =>
  /^(.*\/(?:anyOf|oneOf)\/\d+\/)/.exec(e.schemaPath)?.[1] ?? null;

const parentOf = (pointer: string): string => pointer.slice(0, pointer.lastIndexOf('/'));

/**
 * One line for the most specific error. A union branch whose discriminator (a `const` property)
 * does not match is the wrong branch, and its errors are dropped; of the rest, the deepest
 * instance path wins. When every branch is wrong, the discriminator's allowed values are listed.
 */
function describe(schema: string, errors: readonly ErrorObject[]): string {
  if (errors.length === 0) return `${schema} /: invalid`;
  const mismatches = errors.filter((e) => e.keyword === 'const' && e.instancePath !== '' && branchOf(e));
  const wrongBranch = (e: ErrorObject) =>
    mismatches.some(
      (m) => e.schemaPath.startsWith(branchOf(m)!) && e.instancePath.startsWith(parentOf(m.instancePath)),
    );
  const kept = errors.filter((e) => !wrongBranch(e) && e.keyword !== 'anyOf' && e.keyword !== 'oneOf');
  if (kept.length === 0 && mismatches.length > 0) {
    const at = mismatches.reduce((a, b) => (depth(b) > depth(a) ? b : a)).instancePath;
    const allowed = mismatches
      .filter((m) => m.instancePath === at)
      .map((m) => JSON.stringify((m.params as { allowedValue: unknown }).allowedValue));
    return `${schema} ${at}: must be one of ${[...new Set(allowed)].join(', ')}`;
  }
  const best = (kept.length > 0 ? kept : errors).reduce((a, b) => (depth(b) > depth(a) ? b : a));
  const params = best.params as Record<string, unknown>;
  const at = best.instancePath || '/';
  switch (best.keyword) {
    case 'required':
      return `${schema} ${best.instancePath}/${String(params.missingProperty)}: is required`;
    case 'additionalProperties':
      return `${schema} ${best.instancePath}/${String(params.additionalProperty)}: is not allowed here`;
    case 'enum':
      return `${schema} ${at}: must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${schema} ${at}: must be ${JSON.stringify(params.allowedValue)}`;
    default:
      return `${schema} ${at}: ${best.message ?? best.keyword}`;
  }
}
