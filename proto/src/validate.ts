/**
 * Validation at the boundaries: events before they are appended, run requests as they arrive on
 * `sf.cmd.run.request`. Both return `null` when the value conforms to the committed schema, or one
 * readable line naming the schema, the JSON pointer of the offending value, and the rule.
 * Schemas are compiled once, on first use.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { createAjv, SCHEMA_BASE_ID } from './registry';

interface Validators {
  /** Event `type` → validator of that event's schema. */
  readonly events: ReadonlyMap<string, ValidateFunction>;
  readonly runRequest: ValidateFunction;
}

let compiled: Validators | undefined;

function validators(): Validators {
  if (compiled) return compiled;
  const ajv = createAjv();
  const union = ajv.getSchema(`${SCHEMA_BASE_ID}RunEvent.schema.json`)?.schema as {
    oneOf: { $ref: string }[];
  };
  const events = new Map<string, ValidateFunction>();
  for (const { $ref } of union.oneOf) {
    const type = $ref.replace(/^events\//, '').replace(/\.schema\.json$/, '');
    events.set(type, ajv.getSchema(`${SCHEMA_BASE_ID}${$ref}`)!);
  }
  const runRequest = ajv.getSchema(`${SCHEMA_BASE_ID}commands/RunRequestCommand.schema.json`)!;
  compiled = { events, runRequest };
  return compiled;
}

/** `null` when `event` is a valid `RunEvent` of a known `type`; otherwise why not. */
export function validateEvent(event: unknown): string | null {
  const { events } = validators();
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    return 'RunEvent /: must be an object';
  }
  const type = (event as { type?: unknown }).type;
  const validate = typeof type === 'string' ? events.get(type) : undefined;
  if (!validate) {
    return `RunEvent /type: must be one of ${[...events.keys()].join(', ')} (got ${JSON.stringify(type)})`;
  }
  return validate(event) ? null : describe(type, validate.errors ?? []);
}

/** `null` when `cmd` is a valid `RunRequestCommand`; otherwise why not. */
export function validateRunRequest(cmd: unknown): string | null {
  const { runRequest } = validators();
  return runRequest(cmd) ? null : describe('RunRequestCommand', runRequest.errors ?? []);
}

/**
 * One line for the most specific error: the deepest instance path wins, so a failed union
 * (`anyOf`) reports what was wrong inside the closest branch rather than "must match a schema".
 */
function describe(schema: string, errors: readonly ErrorObject[]): string {
  if (errors.length === 0) return `${schema} /: invalid`;
  const depth = (e: ErrorObject) =>
    (e.instancePath === '' ? 0 : e.instancePath.split('/').length - 1) +
    (e.keyword === 'required' || e.keyword === 'additionalProperties' ? 1 : 0);
  const best = errors.reduce((a, b) => (depth(b) > depth(a) ? b : a));
  const params = best.params as Record<string, unknown>;
  switch (best.keyword) {
    case 'required':
      return `${schema} ${best.instancePath}/${String(params.missingProperty)}: is required`;
    case 'additionalProperties':
      return `${schema} ${best.instancePath}/${String(params.additionalProperty)}: is not allowed here`;
    case 'enum':
      return `${schema} ${best.instancePath || '/'}: must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${schema} ${best.instancePath || '/'}: must be ${JSON.stringify(params.allowedValue)}`;
    default:
      return `${schema} ${best.instancePath || '/'}: ${best.message ?? best.keyword}`;
  }
}
