/** Sealed snapshot manifests: what a check sees of an attempt's files, and how two of them differ. */

/** Git-style file modes: the only three a manifest records. */
export const MODE_FILE = 0o100644;
export const MODE_EXECUTABLE = 0o100755;
export const MODE_SYMLINK = 0o120000;

export interface ManifestEntry {
  /** Relative, `/`-separated, no `.`/`..` segments. */
  readonly path: string;
  /** `sha256:<hex>` of the file's bytes, or of a symlink's target text. */
  readonly digest: string;
  /** Bytes of the content (symlink: of the target text). */
  readonly size: number;
  /** MODE_FILE, MODE_EXECUTABLE or MODE_SYMLINK. */
  readonly mode: number;
}

export interface SnapshotManifest {
  /** Sorted by path (code-unit order), paths unique. */
  readonly files: readonly ManifestEntry[];
}

export interface SealedSnapshot {
  /** Digest of the manifest JSON in the blob store. */
  readonly digest: string;
  readonly manifest: SnapshotManifest;
}

export interface ManifestDiff {
  readonly added: readonly string[];
  readonly modified: readonly string[];
  readonly deleted: readonly string[];
}

export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Pure. A path counts as modified when its content digest or its mode differs. Lists are sorted. */
export function diffManifests(before: SnapshotManifest, after: SnapshotManifest): ManifestDiff {
  const old = new Map(before.files.map((entry) => [entry.path, entry]));
  const added: string[] = [];
  const modified: string[] = [];
  for (const entry of after.files) {
    const previous = old.get(entry.path);
    if (previous === undefined) added.push(entry.path);
    else if (previous.digest !== entry.digest || previous.mode !== entry.mode) modified.push(entry.path);
    old.delete(entry.path);
  }
  const deleted = [...old.keys()];
  return { added: added.sort(comparePaths), modified: modified.sort(comparePaths), deleted: deleted.sort(comparePaths) };
}

/** Every changed path (added, modified or deleted), sorted. */
export function changedPaths(diff: ManifestDiff): string[] {
  return [...diff.added, ...diff.modified, ...diff.deleted].sort(comparePaths);
}
