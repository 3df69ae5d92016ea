import type { PipelineDefinition } from '@stageflow/domain';
import { UsageError } from '../output';
import { resolveInput } from '../run-request';

const pipeline: PipelineDefinition = {
  id: 'p',
  stages: [{ id: 'a', system_prompt: 'x', model: 'm', io: { input: { schema: { type: 'object' } }, output: { schema: { type: 'object' } } }, verify: [], gate_kinds: [], entry: true, route: [], replay_safe: true }],
};

describe('sf run --input past the input bounds', () => {
  it('refuses an input nested 8,000 levels deep with a usage error naming the rule', () => {
    const deep = `${'{"a":'.repeat(8000)}1${'}'.repeat(8000)}`;
    expect(() => resolveInput(pipeline, { input: deep })).toThrow(UsageError);
    expect(() => resolveInput(pipeline, { input: deep })).toThrow(/--input: input nests deeper than 64 levels \(input\.too_deep\)/);
  });

  it('refuses an input over 1 MiB', () => {
    expect(() => resolveInput(pipeline, { input: JSON.stringify({ t: 'x'.repeat(1024 * 1024) }) })).toThrow(/input\.too_large/);
  });

  it('takes an input within the bounds', () => {
    expect(resolveInput(pipeline, { input: '{"a":{"b":[1,2]}}' })).toEqual({ a: { b: [1, 2] } });
  });
});
