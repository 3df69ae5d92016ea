/**
 * Seals a directory into the blob store: every file's bytes (a symlink's target text, never what
 * it points to) stored once by content, plus the manifest JSON itself. What a check later sees is
 * exactly this, whatever happens to the directory afterwards.
 *
 * Guarantees:
 * - Only regular files with one link and symlinks are taken. A hard link (which could alias a file
 *   outside the directory), a FIFO, a socket, a device, a path the materializer would refuse, or a
 *   file swapped while it is opened is refused; a vanished path or a directory (a submodule) is
 *   left out.
 * - With a budget: a file that differs from its baseline entry (or has none) counts in full; one
 *   over the per-file limit, or one that takes the attempt past its limit, is refused. Sizes are
 *   checked before reading and again while streaming, so no refused file costs more than the limit
 *   in reads or in the blob store, and no file over IN_MEMORY_BYTES is ever held whole in memory.
 * - Any refusal throws SnapshotRefusedError (not retryable) naming every refused path and its rule,
 *   after the whole directory was looked at.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, open, readlink, type FileHandle } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { BlobStore } from '@stageflow/eventlog';
import { errorCode } from '../errors';
import { parseRelativePath } from '../paths';
import { fileKind } from '../artifact/file-kind';
import type { SnapshotBudget } from './limits';
import { listSnapshotFiles } from './list-files';
import { comparePaths, MODE_EXECUTABLE, MODE_FILE, MODE_SYMLINK, type ManifestEntry, type SealedSnapshot, type SnapshotManifest } from './manifest';
import { CapExceeded, readChunks } from './read-chunks';
import { SnapshotRefusedError, type SnapshotRefusal } from './refusal';

const PARALLEL_READS = 16;
/** Files up to this size are read whole (at most PARALLEL_READS of them at once); larger ones stream. */
const IN_MEMORY_BYTES = 256 * 1024;

export interface SealOptions {
  /** List every file, not what git would (an artifact directory). */
  readonly ignoreGit?: boolean;
  /** Absolute paths never sealed when they lie inside the directory (the state and work directories). */
  readonly exclude?: readonly string[];
  /** What the directory held before the attempt acted: an entry it still matches costs no budget. */
  readonly baseline?: SnapshotManifest;
  /** The attempt's size limits; without one nothing is counted (a baseline). */
  readonly budget?: SnapshotBudget;
  /** Names the directory in a refusal ("checkout", "artifact directory"). */
  readonly label?: string;
}

interface SealContext {
  readonly dir: string;
  readonly blobs: BlobStore;
  readonly baseline: ReadonlyMap<string, ManifestEntry>;
  readonly budget: SnapshotBudget | undefined;
}

type Sealed = ManifestEntry | SnapshotRefusal | undefined;

class AttemptLimitCrossed extends Error {}

function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function isRefusal(sealed: Sealed): sealed is SnapshotRefusal {
  return sealed !== undefined && 'rule' in sealed;
}

function kindRefusal(path: string, stat: Stats): SnapshotRefusal | undefined {
  const kind = fileKind(stat);
  switch (kind) {
    case 'fifo':
    case 'socket':
      return { path, rule: kind, detail: `a ${kind} is not a regular file` };
    case 'block_device':
    case 'char_device':
      return { path, rule: 'device', detail: `a ${kind.replace('_', ' ')} is not a regular file` };
    case 'file':
      return stat.nlink > 1 ? { path, rule: 'hard_link', detail: `a hard link (${stat.nlink} links) may alias a file outside the directory` } : undefined;
    case 'directory':
    case 'symlink':
    case 'missing':
      return undefined;
    default: {
      const unreachable: never = kind;
      throw new Error(`unknown file kind ${String(unreachable)}`);
    }
  }
}

async function hashOf(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of chunks) hash.update(chunk);
  return `sha256:${hash.digest('hex')}`;
}

/** True when the open file still holds exactly its baseline entry's bytes (read at most once, never past that size). */
async function matchesBaseline(handle: FileHandle, size: number, base: ManifestEntry | undefined): Promise<boolean> {
  if (base === undefined || base.mode === MODE_SYMLINK || base.size !== size) return false;
  try {
    return (await hashOf(readChunks(handle, base.size))) === base.digest;
  } catch (error) {
    if (error instanceof CapExceeded) return false;
    throw error;
  }
}

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}

/**
 * Stores the open file's bytes, counted against the budget when there is one; the size is what was
 * read. A file of at most IN_MEMORY_BYTES is read into memory (never past its stat size) and put
 * at once; a larger one is streamed.
 */
