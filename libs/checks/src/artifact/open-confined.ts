/**
 * Opens a regular file named by an untrusted relative path, confined to a root directory.
 *
 * Guarantees: nothing outside `root` is opened for reading. Refused without blocking: invalid
 * paths (see parseRelativePath), a symlink in ANY component, a last component that is not a
 * regular file (FIFO, directory, socket, device), a hard-linked file (nlink > 1, which could alias
 * a file outside the root), and any swap between the check and the open — the fd is opened with
 * O_NOFOLLOW | O_NONBLOCK, its fstat identity must equal the lstat'd one, and its location is
 * re-confirmed after the open (/proc/self/fd on Linux, else by re-checking every component).
 */
import { constants, type Stats } from 'node:fs';
import { lstat, open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckCannotRunError, errorCode, errorMessage } from '../errors';
import { parseRelativePath } from '../paths';
import { fileKind, type FileKind } from './file-kind';

export type ConfinedOpen =
  | { readonly ok: true; readonly handle: FileHandle; readonly stat: Stats; readonly path: string }
  | { readonly ok: false; readonly kind?: FileKind; readonly reason: string };

/** Test seam: runs after every component was checked and before the open. */
export interface ConfinedOpenHooks {
  readonly beforeOpen?: () => Promise<void> | void;
}

interface Identity {
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
}

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

async function lstatOrMissing(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (error) {
    if (errorCode(error) === 'ENOENT' || errorCode(error) === 'ENOTDIR') return undefined;
    throw error;
  }
}

/**
 * `root` is trusted (the system chose it) and may itself be reached through a symlink; when it is
 * unavailable this throws CheckCannotRunError.
 */
export async function openConfined(root: string, relative: string, hooks: ConfinedOpenHooks = {}): Promise<ConfinedOpen> {
  const parsed = parseRelativePath(relative);
  if (!parsed.ok) return { ok: false, reason: `refused path: ${parsed.reason}` };
  let current: string;
  try {
    current = await realpath(root);
  } catch (error) {
    throw new CheckCannotRunError(`artifact directory unavailable: ${errorCode(error) ?? errorMessage(error)}`);
  }
  const directories: Identity[] = [];
  const last = parsed.segments.length - 1;
  let targetStat: Stats | undefined;
  for (const [index, segment] of parsed.segments.entries()) {
    current = join(current, segment);
    const stat = await lstatOrMissing(current);
    const shown = parsed.segments.slice(0, index + 1).join('/');
    if (stat === undefined) return { ok: false, kind: 'missing', reason: `${shown} does not exist` };
    if (stat.isSymbolicLink()) return { ok: false, kind: 'symlink', reason: `refused: ${shown} is a symlink` };
    if (index < last) {
      if (!stat.isDirectory()) return { ok: false, kind: fileKind(stat), reason: `${shown} is not a directory` };
      directories.push({ path: current, dev: stat.dev, ino: stat.ino });
    } else {
      targetStat = stat;
    }
  }
  const target = current;
  if (targetStat === undefined) return { ok: false, reason: 'path names no file' };
  if (!targetStat.isFile()) {
    const kind = fileKind(targetStat);
    return { ok: false, kind, reason: `refused: ${parsed.normalized} is a ${kind}, not a regular file` };
  }
  await hooks.beforeOpen?.();

  let handle: FileHandle;
  try {
    handle = await open(target, OPEN_FLAGS);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ELOOP') return { ok: false, kind: 'symlink', reason: `refused: ${parsed.normalized} became a symlink` };
    if (code === 'ENOENT' || code === 'ENOTDIR') return { ok: false, kind: 'missing', reason: `${parsed.normalized} vanished` };
    return { ok: false, reason: `cannot open ${parsed.normalized}: ${code ?? String(error)}` };
  }
  const refuse = async (reason: string, kind?: FileKind): Promise<ConfinedOpen> => {
    await handle.close();
    return kind === undefined ? { ok: false, reason } : { ok: false, kind, reason };
  };
  const stat = await handle.stat();
  if (stat.dev !== targetStat.dev || stat.ino !== targetStat.ino) {
    return refuse(`refused: ${parsed.normalized} changed between check and open`);
  }
  if (!stat.isFile()) return refuse(`refused: ${parsed.normalized} is not a regular file`, fileKind(stat));
  if (stat.nlink > 1) return refuse(`refused: ${parsed.normalized} is a hard link (${stat.nlink} links)`, 'file');
  if (!(await stillInside(handle, target, directories))) {
    return refuse(`refused: a component of ${parsed.normalized} changed between check and open`);
  }
  return { ok: true, handle, stat, path: target };
}

async function stillInside(handle: FileHandle, target: string, directories: readonly Identity[]): Promise<boolean> {
  try {
    return (await readlink(`/proc/self/fd/${handle.fd}`)) === target;
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
  for (const directory of directories) {
    const stat = await lstatOrMissing(directory.path);
    if (stat === undefined || stat.isSymbolicLink() || stat.dev !== directory.dev || stat.ino !== directory.ino) return false;
  }
  return true;
}
