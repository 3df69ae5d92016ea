import type { IoSchema } from '@stageflow/domain';
import { validatePayload } from './validation';

/** The validator the agent-runner (emit), the envelope checks and the verifier (payload_schema) all use. */
describe('validatePayload: schema patterns on the linear-time engine', () => {
  const schema = (pattern: string) => ({ type: 'object', properties: { s: { type: 'string', pattern } } }) as unknown as IoSchema;

  it('answers ^(a+)+$ against 41 characters correctly', () => {
    expect(validatePayload(schema('^(a+)+$'), { s: `${'a'.repeat(40)}b` })).toBe('payload.s must match pattern "^(a+)+$"');
    expect(validatePayload(schema('^(a+)+$'), { s: 'a'.repeat(40) })).toBeNull();
  });

  it('reports a lookahead schema as invalid instead of running it', () => {
    expect(validatePayload(schema('^(?=a)a$'), { s: 'a' })).toMatch(/^io schema is invalid: .*linear-time engine/);
  });
});
