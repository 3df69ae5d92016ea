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

export async function openReadModels(infra: Infrastructure): Promise<ReadModels> {
  const embedded = infra.config.databaseUrl ? undefined : await startEmbeddedPostgres({ dataDir: path.join(infra.config.home, 'postgres') });
  const db = embedded ? createDb(embedded.url, { maxConnections: 1 }) : createDb(infra.config.databaseUrl!);
  try {
    await migrateToLatest(db);
  } catch (err) {
    await db.destroy();
    await embedded?.stop();
    throw err;
  }
  const projector = runProjector(db, infra.log, { filter: `${infra.config.namespace}.evt.run.>` });
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
