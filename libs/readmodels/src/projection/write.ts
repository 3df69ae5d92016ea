/**
 * Multi-row upserts. Each statement writes up to a few thousand rows; a row whose key exists is
 * overwritten with the new values (`do update`) or left alone (`do nothing`), so writing the same
 * rows twice leaves the table as writing them once.
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../schema';
import { externalize, type Blob } from './blobs';
import type { Cell, Row, TableSpec } from './tables';

/** PostgreSQL's bind-parameter limit is 65535 per statement; stay well below it. */
const MAX_PARAMS = 30_000;

/** Converts derived rows to cells: JSON columns serialized (large strings moved into `blobs`). */
export function toCells(spec: TableSpec, rows: readonly Row[], blobs: Map<string, Blob>): Cell[][] {
  return rows.map((row) =>
    spec.columns.map((column) => {
      const value = row[column];
      const threshold = spec.json[column];
      if (threshold !== undefined) return value === null || value === undefined ? null : JSON.stringify(externalize(value, threshold, blobs));
      return value === undefined ? null : (value as Cell);
    }),
  );
}

export async function upsert(
  db: Kysely<Database>,
  spec: TableSpec,
  cells: readonly Cell[][],
  onConflict: 'update' | 'nothing',
): Promise<void> {
  const perStatement = Math.max(1, Math.floor(MAX_PARAMS / spec.columns.length));
  const columns = sql.join(spec.columns.map((c) => sql.ref(c)));
  const key = sql.join(spec.key.map((c) => sql.ref(c)));
  const updates = spec.columns.filter((c) => !spec.key.includes(c));
  const conflict: RawBuilder<unknown> =
    onConflict === 'nothing' || updates.length === 0
      ? sql`do nothing`
      : sql`do update set ${sql.join(updates.map((c) => sql`${sql.ref(c)} = excluded.${sql.ref(c)}`))}`;
  for (let i = 0; i < cells.length; i += perStatement) {
    const chunk = cells.slice(i, i + perStatement);
    const values = sql.join(chunk.map((row) => sql`(${sql.join(row)})`));
    await sql`insert into ${sql.table(spec.name)} (${columns}) values ${values} on conflict (${key}) ${conflict}`.execute(db);
  }
}
