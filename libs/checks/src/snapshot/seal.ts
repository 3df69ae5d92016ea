/**
 * Seals a directory into the blob store: every file's bytes (a symlink's target text, never what
 * it points to) stored once by content, plus the manifest JSON itself. What a check later sees is
 * exactly this, whatever happens to the directory afterwards.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, open, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobStore } from '@stageflow/eventlog';
import { errorCode } from '../errors';
import { listSnapshotFiles } from './list-files';
import { comparePaths, MODE_EXECUTABLE, MODE_FILE, MODE_SYMLINK, type ManifestEntry, type SealedSnapshot } from './manifest';

const PARALLEL_READS = 16;

function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * Undefined for a path that vanished (e.g. a tracked file deleted from the worktree), a directory
 * (a submodule) or anything else that is neither a regular file nor a symlink.
 */
async function sealEntry(dir: string, path: string, blobs: BlobStore): Promise<ManifestEntry | undefined> {
  const absolute = join(dir, path);
  let stat: Stats;
  try {
    stat = await lstat(absolute);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  if (stat.isSymbolicLink()) {
    const target = Buffer.from(await readlink(absolute), 'utf8');
    return { path, digest: await blobs.put(target), size: target.length, mode: MODE_SYMLINK };
  }
  if (!stat.isFile()) return undefined;
  const handle = await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    if (!(await handle.stat()).isFile()) return undefined;
    const bytes = await handle.readFile();
    const mode = (stat.mode & 0o111) !== 0 ? MODE_EXECUTABLE : MODE_FILE;
    return { path, digest: await blobs.put(bytes), size: bytes.length, mode };
  } finally {
    await handle.close();
  }
}

export async function sealDirectory(dir: string, blobs: BlobStore, options: { readonly ignoreGit?: boolean } = {}): Promise<SealedSnapshot> {
  const paths = (await listSnapshotFiles(dir, options)).sort(comparePaths);
  const entries: ManifestEntry[] = [];
  for (let start = 0; start < paths.length; start += PARALLEL_READS) {
    const batch = await Promise.all(paths.slice(start, start + PARALLEL_READS).map((path) => sealEntry(dir, path, blobs)));
    for (const entry of batch) if (entry !== undefined) entries.push(entry);
  }
  const manifest = { files: entries };
  const digest = await blobs.put(Buffer.from(JSON.stringify(manifest), 'utf8'));
  return { digest, manifest };
}
