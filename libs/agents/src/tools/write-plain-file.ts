import { constants } from 'node:fs';
import * as fs from 'node:fs/promises';
import { errnoCode } from './paths';
import { ToolRefusal } from './result';

/**
 * Replaces the content of an existing file, opened without following a symlink and without
 * blocking. Refused before anything is truncated: a file that is not regular (a FIFO, a socket, a
 * device) or has more than one link (a hard link may be another name of a file elsewhere).
 */
export async function overwritePlainFile(target: string, shown: string, content: string): Promise<void> {
  const before = await fs.lstat(target);
  if (before.isSymbolicLink()) throw new ToolRefusal(`${shown} is a symlink; refusing to write through it`);
  if (!before.isFile()) throw new ToolRefusal(`${shown} is not a regular file`);
  if (before.nlink > 1) throw new ToolRefusal(`${shown} is a hard link (${before.nlink} links); refusing to write through it`);
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(target, constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ELOOP') throw new ToolRefusal(`${shown} is a symlink; refusing to write through it`);
    if (code === 'ENXIO') throw new ToolRefusal(`${shown} is a FIFO, not a regular file`);
    throw err;
  }
  try {
    const stat = await handle.stat();
    if (stat.dev !== before.dev || stat.ino !== before.ino) throw new ToolRefusal(`${shown} was replaced while it was opened; refusing to write`);
    if (!stat.isFile()) throw new ToolRefusal(`${shown} is not a regular file`);
    if (stat.nlink > 1) throw new ToolRefusal(`${shown} is a hard link (${stat.nlink} links); refusing to write through it`);
    await handle.truncate(0);
    await handle.writeFile(content, 'utf8');
  } finally {
    await handle.close();
  }
}
