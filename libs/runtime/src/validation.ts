/**
 * Schema checks the deciders need but may not do themselves (the domain is pure): the catalog's
 * io-schema compiler, injected. One compiled validator per schema object, cached.
 */
import type { IoSchema, StageDefinition } from '@stageflow/domain';
import { compileIoSchema } from '@stageflow/catalog';

export const INPUT_VALIDATOR = Symbol('stageflow.input-validator');

export type InputValidator = (stage: StageDefinition, input: unknown) => string | null;
export type PayloadValidator = (schema: IoSchema, value: unknown) => string | null;

const cache = new WeakMap<object, (value: unknown) => string | null>();

export const validatePayload: PayloadValidator = (schema, value) => {
  let validate = cache.get(schema);
  if (!validate) {
    const compiled = compileIoSchema(schema);
    validate = compiled.ok
      ? (v: unknown) => {
          const problems = compiled.validate(v);
          return problems.length ? problems.join('; ') : null;
        }
      : () => `io schema is invalid: ${compiled.problems.join('; ')}`;
    cache.set(schema, validate);
  }
  return validate(value);
};

export const validateStageInput: InputValidator = (stage, input) => validatePayload(stage.io.input.schema, input);
