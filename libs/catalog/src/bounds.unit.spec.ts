import { validateText } from '../test/validateText';
import { compileIoSchema } from './compileIoSchema';
import { maxTimeoutMs } from './timeouts';
import { MAX_YAML_BYTES, parseYamlText } from './yamlSource';

const IO = `    io:
      input: { schema: { type: object } }
      output: { schema: { type: object } }`;

function oneStage(extra: string, io = IO): string {
  return `id: p\nstages:\n  - id: a\n    system_prompt: Work.\n    model: m\n${io}\n${extra}`;
}

const withPattern = (pattern: string) =>
  `    io:\n      input: { schema: { type: object } }\n      output: { schema: { type: object, properties: { s: { type: string, pattern: ${JSON.stringify(pattern)} } } } }`;

describe('timeouts a timer can hold', () => {
  afterEach(() => {
    delete process.env.SF_MAX_TIMEOUT_MS;
  });

  it.each([
    ['20 digits', '99999999999999999999'],
    ['30 days (over 2^31 ms)', '2592000000'],
    ['one ms over 24 h', String(24 * 3600 * 1000 + 1)],
    ['a fraction', '1.5'],
    ['a negative number', '-1'],
  ])('refuses a stage timeout_ms of %s, naming file, path and rule', (_name, value) => {
    const issue = validateText(oneStage(`    timeout_ms: ${value}\n`)).errors.find((e) => e.code === 'stage.invalid_timeout_ms');
    expect(issue).toMatchObject({ path: 'stages[0].timeout_ms', stage_id: 'a' });
    expect(issue?.file).toEqual(expect.any(String));
    expect(issue?.message).toMatch(/timeout_ms must be (a positive integer|at most 86400000 ms)/);
  });

  it('accepts 24 h exactly', () => {
    expect(validateText(oneStage(`    timeout_ms: ${24 * 3600 * 1000}\n`)).errors).toEqual([]);
  });

  it('refuses a command check timeout_ms past the bound', () => {
    const text = oneStage('    verify:\n      - { id: t, type: command, run: "true", timeout_ms: 2592000000 }\n');
    const issue = validateText(text).errors[0];
    expect(issue).toMatchObject({ code: 'pipeline.invalid_verify', path: 'stages[0].verify[0].timeout_ms' });
    expect(issue.message).toContain('at most 86400000 ms');
  });

  it('takes a larger bound from SF_MAX_TIMEOUT_MS, never one a timer cannot hold', () => {
    process.env.SF_MAX_TIMEOUT_MS = String(7 * 24 * 3600 * 1000);
    expect(validateText(oneStage(`    timeout_ms: ${3 * 24 * 3600 * 1000}\n`)).errors).toEqual([]);
    expect(maxTimeoutMs({ SF_MAX_TIMEOUT_MS: '2592000000' })).toBe(24 * 3600 * 1000);
    expect(maxTimeoutMs({ SF_MAX_TIMEOUT_MS: 'soon' })).toBe(24 * 3600 * 1000);
  });
});

describe('schema patterns on a linear-time engine', () => {
  it('answers ^(a+)+$ on 31+ characters correctly (RE2 does not backtrack)', () => {
    const compiled = compileIoSchema({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } });
    if (!compiled.ok) throw new Error(compiled.problems.join('; '));
    expect(compiled.validate({ s: `${'a'.repeat(40)}b` })).toEqual(['payload.s must match pattern "^(a+)+$"']);
    expect(compiled.validate({ s: 'a'.repeat(40) })).toEqual([]);
  });

  it('keeps patterns apart and searches (unanchored) like JSON Schema', () => {
    const compiled = compileIoSchema({ type: 'object', properties: { x: { type: 'string', pattern: '\\d{3}' }, y: { type: 'string', pattern: '^\\u00e9$' } } });
    if (!compiled.ok) throw new Error(compiled.problems.join('; '));
    expect(compiled.validate({ x: 'ab123', y: 'é' })).toEqual([]);
    expect(compiled.validate({ x: 'ab12', y: 'e' })).toHaveLength(2);
  });

  it.each([
    ['a lookahead', '^(?=a)a$'],
    ['a backreference', '^(a)\\1$'],
  ])('refuses %s at load, naming the stage file path', (_name, pattern) => {
    const issue = validateText(oneStage('', withPattern(pattern))).errors[0];
    expect(issue).toMatchObject({ code: 'stage.invalid_payload_schema', path: 'stages[0].io.output.schema' });
    expect(issue.message).toContain('linear-time engine');
    expect(compileIoSchema({ type: 'object', properties: { s: { type: 'string', pattern } } })).toMatchObject({ ok: false });
  });
});

describe('YAML documents', () => {
  it('refuses flow nesting 10,000 levels deep before the parser recurses', () => {
    expect(parseYamlText(`a: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`)).toMatchObject({ ok: false, message: expect.stringMatching(/nesting is deeper than 64/) });
  });

  it('refuses block nesting past the depth bound', () => {
    const text = Array.from({ length: 100 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' 1\n';
    expect(parseYamlText(text)).toMatchObject({ ok: false, message: expect.stringMatching(/nesting is deeper than 64/) });
  });

  it('refuses a document over the size bound', () => {
    expect(parseYamlText(`a: "${'x'.repeat(MAX_YAML_BYTES)}"\n`)).toMatchObject({ ok: false, message: expect.stringMatching(/larger than/) });
  });
});
