/**
 * Messages on a run subject that are not a decision the projector can read (written by anyone who
 * may append to the subject): recorded once by stream sequence with the reason, so the projector
 * moves past them without losing sight of them.
 */
import type { Kysely, Migration } from 'kysely';

export const undecodableMessages: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('undecodable_messages')
      .addColumn('seq', 'bigint', (c) => c.primaryKey())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('undecodable_messages').execute();
  },
};
