/** Loads a manifest from the blob store and refuses any that is malformed or could write outside its target. */
import type { BlobStore } from '@stageflow/eventlog';
import { parseRelativePath } from '../paths';
import { MODE_EXECUTABLE, MODE_FILE, MODE_SYMLINK, type ManifestEntry, type SnapshotManifest } from './manifest';

/** Not retryable: the manifest and its blobs are content-addressed, so reading them again finds the same. */
export class InvalidManifestError extends Error {
  readonly retryable = false;

  constructor(digest: string, reason: string) {
    super(`snapshot ${digest}: ${reason}`);
    this.name = 'InvalidManifestError';
  }
}

const MODES = new Set([MODE_FILE, MODE_EXECUTABLE, MODE_SYMLINK]);

function isEntry(value: unknown): value is ManifestEntry {
  if (typeof value !== 'object' || value === null) return false;
  const entry = value as Record<string, unknown>;
  return typeof entry['path'] === 'string' && typeof entry['digest'] === 'string' && typeof entry['size'] === 'number' && typeof entry['mode'] === 'number' && MODES.has(entry['mode']);
}

/**
 * Guarantees on a returned manifest: every path is relative, normalized and free of `..`, NUL and
 * encoded traversal; paths are unique; no path lies beneath another entry (so no entry, a symlink
 * in particular, is ever used as a directory).
 */
export async function readManifest(digest: string, blobs: BlobStore): Promise<SnapshotManifest> {
  const bytes = await blobs.get(digest);
  if (bytes === undefined) throw new InvalidManifestError(digest, 'manifest not in the blob store');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new InvalidManifestError(digest, 'manifest is not JSON');
  }
  const files = (parsed as { files?: unknown }).files;
  if (!Array.isArray(files)) throw new InvalidManifestError(digest, 'manifest has no files array');
  const paths = new Set<string>();
  for (const entry of files) {
    if (!isEntry(entry)) throw new InvalidManifestError(digest, `malformed entry ${JSON.stringify(entry)}`);
    const path = parseRelativePath(entry.path);
    if (!path.ok || path.normalized !== entry.path) {
      throw new InvalidManifestError(digest, `refused path ${JSON.stringify(entry.path)}: ${path.ok ? 'not normalized' : path.reason}`);
    }
    if (paths.has(entry.path)) throw new InvalidManifestError(digest, `duplicate path ${entry.path}`);
    paths.add(entry.path);
  }
  for (const path of paths) {
    const segments = path.split('/');
    for (let length = 1; length < segments.length; length++) {
      const parent = segments.slice(0, length).join('/');
      if (paths.has(parent)) throw new InvalidManifestError(digest, `${path} lies beneath the entry ${parent}`);
    }
  }
  return { files: files as ManifestEntry[] };
}
