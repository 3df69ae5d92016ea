import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { compileIoSchema } from './compileIoSchema';
import { loadPipeline } from './loadPipeline';
import { loadStageFile } from './loadStageFile';
import { loadTaskFile } from './loadTaskFile';
import { ioSubsetMismatch } from './schemaSubset';
import { validateCommand } from './validateCommand';
import { MAX_YAML_BYTES, parseYamlText } from './yamlSource';

const FIXTURES = path.resolve(__dirname, '..', 'test', 'fixtures');
const PROJECT = path.join(FIXTURES, 'project');
const PIPELINES = path.join(PROJECT, 'pipelines');

describe('loadPipeline from disk', () => {
  it('loads uses: files, $refs, models and defaults into the resolved model', () => {
    const result = loadPipeline(path.join(PIPELINES, 'good.pipeline.yaml'), { projectRoot: PROJECT });
    expect(result.errors).toEqual([]);
    const [plan, implement, review] = result.pipeline?.stages ?? [];
    expect(plan).toMatchObject({ id: 'plan', model: 'test/pipeline-model', entry: true, io: { output: { schema: { required: ['steps'] } } } });
    expect(implement).toMatchObject({ model: 'test/stage-model', on_verify_fail: { include_failed_checks: true }, route: [{ to: 'review', if: { field: 'risk' } }, { to: 'done' }] });
    expect(implement.verify.map((item) => item.when)).toEqual([['emit'], ['after'], ['after'], ['after']]);
    expect(review.entry).toBe(false);
    expect(result.warnings.map((w) => w.code)).toEqual(['pipeline.model_applies']);
  });
  it('falls back to the model of stageflow.yaml', () => {
    expect(loadPipeline(path.join(PIPELINES, 'global-model.pipeline.yaml')).pipeline?.stages[0].model).toBe('test/global-model');
  });
  it('refuses a uses: path that leaves the project root', () => {
    expect(loadPipeline(path.join(PIPELINES, 'escape.pipeline.yaml'), { projectRoot: PROJECT }).errors.map((e) => e.code)).toEqual(['pipeline.uses_outside_project']);
  });
  it('turns an alias bomb into a typed issue', () => {
    const result = loadPipeline(path.join(PIPELINES, 'bad-alias.pipeline.yaml'));
    expect(result).toMatchObject({ ok: false, errors: [{ code: 'pipeline.invalid_yaml' }] });
  });
  it('turns missing files, binary bytes, huge files and malformed YAML into typed issues', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'catalog-'));
    const write = (name: string, content: string | Buffer) => {
      fs.writeFileSync(path.join(dir, name), content);
      return path.join(dir, name);
    };
    expect(loadPipeline(path.join(dir, 'none.pipeline.yaml')).errors[0].code).toBe('pipeline.load_error');
    expect(loadPipeline(write('bin.pipeline.yaml', Buffer.from([0xff, 0xfe, 0x00, 0x41]))).errors[0].code).toBe('pipeline.invalid_yaml');
    expect(loadPipeline(write('big.pipeline.yaml', `x: "${'a'.repeat(MAX_YAML_BYTES)}"\n`)).errors[0].code).toBe('pipeline.invalid_yaml');
    const malformed = loadPipeline(write('bad.pipeline.yaml', 'id: p\nstages: [\n'));
    expect(malformed.errors[0]).toMatchObject({ code: 'pipeline.invalid_yaml', line: expect.any(Number) });
    expect(loadPipeline(write('deep.pipeline.yaml', `x: ${'['.repeat(5000)}${']'.repeat(5000)}\n`)).errors[0].code).toBe('pipeline.invalid_yaml');
    expect(loadPipeline(write('scalar.pipeline.yaml', '42\n')).errors[0].code).toBe('pipeline.invalid_shape');
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('loadStageFile and loadTaskFile', () => {
  it('loads a stage file alone and refuses its unresolved $ref', () => {
    expect(loadStageFile(path.join(PIPELINES, 'stages', 'implement.yaml')).errors.map((e) => e.code)).toEqual(['stage.invalid_shape']);
    expect(loadStageFile(path.join(PIPELINES, 'stages', 'plan.yaml')).errors.map((e) => e.code)).toEqual(['stage.unresolved_schema_ref']);
  });
  it('checks the task input against entry stages', () => {
    const pipeline = loadPipeline(path.join(PIPELINES, 'good.pipeline.yaml'), { projectRoot: PROJECT }).pipeline!;
    expect(loadTaskFile(path.join(PIPELINES, 'good.task.yaml'), pipeline)).toMatchObject({ ok: true, task: { input: { goal: 'add a flag' } } });
    const bad = loadTaskFile(path.join(PIPELINES, 'bad.task.yaml'), pipeline);
    expect(bad.errors[0]).toMatchObject({ code: 'task.entry_input_unmet', stage_id: 'plan' });
    expect(bad.errors[0].message).toContain('input.goal must be string');
  });
});

describe('validateCommand', () => {
  it('prints JSON and exits 0 on a valid pipeline', () => {
    const out = validateCommand(path.join(PIPELINES, 'good.pipeline.yaml'), { json: true, strict: false });
    expect(out.exitCode).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ ok: true, errors: [], warnings: [{ code: 'pipeline.model_applies' }] });
  });
  it('prints file:line:column code message and exits 1 on an invalid one', () => {
    const out = validateCommand(path.join(PIPELINES, 'escape.pipeline.yaml'), { json: false, strict: true });
    expect(out.exitCode).toBe(1);
    expect(out.stdout).toMatch(/escape\.pipeline\.yaml:4:5 pipeline\.uses_outside_project /);
    expect(out.stdout).toContain('invalid (1 error');
  });
});

describe('io schemas', () => {
  it('compiles once and explains mismatches', () => {
    const compiled = compileIoSchema({ type: 'object', required: ['n'], properties: { n: { type: 'integer', nullable: true }, s: { type: 'string', pattern: '^a' } } });
    if (!compiled.ok) throw new Error(compiled.problems.join());
    expect(compiled.validate({ n: null })).toEqual([]);
    expect(compiled.validate({ n: 1.5, s: 'b' })).toEqual(['payload.n must be integer,null', 'payload.s must match pattern "^a"']);
    expect(compileIoSchema({ type: 'array', items: { type: 'string' } })).toMatchObject({ ok: false });
  });
  it.each([
    [{ type: 'number' }, { type: 'integer' }, undefined],
    [{ type: 'integer' }, { type: 'number' }, 'input expects integer'],
    [{ type: 'string', enum: ['a', 'b'] }, { type: 'string', enum: ['a'] }, undefined],
    [{ type: 'string', enum: ['a'] }, { type: 'string' }, 'unconstrained'],
    [{ type: 'string' }, { type: 'string', nullable: true }, 'nullable'],
    [{ type: 'array', items: { type: 'string' }, minItems: 1 }, { type: 'array', items: { type: 'string' } }, 'minItems'],
    [{ type: 'object', additionalProperties: false }, { type: 'object', properties: { x: { type: 'string' } }, additionalProperties: false }, '"x"'],
  ])('subset(%j ⊇ %j)', (consumer, producer, expected) => {
    const mismatch = ioSubsetMismatch(consumer, producer);
    if (expected === undefined) expect(mismatch).toBeUndefined();
    else expect(mismatch).toContain(expected);
  });
  it('parses text without a file', () => {
    expect(parseYamlText('a: 1\n')).toMatchObject({ ok: true, value: { a: 1 } });
  });
});
