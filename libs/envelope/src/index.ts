export { validateEmit, ENVELOPE_FIELDS, type EmitValidation } from './validate-emit';
export { runEmitChecks } from './emit-checks';
export type { EmitContext, ValidatePayload } from './types';
