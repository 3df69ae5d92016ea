/**
 * Large evidence is stored once, in the blob store, and referenced: a string longer than
 * EVIDENCE_INLINE_LIMIT is replaced by `{ $blob, bytes, preview }`, so events stay small and the
 * full text stays reachable (`resolveEvidence`). Run lists never carry evidence at all.
 */
import type { CheckResult } from '@stageflow/domain';
import type { BlobStore } from '@stageflow/eventlog';

export const EVIDENCE_INLINE_LIMIT = 4096;
const PREVIEW_CHARS = 512;

export interface BlobReference {
  readonly $blob: string;
  readonly bytes: number;
  readonly preview: string;
}

const isBlobReference = (value: unknown): value is BlobReference =>
  typeof value === 'object' && value !== null && typeof (value as BlobReference).$blob === 'string';

export async function offloadEvidence(checks: readonly CheckResult[], blobs: BlobStore): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  for (const check of checks) {
    const evidence: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(check.evidence)) {
      if (typeof value === 'string' && value.length > EVIDENCE_INLINE_LIMIT) {
        const bytes = Buffer.from(value, 'utf8');
        evidence[key] = { $blob: await blobs.put(bytes), bytes: bytes.length, preview: value.slice(-PREVIEW_CHARS) } satisfies BlobReference;
      } else evidence[key] = value;
    }
    out.push({ ...check, evidence });
  }
  return out;
}

export async function resolveEvidence(evidence: { readonly [key: string]: unknown }, blobs: BlobStore): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(evidence)) {
    if (isBlobReference(value)) {
      const bytes = await blobs.get(value.$blob);
      out[key] = bytes ? Buffer.from(bytes).toString('utf8') : value;
    } else out[key] = value;
  }
  return out;
}
