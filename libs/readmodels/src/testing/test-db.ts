/**
 * Test databases: each test file works in its own random schema of the test Postgres
 * (SF_TEST_DATABASE_URL ?? DATABASE_URL ?? local), dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { createDb, quoteIdent, schemaOf } from '../database';
import { migrateToLatest } from '../migrate';
import type { Database } from '../schema';

export const testDatabaseUrl = (): string =>
  process.env.SF_TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDb {
  readonly db: Kysely<Database>;
  readonly schema: string;
  drop(): Promise<void>;
}

export async function openTestDb(prefix = 'rm'): Promise<TestDb> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  const db = createDb(testDatabaseUrl(), { schema, maxConnections: 4 });
  await migrateToLatest(db);
  return {
    db,
    schema,
    async drop() {
      await sql.raw(`drop schema if exists ${quoteIdent(schemaOf(db))} cascade`).execute(db);
      await db.destroy();
    },
  };
}
