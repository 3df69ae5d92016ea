/**
 * One log message is one decision (`{ events: [...] }`), so the archive keeps one row per event
 * under the key (message seq, position in the decision). Rows archived before this migration
 * were one event per message and keep position 0.
 */
import { sql, type Kysely, type Migration } from 'kysely';

export const archivePerEvent: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('event_archive').addColumn('position', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.alterTable('event_archive').alterColumn('position', (c) => c.dropDefault()).execute();
    await sql`alter table event_archive drop constraint event_archive_pkey`.execute(db);
    await sql`alter table event_archive add constraint event_archive_pkey primary key (seq, position)`.execute(db);
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await sql`delete from event_archive where position > 0`.execute(db);
    await sql`alter table event_archive drop constraint event_archive_pkey`.execute(db);
    await sql`alter table event_archive add constraint event_archive_pkey primary key (seq)`.execute(db);
    await db.schema.alterTable('event_archive').dropColumn('position').execute();
  },
};
