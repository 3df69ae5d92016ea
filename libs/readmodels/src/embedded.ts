/**
 * The embedded default: PGlite persisted in a directory, served by PGLiteSocketServer on
 * 127.0.0.1 so the same `pg` + Kysely code path (createDb) serves it.
 *
 * PGlite runs in a child Node process: its WebAssembly Postgres executes synchronously and would
 * otherwise stall this process's event loop on every query (and it loads itself with a dynamic
 * import that some hosts, e.g. jest's VM, refuse). The child exits when stopped, and also when
 * this process goes away (its stdin closes), so it never outlives its owner.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';

export interface EmbeddedPostgres {
  /** `postgres://` URL of the local socket; open it with `createDb(url, { maxConnections: 1 })`. */
  readonly url: string;
  readonly port: number;
  /** PGlite runs one session at a time: pools must not exceed this. */
  readonly maxConnections: 1;
  /** Closes the socket server and PGlite (flushing to `dataDir`); resolves when the child exited. */
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Directory PGlite persists to (created if missing). Only one process may open it at a time. */
  readonly dataDir: string;
  /** Port on 127.0.0.1; default 0 = any free port. */
  readonly port?: number;
  /** Time allowed for PGlite to start (first start runs initdb). Default 60 s. */
  readonly startTimeoutMs?: number;
}

export class EmbeddedPostgresError extends Error {
  constructor(message: string, readonly dataDir: string) {
    super(`embedded Postgres in ${dataDir}: ${message}`);
    this.name = 'EmbeddedPostgresError';
  }
}

const SERVER = `
const { PGlite } = require(process.env.SF_PGLITE_MODULE);
const { PGLiteSocketServer } = require(process.env.SF_PGLITE_SOCKET_MODULE);
(async () => {
  const db = await PGlite.create(process.env.SF_PGLITE_DATA_DIR);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: Number(process.env.SF_PGLITE_PORT), maxConnections: 4 });
  await server.start();
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    try { await server.stop(); await db.close(); process.exit(0); } catch (err) { console.error(err); process.exit(1); }
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  process.stdin.on('end', shutdown);
  process.stdin.on('error', shutdown);
  process.stdin.resume();
  process.stdout.write(JSON.stringify({ conn: server.getServerConn() }) + '\\n');
})().catch((err) => { console.error(err && err.stack || String(err)); process.exit(1); });
`;

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedPostgres> {
  mkdirSync(options.dataDir, { recursive: true });
  const child = spawn(process.execPath, ['-e', SERVER], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      SF_PGLITE_MODULE: require.resolve('@electric-sql/pglite'),
      SF_PGLITE_SOCKET_MODULE: require.resolve('@electric-sql/pglite-socket'),
      SF_PGLITE_DATA_DIR: options.dataDir,
      SF_PGLITE_PORT: String(options.port ?? 0),
    },
  });
  const port = await readPort(child, options);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopping: Promise<void> | undefined;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    maxConnections: 1,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
      })();
      return stopping;
    },
  };
}

function readPort(child: ChildProcess, options: EmbeddedOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const fail = (message: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new EmbeddedPostgresError(`${message}${err ? `: ${err.trim().slice(-2000)}` : ''}`, options.dataDir));
    };
    const timer = setTimeout(() => fail('did not start in time'), options.startTimeoutMs ?? 60_000);
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const line = out.split('\n')[0];
      if (!out.includes('\n')) return;
      try {
        const { conn } = JSON.parse(line) as { conn: string };
        clearTimeout(timer);
        resolve(Number(conn.split(':').pop()));
      } catch {
        fail(`unexpected output ${JSON.stringify(line.slice(0, 200))}`);
      }
    });
    child.once('exit', (code) => fail(`exited with code ${String(code)} before listening`));
    child.once('error', (e) => fail(e.message));
  });
}
