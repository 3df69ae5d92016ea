/**
 * The file set of a snapshot. At the root of a git working tree (a `.git` entry in `dir`): what
 * `git ls-files -c -o --exclude-standard` lists (tracked plus untracked non-ignored; never `.git/`),
 * with system/global git config ignored and fsmonitor disabled so no configuration runs code. Otherwise
 * (or with `ignoreGit`): every non-directory entry under `dir`, symlinks not followed, `.git`
 * directories skipped.
 *
 * A working tree with no ignore rules at all (no `.gitignore` anywhere, no rules in
 * `.git/info/exclude`, no `excludesFile` in its config) and no nested repository is listed by
 * walking it in-process: git would list exactly those files (tracked files missing from the tree
 * are skipped by the seal either way), and a process spawn costs more than the whole walk.
 *
 * Never listed, whatever git says: anything beneath a directory named `.stageflow` (Stageflow's
 * state directory: event log, keys, caches, runs) and anything beneath an `exclude` path that lies
 * inside `dir` (the configured home and work directories).
 */
import { execFile } from 'node:child_process';
import { lstat, readdir, readFile, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
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

const STATE_DIRECTORY = '.stageflow';

/** Whether a listed path (a directory: with a trailing `/`) must never be sealed. */
type Skipped = (path: string) => boolean;

async function realOrResolved(path: string): Promise<string> {
  return realpath(path).catch(() => path);
}

/** `/`-separated prefixes of the exclude paths that lie strictly inside `dir`. */
async function excludedPrefixes(dir: string, exclude: readonly string[]): Promise<string[]> {
  const root = await realOrResolved(dir);
  const prefixes: string[] = [];
  for (const path of exclude) {
    const inside = relative(root, await realOrResolved(path));
    if (inside !== '' && !isAbsolute(inside) && inside !== '..' && !inside.startsWith(`..${sep}`)) prefixes.push(inside.split(sep).join('/'));
  }
  return prefixes;
}

function skipper(prefixes: readonly string[]): Skipped {
  return (path) => {
    if (path.split('/').slice(0, -1).includes(STATE_DIRECTORY)) return true;
    return prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  };
}

async function walk(dir: string, prefix: string, skipped: Skipped, out: string[]): Promise<void> {
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== '.git' && !skipped(`${relative}/`)) await walk(dir, relative, skipped, out);
    } else if (!skipped(relative)) {
      out.push(relative);
    }
  }
}

class NeedsGit extends Error {}

async function hasIgnoreConfig(dir: string): Promise<boolean> {
  const read = (path: string) => readFile(join(dir, path), 'utf8').catch(() => '');
  const exclude = await read('.git/info/exclude');
  if (exclude.split('\n').some((line) => line.trim() !== '' && !line.trim().startsWith('#'))) return true;
  return /excludesfile/i.test(await read('.git/config'));
}

async function walkWithoutIgnoreRules(dir: string, prefix: string, skipped: Skipped, out: string[]): Promise<void> {
  for (const entry of await readdir(join(dir, prefix), { withFileTypes: true })) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory() && skipped(`${relative}/`)) continue;
    if (entry.name === '.gitignore' || (entry.name === '.git' && prefix !== '')) throw new NeedsGit();
    if (entry.isDirectory()) {
      if (relative !== '.git') await walkWithoutIgnoreRules(dir, relative, skipped, out);
    } else if (!skipped(relative)) {
      out.push(relative);
    }
  }
}

async function workingTreeFiles(dir: string, skipped: Skipped): Promise<string[]> {
  if (!(await hasIgnoreConfig(dir))) {
    const out: string[] = [];
    try {
      await walkWithoutIgnoreRules(dir, '', skipped, out);
      return out;
    } catch (error) {
      if (!(error instanceof NeedsGit)) throw error;
    }
  }
  return (await gitFiles(dir)).filter((path) => !skipped(path));
}

export interface ListOptions {
  readonly ignoreGit?: boolean;
  /** Absolute paths whose contents are never listed when they lie inside `dir`. */
  readonly exclude?: readonly string[];
}

export async function listSnapshotFiles(dir: string, options: ListOptions = {}): Promise<string[]> {
  const skipped = skipper(await excludedPrefixes(dir, options.exclude ?? []));
  if (options.ignoreGit !== true && (await exists(join(dir, '.git')))) return workingTreeFiles(dir, skipped);
  const out: string[] = [];
  await walk(dir, '', skipped, out);
  return out;
}
