/** Projector checkpoints: the last stream sequence whose effects are in the tables, per projector name. */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../schema';

export const DEFAULT_PROJECTOR = 'readmodels';

/** Reads the checkpoint (0 if none). */
export async function readCheckpoint(db: Kysely<Database>, name = DEFAULT_PROJECTOR): Promise<number> {
  const row = await db.selectFrom('projector_checkpoints').select('last_seq').where('name', '=', name).executeTakeFirst();
  return row ? Number(row.last_seq) : 0;
}

/**
 * Reads the checkpoint and locks its row until the transaction ends, so concurrent projectors
 * with the same name apply batches one after the other and never apply a sequence twice.
 */
export async function lockCheckpoint(trx: Transaction<Database>, name: string): Promise<number> {
  await sql`insert into projector_checkpoints (name, last_seq) values (${name}, 0) on conflict (name) do nothing`.execute(trx);
  const row = await trx
    .selectFrom('projector_checkpoints')
    .select('last_seq')
    .where('name', '=', name)
    .forUpdate()
    .executeTakeFirstOrThrow();
  return Number(row.last_seq);
}

export async function writeCheckpoint(trx: Transaction<Database>, name: string, lastSeq: number): Promise<void> {
  await trx
    .updateTable('projector_checkpoints')
    .set({ last_seq: lastSeq, updated_at: new Date().toISOString() })
    .where('name', '=', name)
    .execute();
}
