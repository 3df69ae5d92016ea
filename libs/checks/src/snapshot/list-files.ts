/**
 * The file set of a snapshot. At the root of a git working tree (a `.git` entry in `dir`): what
 * `git ls-files -c -o --exclude-standard` lists (tracked plus untracked non-ignored; never `.git/`),
 * with system/global git config ignored and fsmonitor disabled so no configuration runs code. Otherwise
 * (or with `ignoreGit`): every non-directory entry under `dir`, symlinks not followed, `.git`
 * directories skipped.
 */
import { execFile } from 'node:child_process';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

async function gitFiles(dir: string): Promise<string[]> {
  const { stdout } = await execFileAsync(
    'git',
    ['-c', 'core.fsmonitor=false', '-c', 'core.untrackedCache=false', '-c', 'core.quotePath=false', 'ls-files', '-z', '-c', '-o', '--exclude-standard'],
    { cwd: dir, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } },
  );
  return [...new Set(stdout.split('\0').filter((path) => path.length > 0))];
}

async function walk(dir: string, prefix: string, out: string[]): Promise<void> {
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== '.git') await walk(dir, relative, out);
    } else {
      out.push(relative);
    }
  }
}

export async function listSnapshotFiles(dir: string, options: { readonly ignoreGit?: boolean } = {}): Promise<string[]> {
  if (options.ignoreGit !== true && (await exists(join(dir, '.git')))) return gitFiles(dir);
  const out: string[] = [];
  await walk(dir, '', out);
  return out;
}
