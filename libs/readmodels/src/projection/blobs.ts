/**
 * Large strings out of JSON columns. A string longer than the column's threshold (UTF-8 bytes),
 * or holding U+0000 (which jsonb cannot store), is replaced by `{"$blob": "sha256:<hex>"}` and
 * stored once in `evidence_blobs`. An object that already looks like a reference (its only key
 * is `$blob` or `$literal`) is wrapped as `{"$literal": …}`, so `resolveBlobs(externalize(v))`
 * always equals `v`.
 */
import { createHash } from 'node:crypto';
import type { JsonValue } from '../schema';

export interface Blob {
  readonly digest: string;
  readonly encoding: 'utf8' | 'json';
  readonly size: number;
  readonly content: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const soleKey = (v: Record<string, unknown>): string | undefined => {
  const keys = Object.keys(v);
  return keys.length === 1 ? keys[0] : undefined;
};

export function blobOf(text: string): Blob {
  const size = Buffer.byteLength(text, 'utf8');
  const digest = `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
  return text.includes('\u0000')
    ? { digest, encoding: 'json', size, content: JSON.stringify(text) }
    : { digest, encoding: 'utf8', size, content: text };
}

/** JSON-ready copy of `value` with large strings replaced by references collected into `blobs`. */
export function externalize(value: unknown, threshold: number, blobs: Map<string, Blob>): JsonValue {
  if (typeof value === 'string') {
    if (value.includes('\u0000') || (value.length > threshold / 4 && Buffer.byteLength(value, 'utf8') > threshold)) {
      const blob = blobOf(value);
      blobs.set(blob.digest, blob);
      return { $blob: blob.digest };
    }
    return value;
  }
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'boolean' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : externalize(item, threshold, blobs)));
  if (isRecord(value)) {
    const out: { [key: string]: JsonValue } = {};
    for (const [key, item] of Object.entries(value)) {
      if (item !== undefined) out[key] = externalize(item, threshold, blobs);
    }
    const key = soleKey(value);
    return key === '$blob' || key === '$literal' ? { $literal: out } : out;
  }
  return null;
}

/** Digests referenced anywhere in `value`. */
export function blobDigests(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((item) => blobDigests(item, into));
  else if (isRecord(value)) {
    const key = soleKey(value);
    if (key === '$blob' && typeof value.$blob === 'string') into.add(value.$blob);
    else if (key === '$literal') blobDigests(value.$literal, into);
    else Object.values(value).forEach((item) => blobDigests(item, into));
  }
  return into;
}

export class MissingBlobError extends Error {
  constructor(readonly digest: string) {
    super(`evidence blob ${digest} is referenced but not stored`);
    this.name = 'MissingBlobError';
  }
}

/** Inverse of `externalize`, given the referenced blobs' strings. */
export function resolveBlobs(value: unknown, blobs: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((item) => resolveBlobs(item, blobs));
  if (!isRecord(value)) return value;
  const key = soleKey(value);
  if (key === '$blob' && typeof value.$blob === 'string') {
    const text = blobs.get(value.$blob);
    if (text === undefined) throw new MissingBlobError(value.$blob);
    return text;
  }
  const source = key === '$literal' && isRecord(value.$literal) ? value.$literal : value;
  const out: Record<string, unknown> = {};
  for (const [k, item] of Object.entries(source)) out[k] = resolveBlobs(item, blobs);
  return out;
}

export const blobText = (blob: { encoding: string; content: string }): string =>
  blob.encoding === 'json' ? (JSON.parse(blob.content) as string) : blob.content;
