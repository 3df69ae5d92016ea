import * as fs from 'node:fs';
import * as path from 'node:path';
import { goodEmit, makeHost, makeStage, tempRun, type TempRun } from '../testing/fixtures';

let run: TempRun;
beforeEach(() => {
  run = tempRun();
});
afterEach(() => run.cleanup());

const artifactsDir = () => path.join(run.runDir, 'stages/build/attempts/1/artifacts');

describe('write_stage_artifact', () => {
  it('writes inside the attempt artifact directory and returns the run-relative path', async () => {
    const host = makeHost(run);
    const result = await host.call('write_stage_artifact', { path: 'sub/report.md', content: '# hi' });
    expect(result).toEqual({ isError: false, content: JSON.stringify({ path: 'stages/build/attempts/1/artifacts/sub/report.md' }) });
    expect(fs.readFileSync(path.join(artifactsDir(), 'sub/report.md'), 'utf8')).toBe('# hi');
  });

  it.each([
    ['absolute', '/tmp/evil.md', /must be relative/],
    ['dot-dot', '../../../../escape.md', /'\.\.'/],
    ['dot-dot in the middle', 'a/../../b.md', /'\.\.'/],
    ['NUL', 'a\0b.md', /NUL/],
    ['backslash', '..\\evil.md', /'\/' separators/],
    ['empty', '', /must name a file/],
    ['only dots', './.', /must name a file/],
    ['not a string', 42, /must be a string/],
  ])('refuses %s paths', async (_n, p, message) => {
    const result = await makeHost(run).call('write_stage_artifact', { path: p, content: 'x' });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(message);
    expect(fs.readdirSync(run.root).sort()).toEqual(['checkout', 'run']);
  });

  it('refuses a symlinked directory component', async () => {
    fs.mkdirSync(artifactsDir(), { recursive: true });
    fs.symlinkSync(run.checkout, path.join(artifactsDir(), 'link'));
    const result = await makeHost(run).call('write_stage_artifact', { path: 'link/x.md', content: 'x' });
    expect(result.content).toMatch(/component link is a symlink/);
    expect(fs.existsSync(path.join(run.checkout, 'x.md'))).toBe(false);
  });

  it('refuses a symlinked final file', async () => {
    fs.mkdirSync(artifactsDir(), { recursive: true });
    const outside = path.join(run.root, 'outside.txt');
    fs.writeFileSync(outside, 'keep');
    fs.symlinkSync(outside, path.join(artifactsDir(), 'report.md'));
    const result = await makeHost(run).call('write_stage_artifact', { path: 'report.md', content: 'overwritten' });
    expect(result.content).toMatch(/symlink/);
    expect(fs.readFileSync(outside, 'utf8')).toBe('keep');
  });

  it('refuses when the attempt directory itself is reached through a symlink', async () => {
    fs.mkdirSync(path.join(run.runDir, 'stages'), { recursive: true });
    fs.symlinkSync(run.checkout, path.join(run.runDir, 'stages/build'));
    const result = await makeHost(run).call('write_stage_artifact', { path: 'a.md', content: 'x' });
    expect(result.content).toMatch(/through a symlink/);
  });
});

describe('checkout tools', () => {
  it('write_file / read_file / list_files round trip inside the checkout', async () => {
    const host = makeHost(run);
    expect((await host.call('write_file', { path: 'src/a.txt', content: 'A' })).isError).toBe(false);
    const read = await host.call('read_file', { path: 'src/a.txt' });
    expect(JSON.parse(read.content)).toMatchObject({ content: 'A', truncated: false });
    const list = await host.call('list_files', { recursive: true });
    expect(JSON.parse(list.content).entries).toEqual(['src/', 'src/a.txt']);
  });

  it.each([
    ['read_file', { path: '../run/x' }, /'\.\.'/],
    ['read_file', { path: '/etc/passwd' }, /must be relative/],
    ['write_file', { path: '../escape.txt', content: 'x' }, /'\.\.'/],
    ['write_file', { path: '.git/config', content: 'x' }, /\.git/],
    ['list_files', { path: '..' }, /'\.\.'/],
    ['run_command', { command: 'pwd', cwd: '../run' }, /'\.\.'/],
  ])('%s refuses %j', async (tool, args, message) => {
    const result = await makeHost(run).call(tool, args);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(message);
  });

  it('refuses reads and writes through symlinks that leave the checkout', async () => {
    const outside = path.join(run.root, 'secret.txt');
    fs.writeFileSync(outside, 'secret');
    fs.symlinkSync(outside, path.join(run.checkout, 'leak.txt'));
    fs.symlinkSync(run.root, path.join(run.checkout, 'up'));
    const host = makeHost(run);
    expect((await host.call('read_file', { path: 'leak.txt' })).content).toMatch(/outside the checkout/);
    expect((await host.call('write_file', { path: 'leak.txt', content: 'x' })).content).toMatch(/outside the checkout/);
    expect((await host.call('write_file', { path: 'up/new.txt', content: 'x' })).content).toMatch(/outside the checkout/);
    expect((await host.call('read_file', { path: 'up/secret.txt' })).content).toMatch(/outside the checkout/);
    expect(fs.readFileSync(outside, 'utf8')).toBe('secret');
    expect(fs.existsSync(path.join(run.root, 'new.txt'))).toBe(false);
  });

  it('coding tools are not offered without a checkout', async () => {
    const host = makeHost(run, { checkout: undefined });
    expect(host.tools().map((t) => t.name)).toEqual(['emit_stage_envelope', 'write_stage_artifact']);
    expect((await host.call('read_file', { path: 'a' })).content).toMatch(/unknown tool read_file/);
  });
});

