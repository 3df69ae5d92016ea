/**
 * Opening the read-model database of a deployment, migrated: Postgres at `databaseUrl`, else
 * the embedded Postgres in `embeddedDir`. `close()` releases the pool and stops an embedded
 * server (flushing it); a failed open leaves nothing running.
 */
import type { Kysely } from 'kysely';
import { createDb } from './database';
import { startEmbeddedPostgres, type EmbeddedOptions, type EmbeddedPostgres } from './embedded';
import { migrateToLatest } from './migrate';
import type { Database } from './schema';

export interface ReadModelTarget {
  /** A real Postgres; when absent, the embedded one in `embeddedDir`. */
  readonly databaseUrl?: string;
  readonly embeddedDir: string;
  /** Schema holding the tables. Default `stageflow`. */
  readonly schema?: string;
  /** Passed to the embedded server (background use: niceness, abort of a slow start). */
  readonly embedded?: Pick<EmbeddedOptions, 'niceness' | 'signal' | 'startTimeoutMs'>;
}

export interface OpenedReadModels {
  readonly db: Kysely<Database>;
  /** `postgres` or `embedded`. */
  readonly kind: 'postgres' | 'embedded';
  close(): Promise<void>;
}

export async function openReadModelDb(target: ReadModelTarget): Promise<OpenedReadModels> {
  const server: EmbeddedPostgres | undefined = target.databaseUrl
    ? undefined
    : await startEmbeddedPostgres({ dataDir: target.embeddedDir, ...target.embedded });
  const schema = target.schema ? { schema: target.schema } : {};
  const db = server ? createDb(server.url, { maxConnections: server.maxConnections, ...schema }) : createDb(target.databaseUrl!, schema);
  const close = async () => {
    await db.destroy();
    await server?.stop();
  };
  try {
    await migrateToLatest(db);
  } catch (err) {
    await close();
    throw err;
  }
  return { db, kind: server ? 'embedded' : 'postgres', close };
}
