/**
 * Relative paths supplied by agents or manifests. A path accepted here has no absolute root, no
 * `..` segment, no NUL, no backslash and no percent-encoded separator, dot, NUL or percent; its
 * normalized form drops `.` and empty segments (`./a//b` → `a/b`).
 */

export type ParsedPath =
  | { readonly ok: true; readonly normalized: string; readonly segments: readonly string[] }
  | { readonly ok: false; readonly reason: string };

const ENCODED_TRAVERSAL = /%(?:2e|2f|5c|00|25)/i;

export function parseRelativePath(raw: string, options: { readonly allowRoot?: boolean } = {}): ParsedPath {
  if (raw.length === 0) return { ok: false, reason: 'empty path' };
  if (raw.includes('\0')) return { ok: false, reason: 'path contains a NUL byte' };
  if (raw.includes('\\')) return { ok: false, reason: 'path contains a backslash' };
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw)) return { ok: false, reason: 'path is absolute' };
  if (ENCODED_TRAVERSAL.test(raw)) return { ok: false, reason: 'path contains percent-encoded traversal' };
  const segments = raw.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) return { ok: false, reason: 'path contains a ".." segment' };
  if (segments.length === 0 && options.allowRoot !== true) return { ok: false, reason: 'path names no file' };
  return { ok: true, normalized: segments.length === 0 ? '.' : segments.join('/'), segments };
}
