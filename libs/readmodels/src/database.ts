/**
 * Connections to the read-model database. One code path for both deployments: a real Postgres
 * (`DATABASE_URL`) or the embedded default, PGlite served on a local socket, which `pg` reaches
 * like any server. Every table lives in one schema (default `stageflow`), put first on each
 * connection's search_path, so several read models can share a database.
 */
import { mkdirSync } from 'node:fs';
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

export interface EmbeddedPostgres {
  /** `postgres://` URL of the local socket; open it with `createDb(url, { maxConnections: 1 })`. */
  readonly url: string;
  readonly port: number;
  /** PGlite runs one session at a time: pools must not exceed this. */
  readonly maxConnections: 1;
  /** Closes the socket server and PGlite; data stays in `dataDir`. */
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Directory PGlite persists to (created if missing). */
  readonly dataDir: string;
  /** Port on 127.0.0.1; default 0 = any free port. */
  readonly port?: number;
}

/**
 * PGlite persisted in `dataDir`, served by PGLiteSocketServer on 127.0.0.1. Only one process may
 * open a data directory at a time.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedPostgres> {
  mkdirSync(options.dataDir, { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const pglite = await PGlite.create(options.dataDir);
  const server = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: options.port ?? 0, maxConnections: 4 });
  try {
    await server.start();
  } catch (err) {
    await pglite.close();
    throw err;
  }
  const port = Number(server.getServerConn().split(':').pop());
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    maxConnections: 1,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
      await pglite.close();
    },
  };
}
