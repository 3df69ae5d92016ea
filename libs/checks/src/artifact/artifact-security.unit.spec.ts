/** Hostile artifact paths against real files: every one refused, nothing outside the attempt dir read. */
import { spawn, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { linkSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../__tests__/support.spec';
import type { ArtifactCheck } from '../domain';
import { inspectArtifact } from './inspect';

const SECRET = 'TOP-SECRET outside the attempt directory\n';
const secretSha = createHash('sha256').update(SECRET).digest('hex');
const root = tempDir('security');
const outside = join(root, 'outside');
const artifacts = join(root, 'run', 'stages', 's', 'attempts', '1', 'artifacts');

const item = (path: string): ArtifactCheck => ({ id: 'report', type: 'artifact', when: ['after'], path, nonempty: true });

beforeAll(() => {
  mkdirSync(outside, { recursive: true });
  mkdirSync(artifacts, { recursive: true });
  writeFileSync(join(outside, 'secret.txt'), SECRET);
  writeFileSync(join(outside, 'report.md'), SECRET);
  writeFileSync(join(artifacts, 'report.md'), '# Report\n');
  mkdirSync(join(artifacts, 'dir'));
  symlinkSync(join(outside, 'secret.txt'), join(artifacts, 'abs-link.md'));
  symlinkSync('../../../../../../outside/secret.txt', join(artifacts, 'rel-link.md'));
  symlinkSync('report.md', join(artifacts, 'inside-link.md'));
  symlinkSync(outside, join(artifacts, 'linked-dir'));
  mkdirSync(join(artifacts, 'real'));
  symlinkSync(outside, join(artifacts, 'real', 'nested-link'));
  execFileSync('mkfifo', [join(artifacts, 'pipe.md')]);
  linkSync(join(outside, 'secret.txt'), join(artifacts, 'hard.md'));
});

function expectRefused(result: Awaited<ReturnType<typeof inspectArtifact>>): void {
  expect(result.problems.length).toBeGreaterThan(0);
  expect(result.evidence.sha256).toBeUndefined();
  expect(JSON.stringify(result)).not.toContain(secretSha);
  expect(JSON.stringify(result)).not.toContain('TOP-SECRET');
}

describe('hostile artifact paths', () => {
  it.each([
    ['parent traversal', '../../../../../outside/secret.txt', 'refused path'],
    ['absolute path', '/etc/passwd', 'absolute'],
    ['absolute path into outside', `${'/'}${'tmp'}/secret.txt`, 'absolute'],
    ['encoded traversal', '%2e%2e/%2e%2e/outside/secret.txt', 'percent-encoded'],
    ['encoded slash', '..%2f..%2fsecret.txt', 'percent-encoded'],
    ['double-encoded traversal', '%252e%252e/secret.txt', 'percent-encoded'],
    ['NUL byte', 'report.md\0.txt', 'NUL'],
    ['backslash traversal', '..\\..\\secret.txt', 'backslash'],
    ['absolute symlink as last component', 'abs-link.md', 'symlink'],
    ['relative symlink as last component', 'rel-link.md', 'symlink'],
    ['symlink to a file inside', 'inside-link.md', 'symlink'],
    ['symlinked directory component', 'linked-dir/secret.txt', 'symlink'],
    ['nested symlinked directory component', 'real/nested-link/secret.txt', 'symlink'],
    ['FIFO (must not block)', 'pipe.md', 'fifo'],
    ['directory', 'dir', 'directory'],
    ['hard link to a file outside', 'hard.md', 'hard link'],
    ['file beneath a file', 'report.md/x', 'not a directory'],
  ])('refuses %s', async (_name, path, reason) => {
    const result = await inspectArtifact(item(path), artifacts);
    expectRefused(result);
    expect(result.problems.join(' ')).toContain(reason);
  });

  it('reads a plain file inside the attempt directory', async () => {
    const result = await inspectArtifact(item('report.md'), artifacts);
    expect(result.problems).toEqual([]);
    expect(result.evidence).toEqual(expect.objectContaining({ exists: true, type: 'file', size: 9 }));
  });

  it('refuses a last component swapped for a symlink between check and open', async () => {
    const dir = join(artifacts, 'swap1');
    mkdirSync(dir);
    writeFileSync(join(dir, 'r.md'), '# ok\n');
    const result = await inspectArtifact(item('swap1/r.md'), artifacts, {
      beforeOpen: () => {
        rmSync(join(dir, 'r.md'));
        symlinkSync(join(outside, 'secret.txt'), join(dir, 'r.md'));
      },
    });
    expectRefused(result);
    expect(result.problems[0]).toContain('became a symlink');
  });

  it('refuses a last component swapped for a FIFO without blocking', async () => {
    const dir = join(artifacts, 'swap2');
    mkdirSync(dir);
    writeFileSync(join(dir, 'r.md'), '# ok\n');
    const result = await inspectArtifact(item('swap2/r.md'), artifacts, {
      beforeOpen: () => {
        rmSync(join(dir, 'r.md'));
        execFileSync('mkfifo', [join(dir, 'r.md')]);
      },
    });
    expectRefused(result);
  });

  it('refuses a directory component swapped for a symlink between check and open', async () => {
    const dir = join(artifacts, 'swap3');
    mkdirSync(dir);
    writeFileSync(join(dir, 'report.md'), '# ok\n');
    const result = await inspectArtifact(item('swap3/report.md'), artifacts, {
      beforeOpen: () => {
        renameSync(dir, join(artifacts, 'swap3-moved'));
        symlinkSync(outside, dir);
      },
    });
    expectRefused(result);
    expect(result.problems[0]).toContain('changed between check and open');
  });

  it('never reads outside under a concurrent swap loop', async () => {
    const dir = join(artifacts, 'race');
    mkdirSync(dir);
    writeFileSync(join(dir, 'r.md'), 'inside\n');
    const insideSha = createHash('sha256').update('inside\n').digest('hex');
    const swapper = spawn(
      'bash',
      ['-c', `cd "${dir}" && while :; do ln -sfn "${outside}/secret.txt" l && mv -Tf l r.md; printf 'inside\\n' > f && mv -Tf f r.md; done`],
      { stdio: 'ignore', detached: true },
    );
    try {
      const seen = { read: 0, refused: 0 };
      const deadline = Date.now() + 1500;
      while (Date.now() < deadline) {
        const result = await inspectArtifact(item('race/r.md'), artifacts);
        expect(JSON.stringify(result)).not.toContain(secretSha);
        if (result.evidence.sha256 !== undefined) {
          expect(result.evidence.sha256).toBe(insideSha);
          seen.read++;
        } else {
          seen.refused++;
        }
      }
      expect(seen.read + seen.refused).toBeGreaterThan(50);
      expect(seen.refused).toBeGreaterThan(0);
    } finally {
      process.kill(-swapper.pid!, 'SIGKILL');
    }
  });
});
