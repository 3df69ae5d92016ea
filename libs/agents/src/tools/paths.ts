/**
 * Path confinement shared by the file tools. Guarantees: a path accepted here is relative, has
 * no NUL, no `..` segment and no backslash, so joining it to a root cannot climb out lexically;
 * symlinks are handled by the callers (which resolve or refuse them on disk).
 */
import * as path from 'node:path';
import { ToolRefusal } from './result';

/** The path's segments without empty and `.` ones; throws ToolRefusal naming the rule broken. */
export function relativeSegments(value: unknown, what: string, allowRoot = false): string[] {
  if (typeof value !== 'string') throw new ToolRefusal(`${what} must be a string path`);
  if (value.includes('\0')) throw new ToolRefusal(`${what} must not contain NUL bytes`);
  if (value.includes('\\')) throw new ToolRefusal(`${what} must use '/' separators, not '\\'`);
  if (path.posix.isAbsolute(value)) throw new ToolRefusal(`${what} must be relative, got absolute ${value}`);
  const segments = value.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new ToolRefusal(`${what} must not contain '..' segments: ${value}`);
  if (!segments.length && !allowRoot) throw new ToolRefusal(`${what} must name a file, got ${JSON.stringify(value)}`);
  return segments;
}

/** True when `candidate` is `root` or lies below it (both already real, absolute paths). */
export function isInside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

export function errnoCode(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}
