/**
 * Connections to the read-model database. One code path for both deployments: a real Postgres
 * (`DATABASE_URL`) or the embedded default, PGlite served on a local socket, which `pg` reaches
 * like any server. Every table lives in one schema (default `stageflow`), put first on each
 * connection's search_path, so several read models can share a database.
 */
import { Kysely, PostgresDialect } from 'kysely';
import { Pool } from 'pg';
import type { Database } from './schema';

export const DEFAULT_SCHEMA = 'stageflow';

export interface DbOptions {
  /** Pool size. Use 1 for embedded PGlite, which serves one session. Default 10. */
  readonly maxConnections?: number;
  /** Schema holding the tables. Default `stageflow`. */
  readonly schema?: string;
}

/**
 * The schema of a deployment namespace's read models: two deployments on one database never
 * share tables or a projector checkpoint (a new namespace's log starts again at sequence 1).
 */
export function readModelSchema(namespace: string): string {
  return namespace === 'sf' ? DEFAULT_SCHEMA : `${DEFAULT_SCHEMA}_${namespace.toLowerCase()}`;
}

const schemas = new WeakMap<Kysely<Database>, string>();

/** The schema a `createDb` handle was opened on. */
export function schemaOf(db: Kysely<Database>): string {
  return schemas.get(db) ?? DEFAULT_SCHEMA;
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function createDb(url: string, options: DbOptions = {}): Kysely<Database> {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const pool = new Pool({ connectionString: url, max: options.maxConnections ?? 10 });
  // Queued before any query of the checkout: every session sees the schema first.
  pool.on('connect', (client) => {
    client.query(`set search_path to ${quoteIdent(schema)}, public`).catch(() => undefined);
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  schemas.set(db, schema);
  return db;
}
