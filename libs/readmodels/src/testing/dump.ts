/** Every table's rows in key order, as plain JSON: two read models are equal iff their dumps are. */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema';

const ORDER: { readonly [table in keyof Database]: string } = {
  runs: 'run_id',
  stages: 'run_id, stage_id',
  attempts: 'run_id, stage_id, n',
  checks: 'run_id, stage_id, attempt, ordinal',
  evidence_blobs: 'digest',
  operator_interactions: 'run_id, stage_id, exchange_id',
  recovery_decisions: 'run_id, stage_id, attempt',
  envelopes: 'run_id, stage_id, attempt',
  event_archive: 'seq, position',
  run_folds: 'run_id',
  undecodable_messages: 'seq',
  projector_checkpoints: 'name',
};

export type Dump = { [table: string]: unknown[] };

export async function dumpTables(
  db: Kysely<Database>,
  options: { exclude?: readonly (keyof Database)[]; omitColumns?: { [table: string]: readonly string[] } } = {},
): Promise<Dump> {
  const out: Dump = {};
  for (const [table, order] of Object.entries(ORDER)) {
    if (options.exclude?.includes(table as keyof Database)) continue;
    const result = await sql<Record<string, unknown>>`select * from ${sql.table(table)} order by ${sql.raw(order)}`.execute(db);
    const omit = new Set(options.omitColumns?.[table] ?? []);
    out[table] = result.rows.map((row) =>
      Object.fromEntries(
        Object.entries(row)
          .filter(([k]) => !omit.has(k) && k !== 'updated_at')
          .map(([k, v]) => [k, v instanceof Date ? v.toISOString() : table === 'run_folds' && k === 'state' ? JSON.parse(String(v)) : v]),
      ),
    );
  }
  return out;
}

/** Empties the projected tables and checkpoints (a fresh read model in the same schema). */
export async function resetTables(db: Kysely<Database>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const table of Object.keys(ORDER)) await sql`delete from ${sql.table(table)}`.execute(trx);
  });
}
