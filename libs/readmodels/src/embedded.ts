/**
 * The embedded default: PGlite persisted in a directory, served on a local socket so the same
 * `pg` + Kysely code path (createDb) serves it.
 */
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

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
