/**
 * Schema checks the deciders need but may not do themselves (the domain is pure): the catalog's
 * io-schema compiler, injected. One compiled validator per distinct schema, cached.
 */
import type { IoSchema, StageDefinition } from '@stageflow/domain';
import { compileIoSchema } from '@stageflow/catalog';

export const INPUT_VALIDATOR = Symbol('stageflow.input-validator');

export type InputValidator = (stage: StageDefinition, input: unknown) => string | null;
export type PayloadValidator = (schema: IoSchema, value: unknown) => string | null;

/** Compiled validators by schema text: a schema folded again from the log is not compiled again. */
const cache = new Map<string, (value: unknown) => string | null>();
const CACHE_SIZE = 1000;

export const validatePayload: PayloadValidator = (schema, value) => {
  const key = JSON.stringify(schema);
  let validate = cache.get(key);
  if (!validate) {
    const compiled = compileIoSchema(schema);
    validate = compiled.ok
      ? (v: unknown) => {
          const problems = compiled.validate(v);
          return problems.length ? problems.join('; ') : null;
        }
      : () => `io schema is invalid: ${compiled.problems.join('; ')}`;
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(key, validate);
  }
  return validate(value);
};

export const validateStageInput: InputValidator = (stage, input) => validatePayload(stage.io.input.schema, input);
