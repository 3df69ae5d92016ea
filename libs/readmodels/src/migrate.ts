/** Schema migrations: creates the schema if needed, then applies every pending migration in order. */
import { Migrator, sql, type Kysely, type MigrationResultSet } from 'kysely';
import { quoteIdent, schemaOf } from './database';
import { migrationProvider } from './migrations';
import type { Database } from './schema';

export class MigrationError extends Error {
  constructor(readonly migration: string | undefined, override readonly cause: unknown) {
    super(`read-model migration ${migration ?? '(unknown)'} failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'MigrationError';
  }
}

/** Applies all pending migrations; idempotent. Rejects with MigrationError naming the failed one. */
export async function migrateToLatest(db: Kysely<Database>): Promise<MigrationResultSet> {
  const schema = schemaOf(db);
  await sql.raw(`create schema if not exists ${quoteIdent(schema)}`).execute(db);
  const migrator = new Migrator({ db, provider: migrationProvider, migrationTableSchema: schema });
  const result = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName;
    throw new MigrationError(failed, result.error);
  }
  return result;
}
