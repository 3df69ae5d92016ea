/** `payload_schema`: the captured payload re-validated against io.output.schema by the catalog's validator. */
import type { PayloadSchemaCheck } from '../domain';
import { CheckCannotRunError } from '../errors';
import type { AfterCheckContext } from '../types';
import type { CheckOutcome } from './outcome';

export function runPayloadSchemaCheck(_item: PayloadSchemaCheck, ctx: AfterCheckContext): CheckOutcome {
  if (ctx.validatePayload === undefined) throw new CheckCannotRunError('no payload validator configured');
  const result = ctx.validatePayload(ctx.outputSchema, ctx.envelope.payload);
  const evidence = { payload_present: ctx.envelope.payload !== undefined, errors: result.errors };
  if (result.valid) return { status: 'passed', evidence };
  const first = result.errors[0];
  const detail = first === undefined ? 'payload does not match io.output.schema' : `${first.path || '/'}: ${first.message}`;
  return { status: 'failed', message: `payload does not match io.output.schema (${detail})`, evidence };
}
