/** Resolving `{"$blob": digest}` references read from JSON columns. */
import type { Kysely } from 'kysely';
import { blobDigests, blobText, resolveBlobs } from '../projection/blobs';
import type { Database } from '../schema';

/** `values` with every blob reference replaced by its string (one query for all of them). */
export async function withBlobsResolved<T>(db: Kysely<Database>, values: readonly unknown[]): Promise<T[]> {
  const digests = new Set<string>();
  values.forEach((v) => blobDigests(v, digests));
  const texts = new Map<string, string>();
  if (digests.size) {
    const rows = await db
      .selectFrom('evidence_blobs')
      .select(['digest', 'encoding', 'content'])
      .where('digest', 'in', [...digests])
      .execute();
    for (const row of rows) texts.set(row.digest, blobText(row));
  }
  return values.map((v) => resolveBlobs(v, texts) as T);
}

export const iso = (d: Date): string => d.toISOString();
export const isoOrNull = (d: Date | null): string | null => (d ? d.toISOString() : null);
