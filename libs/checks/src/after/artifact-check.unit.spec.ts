import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { baseContext, tempDir } from '../__tests__/support.spec';
import type { ArtifactCheck } from '../domain';
import { runAfterChecks } from './run-after-checks';

const artifactsDir = tempDir('artifact');
const ctx = baseContext({ artifactsDir });
const check = (fields: Partial<ArtifactCheck>): ArtifactCheck => ({ id: 'report', type: 'artifact', when: ['after'], path: 'report.md', ...fields });

beforeAll(() => {
  writeFileSync(join(artifactsDir, 'report.md'), '# Summary\nDone.\n\n**Evidence**\nsee below\n');
  writeFileSync(join(artifactsDir, 'blank.md'), '  \n\t\n');
  writeFileSync(join(artifactsDir, 'test-output.txt'), 'Tests:       1 failed, 1 total\n...\nTests:       2 passed, 2 total\n');
  writeFileSync(join(artifactsDir, 'claims.txt'), 'All tests pass.\n');
  mkdirSync(join(artifactsDir, 'nested'));
  writeFileSync(join(artifactsDir, 'nested', 'a.md'), 'x');
});

describe('artifact check (after phase)', () => {
  it('passes with file facts as evidence', async () => {
    const [result] = await runAfterChecks([check({ nonempty: true, sections: ['summary', 'Evidence'] })], ctx);
    expect(result).toEqual(expect.objectContaining({ id: 'report', type: 'artifact', phase: 'after', status: 'passed' }));
    expect(result!.message).toBeUndefined();
    expect(result!.evidence).toEqual({
      path: 'report.md',
      exists: true,
      type: 'file',
      size: 40,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      mtime: expect.any(String),
      nonempty: true,
      sections: { required: ['summary', 'Evidence'], found: ['summary', 'Evidence'], missing: [] },
    });
  });

  it('passes a nested relative path', async () => {
    const [result] = await runAfterChecks([check({ path: './nested//a.md' })], ctx);
    expect(result!.status).toBe('passed');
  });

  it('fails a missing file', async () => {
    const [result] = await runAfterChecks([check({ path: 'absent.md' })], ctx);
    expect(result).toEqual(expect.objectContaining({ status: 'failed', message: expect.stringContaining('absent.md is missing') }));
    expect(result!.evidence).toEqual(expect.objectContaining({ path: 'absent.md', exists: false, type: 'missing' }));
  });

  it('fails a whitespace-only file under nonempty', async () => {
    const [result] = await runAfterChecks([check({ path: 'blank.md', nonempty: true })], ctx);
    expect(result).toEqual(expect.objectContaining({ status: 'failed', message: 'blank.md has no non-whitespace content' }));
  });

  it('passes a whitespace-only file without nonempty', async () => {
    const [result] = await runAfterChecks([check({ path: 'blank.md' })], ctx);
    expect(result!.status).toBe('passed');
  });

  it('fails missing sections and names them', async () => {
    const [result] = await runAfterChecks([check({ sections: ['Summary', 'Root cause'] })], ctx);
    expect(result).toEqual(expect.objectContaining({ status: 'failed', message: 'report.md lacks section heading(s): Root cause' }));
  });

  it('passes runner evidence judged by the last result', async () => {
    const [result] = await runAfterChecks([check({ path: 'test-output.txt', runner_evidence: true })], ctx);
    expect(result!.status).toBe('passed');
    expect(result!.evidence['runner_evidence']).toEqual({ found: true, runner: 'jest', outcome: 'passed', line: 'Tests:       2 passed, 2 total', line_number: 3 });
  });

  it('fails a claim without a runner summary', async () => {
    const [result] = await runAfterChecks([check({ path: 'claims.txt', runner_evidence: true })], ctx);
    expect(result).toEqual(expect.objectContaining({ status: 'failed', message: 'claims.txt holds no test runner summary' }));
    expect(result!.evidence['runner_evidence']).toEqual({ found: false });
  });

  it('is an error when no after-phase path is declared', async () => {
    const [result] = await runAfterChecks([check({ path: undefined, basename: 'report.md' })], ctx);
    expect(result).toEqual(expect.objectContaining({ status: 'error', message: expect.stringContaining('declares no path') }));
  });

  it('is an error when the artifact directory itself is unavailable', async () => {
    const [result] = await runAfterChecks([check({})], baseContext({ artifactsDir: join(artifactsDir, 'no-such-dir') }));
    expect(result!.status).toBe('error');
  });

  describe('what is not a plain file with one link fails with the reason in its evidence', () => {
    const outside = tempDir('artifact-outside');
    let server: Server;
    beforeAll(async () => {
      writeFileSync(join(outside, 'passwd'), 'root:x:0:0\n');
      linkSync(join(outside, 'passwd'), join(artifactsDir, 'x.md'));
      execFileSync('mknod', [join(artifactsDir, 'null.md'), 'c', '1', '3']);
      server = createServer();
      await new Promise<void>((resolve) => server.listen(join(artifactsDir, 'sock.md'), resolve));
    });
    afterAll(() => server.close());

    it.each([
      ['a hard link', 'x.md', 'refused: x.md is a hard link (2 links)', 'file'],
      ['a character device', 'null.md', 'refused: null.md is a char_device, not a regular file', 'char_device'],
      ['a socket', 'sock.md', 'refused: sock.md is a socket, not a regular file', 'socket'],
    ])('%s', async (_name, path, reason, type) => {
      const [result] = await runAfterChecks([check({ path, nonempty: true })], ctx);
      expect(result).toEqual(expect.objectContaining({ status: 'failed', message: reason }));
      expect(result!.evidence).toEqual({ path, exists: true, type, refused: reason });
      expect(JSON.stringify(result)).not.toContain('root:x');
    });
  });
});
