/** Test support: a minimal resolved StageDefinition with overrides. Not used by production code. */
import type { StageDefinition } from '@stageflow/domain';

export function makeStage(overrides: Partial<StageDefinition> = {}): StageDefinition {
  return {
    id: 'plan',
    system_prompt: 'Plan the work.',
    model: 'openai/gpt-test',
    io: {
      input: { schema: { type: 'object' } },
      output: { schema: { type: 'object', required: ['steps'], properties: { steps: { type: 'array' } } } },
    },
    verify: [],
    gate_kinds: [],
    entry: true,
    route: [],
    replay_safe: true,
    ...overrides,
  };
}

/** A stand-in for the catalog's validator: checks `required` only, enough for these tests. */
export function requiredOnly(schema: { readonly [k: string]: unknown }, value: unknown): string | null {
  const required = (schema.required as string[] | undefined) ?? [];
  const obj = value as Record<string, unknown>;
  const missing = required.filter((k) => !(k in obj));
  return missing.length ? `/ is missing required property ${missing.join(', ')}` : null;
}
