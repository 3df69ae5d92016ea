/**
 * write_stage_artifact. Guarantees: the file lands inside
 * `<runDir>/stages/<stageId>/attempts/<n>/artifacts/` and nowhere else — absolute paths, `..`,
 * NUL, and any symlinked component (directory or final file) are refused, the final open uses
 * O_NOFOLLOW — and the returned path is run-relative, ready for the envelope's artifacts list.
 * An existing file is overwritten only when it is a regular file with one link (never a hard link
 * to a file elsewhere, a FIFO, a socket or a device); nothing is truncated before that is known.
 */
import { constants } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { errnoCode, relativeSegments } from './paths';
import { ToolRefusal } from './result';
import { overwritePlainFile } from './write-plain-file';

export interface AttemptDirs {
  readonly runDir: string;
  readonly stageId: string;
  readonly attempt: number;
}

/** Run-relative artifact directory of an attempt (the 001_* layout). */
export function artifactsRelDir(dirs: AttemptDirs): string {
  return path.posix.join('stages', dirs.stageId, 'attempts', String(dirs.attempt), 'artifacts');
}

export function artifactsDir(dirs: AttemptDirs): string {
  return path.join(dirs.runDir, ...artifactsRelDir(dirs).split('/'));
}

/** Creates the attempt's artifact directory and proves no component of it is a symlink. */
export async function ensureArtifactsDir(dirs: AttemptDirs): Promise<string> {
  const dir = artifactsDir(dirs);
  await fs.mkdir(dir, { recursive: true });
  const expected = path.join(await fs.realpath(dirs.runDir), ...artifactsRelDir(dirs).split('/'));
  if ((await fs.realpath(dir)) !== expected) throw new ToolRefusal('the attempt artifact directory is reached through a symlink; refusing to write');
  return expected;
}

export async function writeArtifact(dirs: AttemptDirs, relPath: unknown, content: unknown): Promise<string> {
  const segments = relativeSegments(relPath, 'path');
  if (typeof content !== 'string') throw new ToolRefusal('content must be a string');
  let current = await ensureArtifactsDir(dirs);
  for (const segment of segments.slice(0, -1)) {
    current = path.join(current, segment);
    const stat = await lstatOrNull(current);
    if (!stat) await fs.mkdir(current);
    else if (stat.isSymbolicLink()) throw new ToolRefusal(`path component ${segment} is a symlink; artifacts must be plain files in plain directories`);
    else if (!stat.isDirectory()) throw new ToolRefusal(`path component ${segment} is a file, not a directory`);
  }
  const target = path.join(current, segments[segments.length - 1]!);
  const stat = await lstatOrNull(target);
  if (stat?.isSymbolicLink()) throw new ToolRefusal(`${segments.join('/')} is a symlink; refusing to write through it`);
  if (stat?.isDirectory()) throw new ToolRefusal(`${segments.join('/')} is a directory`);
  if (stat) await overwritePlainFile(target, segments.join('/'), content);
  else await createFile(target, content);
  return path.posix.join(artifactsRelDir(dirs), ...segments);
}

async function createFile(target: string, content: string): Promise<void> {
  const handle = await fs.open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  try {
    await handle.writeFile(content, 'utf8');
  } finally {
    await handle.close();
  }
}

async function lstatOrNull(p: string) {
  try {
    return await fs.lstat(p);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null;
    throw err;
  }
}
