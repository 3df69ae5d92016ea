/**
 * Multi-row upserts. A chunk of rows travels as one JSON parameter expanded by
 * `json_populate_recordset` (one bind parameter per statement, whatever the row count); a row
 * whose key exists is overwritten with the new values (`do update`) or left alone
 * (`do nothing`), so writing the same rows twice leaves the table as writing them once.
 */
import { sql, type Kysely } from 'kysely';
import type { Database, JsonValue } from '../schema';
import { externalize, type Blob } from './blobs';
import type { Row, TableSpec } from './tables';

/** A row ready to write: JSON columns hold their (externalized) JSON value. */
export type WriteRow = { [column: string]: JsonValue };

const ROWS_PER_STATEMENT = 5000;

/** Converts derived rows for writing: large strings in JSON columns moved into `blobs`. */
export function toWriteRows(spec: TableSpec, rows: readonly Row[], blobs: Map<string, Blob>): WriteRow[] {
  return rows.map((row) => {
    const out: WriteRow = {};
    for (const column of spec.columns) {
      const value = row[column];
      const threshold = spec.json[column];
      if (value === undefined || value === null) out[column] = null;
      else if (threshold !== undefined) out[column] = externalize(value, threshold, blobs);
      else out[column] = value as JsonValue;
    }
    return out;
  });
}

export async function upsert(
  db: Kysely<Database>,
  spec: TableSpec,
  rows: readonly WriteRow[],
  onConflict: 'update' | 'nothing',
): Promise<void> {
  if (rows.length === 0) return;
  const columns = sql.join(spec.columns.map((c) => sql.ref(c)));
  const key = sql.join(spec.key.map((c) => sql.ref(c)));
  const updates = spec.columns.filter((c) => !spec.key.includes(c));
  const conflict =
    onConflict === 'nothing' || updates.length === 0
      ? sql`do nothing`
      : sql`do update set ${sql.join(updates.map((c) => sql`${sql.ref(c)} = excluded.${sql.ref(c)}`))}`;
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
    const chunk = JSON.stringify(rows.slice(i, i + ROWS_PER_STATEMENT));
    await sql`insert into ${sql.table(spec.name)} (${columns})
      select ${columns} from json_populate_recordset(null::${sql.table(spec.name)}, ${chunk}::json)
      on conflict (${key}) ${conflict}`.execute(db);
  }
}
