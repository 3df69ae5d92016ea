import type { PayloadValidator } from '@stageflow/checks';
import { validatePayload } from '@stageflow/runtime';

/** The catalog's io-schema compiler in the shape the checks take: one validator of payloads. */
export const catalogPayloadValidator: PayloadValidator = (schema, payload) => {
  const problem = validatePayload(schema, payload);
  return problem ? { valid: false, errors: [{ path: '', message: problem }] } : { valid: true, errors: [] };
};