async function storeCounted(ctx: SealContext, path: string, handle: FileHandle, size: number): Promise<{ digest: string; size: number } | SnapshotRefusal> {
  const budget = ctx.budget;
  const maxFileBytes = budget?.limits.maxFileBytes ?? Number.POSITIVE_INFINITY;
  const maxAttemptBytes = budget?.limits.maxAttemptBytes ?? Number.POSITIVE_INFINITY;
  const fileTooLarge: SnapshotRefusal = { path, rule: 'file_too_large', detail: `${size} bytes, over the per-file limit of ${maxFileBytes} bytes` };
  const attemptTooLarge: SnapshotRefusal = { path, rule: 'attempt_too_large', detail: `${size} bytes would take the attempt's added or changed files past its limit of ${maxAttemptBytes} bytes` };
  if (size > maxFileBytes) return fileTooLarge;
  if (budget !== undefined && size > budget.remaining) return attemptTooLarge;
  let read = 0;
  const count = (bytes: number) => {
    read += bytes;
    if (budget !== undefined && !budget.take(bytes)) throw new AttemptLimitCrossed();
  };
  const inMemory = size <= IN_MEMORY_BYTES;
  try {
    const digest = inMemory ? await ctx.blobs.put(await collect(readChunks(handle, size, count))) : await ctx.blobs.putStream(readChunks(handle, maxFileBytes, count));
    return { digest, size: read };
  } catch (error) {
    if (error instanceof CapExceeded) return inMemory ? grewWhileSealing(path, size) : fileTooLarge;
    if (error instanceof AttemptLimitCrossed) return attemptTooLarge;
    throw error;
  }
}

function grewWhileSealing(path: string, size: number): SnapshotRefusal {
  return { path, rule: 'changed_while_sealing', detail: `the file grew past its ${size} bytes while it was sealed` };
}

async function sealSymlink(ctx: SealContext, path: string): Promise<Sealed> {
  const target = Buffer.from(await readlink(join(ctx.dir, path)), 'utf8');
  const digest = await ctx.blobs.put(target);
  const base = ctx.baseline.get(path);
  if (ctx.budget !== undefined && base?.digest !== digest && !ctx.budget.take(target.length)) {
    return { path, rule: 'attempt_too_large', detail: `the attempt's added or changed files are past its limit of ${ctx.budget.limits.maxAttemptBytes} bytes` };
  }
  return { path, digest, size: target.length, mode: MODE_SYMLINK };
}

async function sealFile(ctx: SealContext, path: string, stat: Stats): Promise<Sealed> {
  let handle: FileHandle;
  try {
    handle = await open(join(ctx.dir, path), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (isMissing(error)) return undefined;
    if (errorCode(error) === 'ELOOP') return { path, rule: 'changed_while_sealing', detail: 'the path became a symlink between its check and its open' };
    throw error;
  }
  try {
    const opened = await handle.stat();
    if (opened.dev !== stat.dev || opened.ino !== stat.ino || !opened.isFile()) {
      return { path, rule: 'changed_while_sealing', detail: 'the path was replaced between its check and its open' };
    }
    const refused = kindRefusal(path, opened);
    if (refused !== undefined) return refused;
    const mode = (stat.mode & 0o111) !== 0 ? MODE_EXECUTABLE : MODE_FILE;
    const base = ctx.baseline.get(path);
    if (ctx.budget !== undefined && (await matchesBaseline(handle, opened.size, base))) return { path, digest: base!.digest, size: base!.size, mode };
    const stored = await storeCounted(ctx, path, handle, opened.size);
    if ('rule' in stored) return stored;
    if (stored.size !== opened.size) return { path, rule: 'changed_while_sealing', detail: `the file changed size while it was sealed (${opened.size} → ${stored.size} bytes)` };
    return { path, digest: stored.digest, size: stored.size, mode };
  } finally {
    await handle.close();
  }
}

async function sealEntry(ctx: SealContext, path: string): Promise<Sealed> {
  const parsed = parseRelativePath(path);
  if (!parsed.ok || parsed.normalized !== path) {
    return { path, rule: 'unsafe_path', detail: `the path cannot be recreated safely (${parsed.ok ? 'not normalized' : parsed.reason})` };
  }
  let stat: Stats;
  try {
    stat = await lstat(join(ctx.dir, path));
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  if (stat.isSymbolicLink()) return sealSymlink(ctx, path);
  if (stat.isDirectory()) return undefined;
  return kindRefusal(path, stat) ?? sealFile(ctx, path, stat);
}

export async function sealDirectory(dir: string, blobs: BlobStore, options: SealOptions = {}): Promise<SealedSnapshot> {
  const paths = (await listSnapshotFiles(dir, { ignoreGit: options.ignoreGit === true, exclude: options.exclude ?? [] })).sort(comparePaths);
  const ctx: SealContext = { dir, blobs, baseline: new Map((options.baseline?.files ?? []).map((entry) => [entry.path, entry])), budget: options.budget };
  const entries: ManifestEntry[] = [];
  const refusals: SnapshotRefusal[] = [];
  for (let start = 0; start < paths.length; start += PARALLEL_READS) {
    const batch = await Promise.all(paths.slice(start, start + PARALLEL_READS).map((path) => sealEntry(ctx, path)));
    for (const sealed of batch) {
      if (isRefusal(sealed)) refusals.push(sealed);
      else if (sealed !== undefined) entries.push(sealed);
    }
  }
  if (refusals.length > 0) throw new SnapshotRefusedError(options.label ?? 'directory', refusals);
  const manifest = { files: entries };
  const digest = await blobs.put(Buffer.from(JSON.stringify(manifest), 'utf8'));
  return { digest, manifest };
}
