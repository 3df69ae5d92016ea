/**
 * read_file / write_file / list_files for coding stages. Guarantees: every path is resolved to
 * its real location and must stay inside the checkout's real root (a symlink pointing out is
 * refused); writes never touch `.git`, nor an existing file that is not a regular file with one
 * link (a hard link may be another name of a file outside the checkout); reads and listings are capped.
 */
import { constants } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { errnoCode, isInside, relativeSegments } from './paths';
import { ToolRefusal } from './result';
import { overwritePlainFile } from './write-plain-file';

export const READ_CAP_BYTES = 64 * 1024;
export const LIST_CAP_ENTRIES = 2000;

export class CheckoutFs {
  private realRoot?: string;

  constructor(private readonly root: string) {}

  async rootReal(): Promise<string> {
    this.realRoot ??= await fs.realpath(this.root);
    return this.realRoot;
  }

  /** The real path of an existing file or directory inside the checkout. */
  async resolveExisting(rel: unknown, allowRoot = false): Promise<string> {
    const root = await this.rootReal();
    const segments = relativeSegments(rel, 'path', allowRoot);
    let real: string;
    try {
      real = await fs.realpath(path.join(root, ...segments));
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') throw new ToolRefusal(`${segments.join('/') || '.'} does not exist in the checkout`);
      throw err;
    }
    if (!isInside(root, real)) throw new ToolRefusal(`${segments.join('/')} resolves outside the checkout; refused`);
    return real;
  }

  async readFile(rel: unknown): Promise<{ content: string; truncated: boolean; bytes: number }> {
    const real = await this.resolveExisting(rel);
    const handle = await fs.open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch((err: unknown) => {
      if (errnoCode(err) === 'ENXIO' || errnoCode(err) === 'ELOOP') throw new ToolRefusal(`${String(rel)} is not a file`);
      throw err;
    });
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw new ToolRefusal(`${String(rel)} is not a file`);
      const buffer = Buffer.alloc(Math.min(stat.size, READ_CAP_BYTES));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      return { content: buffer.subarray(0, bytesRead).toString('utf8'), truncated: stat.size > READ_CAP_BYTES, bytes: stat.size };
    } finally {
      await handle.close();
    }
  }

  /** Writes a file, creating directories; returns the checkout-relative path written. */
  async writeFile(rel: unknown, content: unknown): Promise<string> {
    if (typeof content !== 'string') throw new ToolRefusal('content must be a string');
    const root = await this.rootReal();
    const segments = relativeSegments(rel, 'path');
    if (segments.includes('.git')) throw new ToolRefusal('writing inside .git is not allowed');
    // Find the deepest existing ancestor; its real path must be inside the checkout.
    let existing = segments.length - 1;
    while (existing > 0 && !(await exists(path.join(root, ...segments.slice(0, existing))))) existing -= 1;
    const ancestor = await fs.realpath(path.join(root, ...segments.slice(0, existing)));
    if (!isInside(root, ancestor)) throw new ToolRefusal(`${segments.join('/')} resolves outside the checkout; refused`);
    const dir = path.join(ancestor, ...segments.slice(existing, -1));
    await fs.mkdir(dir, { recursive: true });
    const target = path.join(dir, segments[segments.length - 1]!);
    if (await exists(target)) {
      const real = await fs.realpath(target);
      if (!isInside(root, real)) throw new ToolRefusal(`${segments.join('/')} is a symlink leading outside the checkout; refused`);
      await overwritePlainFile(real, segments.join('/'), content);
    } else {
      await fs.writeFile(target, content, { encoding: 'utf8', flag: 'wx' });
    }
    return segments.join('/');
  }

  /** Entries below a directory ("name/" for directories); symlinked directories are not followed. */
  async listFiles(rel: unknown, recursive: boolean): Promise<{ entries: string[]; truncated: boolean }> {
    const root = await this.rootReal();
    const start = await this.resolveExisting(rel ?? '.', true);
    const entries: string[] = [];
    const queue = [start];
    while (queue.length) {
      const dir = queue.shift()!;
      const items = await fs.readdir(dir, { withFileTypes: true });
      items.sort((a, b) => a.name.localeCompare(b.name));
      for (const item of items) {
        if (item.name === '.git') continue;
        const full = path.join(dir, item.name);
        const shown = path.relative(root, full).split(path.sep).join('/');
        if (entries.length >= LIST_CAP_ENTRIES) return { entries, truncated: true };
        entries.push(item.isDirectory() ? `${shown}/` : shown);
        if (recursive && item.isDirectory()) queue.push(full);
      }
    }
    return { entries, truncated: false };
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return false;
    throw err;
  }
}