describe('emit_stage_envelope', () => {
  it('soft-rejects, records the rejection, then accepts once', async () => {
    const rejected: string[] = [];
    const host = makeHost(run, { onRejected: (r) => void rejected.push(r) });
    const bad = await host.call('emit_stage_envelope', { status: 'success', summary: 'x', artifacts: [] });
    expect(bad.isError).toBe(true);
    expect(rejected).toEqual([expect.stringMatching(/payload is required/)]);
    expect(host.lastRejection).toMatch(/payload is required/);
    expect(host.accepted).toBeUndefined();
    expect((await host.call('emit_stage_envelope', JSON.stringify(goodEmit))).isError).toBe(false);
    expect(host.accepted).toEqual(goodEmit);
    const later = await host.call('emit_stage_envelope', { ...goodEmit, summary: 'other' });
    expect(later.content).toMatch(/already accepted/);
    expect(host.accepted?.summary).toBe('done');
  });

  it('rejects on a failing emit-phase check', async () => {
    const stage = makeStage({ verify: [{ id: 'plan-present', type: 'artifact', basename: 'plan.md', when: ['emit'] }] });
    const host = makeHost(run, { stage });
    const result = await host.call('emit_stage_envelope', goodEmit);
    expect(result.content).toMatch(/emit-phase check plan-present failed/);
    expect(host.accepted).toBeUndefined();
  });
});

describe('ask_operator', () => {
  const gated = makeStage({ gate_kinds: ['confirm', 'artifact_backed', 'multi_question'] });

  it('is offered only with gate_kinds, with only those kinds', async () => {
    expect(makeHost(run).tools().some((t) => t.name === 'ask_operator')).toBe(false);
    const spec = makeHost(run, { stage: gated }).tools().find((t) => t.name === 'ask_operator')!;
    expect((spec.inputSchema.properties as { kind: { enum: string[] } }).kind.enum).toEqual(['confirm', 'artifact_backed', 'multi_question']);
    const result = await makeHost(run, { stage: gated }).call('ask_operator', { kind: 'free_text', question: 'q' });
    expect(result.content).toMatch(/kind must be one of this stage's gate_kinds: confirm, artifact_backed, multi_question/);
  });

  it.each([
    [{ kind: 'confirm', question: '' }, /question must be a non-empty string/],
    [{ kind: 'confirm', question: 'ok?', artifacts: ['a'] }, /remove artifacts/],
    [{ kind: 'artifact_backed', question: 'ok?' }, /needs artifacts/],
    [{ kind: 'artifact_backed', question: 'ok?', artifacts: ['stages/build/attempts/1/artifacts/none.md'] }, /not a file of this run/],
    [{ kind: 'multi_question', question: 'q', questions: [] }, /needs questions/],
    [{ kind: 'multi_question', question: 'q', questions: [{ id: 'a', kind: 'confirm', question: 'x' }, { id: 'a', kind: 'free_text', question: 'y' }] }, /used twice/],
    [{ kind: 'multi_question', question: 'q', questions: [{ id: 'a', kind: 'multi_question', question: 'x' }] }, /free_text or confirm/],
  ])('validates the question shape %j', async (args, message) => {
    const host = makeHost(run, { stage: gated });
    const result = await host.call('ask_operator', args);
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(message);
    expect(host.parked).toBeUndefined();
  });

  it('parks the session and refuses further tool calls', async () => {
    const host = makeHost(run, { stage: gated });
    const artifact = JSON.parse((await host.call('write_stage_artifact', { path: 'plan.md', content: 'p' })).content).path;
    const result = await host.call('ask_operator', { kind: 'artifact_backed', question: 'Accept the plan?', artifacts: [artifact] });
    expect(result.parked).toBe(true);
    expect(host.parked).toEqual({ exchangeId: 'build-a1-q1', question: { kind: 'artifact_backed', question: 'Accept the plan?', artifacts: [artifact] } });
    expect(host.shouldStop).toBe(true);
    expect((await host.call('emit_stage_envelope', goodEmit)).content).toMatch(/parked/);
  });
});

describe('check_outputs', () => {
  it('calls the injected self-check and reports its verdict', async () => {
    const host = makeHost(run, { selfCheck: async () => ({ ok: false, report: 'report.md is missing' }) });
    expect(await host.call('check_outputs', {})).toEqual({ content: 'report.md is missing', isError: true });
    expect(makeHost(run).tools().some((t) => t.name === 'check_outputs')).toBe(false);
  });
});
