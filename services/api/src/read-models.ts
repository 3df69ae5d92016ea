/**
 * The API's read models: Postgres at DATABASE_URL, or in the embedded default an embedded Postgres
 * (PGlite behind a local socket) under STAGEFLOW_HOME — one `pg` + Kysely path for both. The
 * projector follows the log into it; its lag is reported on /readyz.
 */
import * as path from 'node:path';
import type { Kysely } from 'kysely';
import { createDb, migrateToLatest, runProjector, startEmbeddedPostgres, type Database, type Projector } from '@stageflow/readmodels';
import type { Infrastructure } from '@stageflow/runtime';

export interface ReadModels {
  readonly db: Kysely<Database>;
  readonly projector: Projector;
  close(): Promise<void>;
}

/**
 * Each deployment namespace projects into its own schema: two deployments on one database never
 * share tables or a projector checkpoint (a new namespace's log starts again at sequence 1).
 */
export function readModelSchema(namespace: string): string {
  return namespace === 'sf' ? 'stageflow' : `stageflow_${namespace.toLowerCase()}`;
}

export async function openReadModels(infra: Infrastructure): Promise<ReadModels> {
  const embedded = infra.config.databaseUrl ? undefined : await startEmbeddedPostgres({ dataDir: path.join(infra.config.home, 'postgres') });
  const schema = readModelSchema(infra.config.namespace);
  const db = embedded ? createDb(embedded.url, { maxConnections: 1, schema }) : createDb(infra.config.databaseUrl!, { schema });
  try {
    await migrateToLatest(db);
  } catch (err) {
    await db.destroy();
    await embedded?.stop();
    throw err;
  }
  const projector = runProjector(db, infra.log, { filter: `${infra.config.namespace}.evt.run.>`, signatures: infra.runs.signatures });
  return {
    db,
    projector,
    close: async () => {
      await projector.stop();
      await db.destroy();
      await embedded?.stop();
    },
  };
}
