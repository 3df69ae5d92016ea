/**
 * Recreates a sealed snapshot in an empty (or absent) directory: exactly the manifest's files,
 * with their modes, symlinks as symlinks. Every blob is checked against its digest, every file is
 * created exclusively (never through an existing entry), and manifests that could write outside
 * `targetDir` are refused before anything is written. Every refusal is an InvalidManifestError
 * (not retryable).
 */
import { chmod, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { BlobStore } from '@stageflow/eventlog';
import { blobDigest } from './digest';
import { MODE_EXECUTABLE, MODE_SYMLINK, type SnapshotManifest } from './manifest';
import { InvalidManifestError, readManifest } from './read-manifest';

export async function materializeSnapshot(digest: string, blobs: BlobStore, targetDir: string): Promise<SnapshotManifest> {
  const manifest = await readManifest(digest, blobs);
  await mkdir(targetDir, { recursive: true });
  if ((await readdir(targetDir)).length > 0) throw new Error(`cannot materialize into ${targetDir}: directory is not empty`);
  for (const entry of manifest.files) {
    const bytes = await blobs.get(entry.digest);
    if (bytes === undefined) throw new InvalidManifestError(digest, `blob ${entry.digest} of ${entry.path} is missing`);
    if (blobDigest(bytes) !== entry.digest) throw new InvalidManifestError(digest, `blob of ${entry.path} does not match its digest`);
    if (bytes.length !== entry.size) throw new InvalidManifestError(digest, `blob of ${entry.path} holds ${bytes.length} bytes, the manifest says ${entry.size}`);
    const target = join(targetDir, entry.path);
    await mkdir(dirname(target), { recursive: true });
    if (entry.mode === MODE_SYMLINK) {
      await symlink(Buffer.from(bytes).toString('utf8'), target);
    } else {
      await writeFile(target, bytes, { flag: 'wx' });
      await chmod(target, entry.mode === MODE_EXECUTABLE ? 0o755 : 0o644);
    }
  }
  return manifest;
}
