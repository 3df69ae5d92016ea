/**
 * The embedded default: PGlite persisted in a directory, served by PGLiteSocketServer on
 * 127.0.0.1 so the same `pg` + Kysely code path (createDb) serves it.
 *
 * PGlite runs in a child Node process: its WebAssembly Postgres executes synchronously and would
 * otherwise stall this process's event loop on every query (and it loads itself with a dynamic
 * import that some hosts, e.g. jest's VM, refuse). Guarantees:
 * - one process at a time serves a data directory: a lock file beside it names the owner and the
 *   server; a second start fails with EmbeddedPostgresError while either is alive, and takes
 *   over a lock whose processes are both gone;
 * - the child never outlives its owner: it closes PGlite (flushing to the directory) and exits
 *   when stopped or when its stdin closes (the owner went away);
 * - an aborted start rejects at once. A first start (which initializes the directory) is left
 *   to finish in the child, which then closes PGlite and exits, so the one-time initialization
 *   is never lost to short-lived owners; any other start is killed. A directory whose first
 *   initialization was cut short all the same (the child was killed) keeps its marker file and
 *   is initialized afresh by the next start: the read model is a projection, a rebuild recreates
 *   it, so this costs no data.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

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
  /** Scheduling niceness of the server process (background use: 10). Default: inherited. */
  readonly niceness?: number;
  /** Aborting a start in progress rejects at once (see the guarantees above). */
  readonly signal?: AbortSignal;
}

export class EmbeddedPostgresError extends Error {
  constructor(message: string, readonly dataDir: string) {
    super(`embedded Postgres in ${dataDir}: ${message}`);
    this.name = 'EmbeddedPostgresError';
  }
}

/** The data directory is served by another live process. */
export class EmbeddedPostgresBusyError extends EmbeddedPostgresError {
  constructor(dataDir: string, readonly holder: number) {
    super(`in use by process ${holder}`, dataDir);
    this.name = 'EmbeddedPostgresBusyError';
  }
}

const SERVER = `
const fs = require('node:fs');
const { PGlite } = require(process.env.SF_PGLITE_MODULE);
const { PGLiteSocketServer } = require(process.env.SF_PGLITE_SOCKET_MODULE);
let db;
let server;
let leaving = false;
let closing = false;
const shutdown = async () => {
  leaving = true;
  if (!db || closing) return;
  closing = true;
  try { if (server) await server.stop(); await db.close(); process.exit(0); } catch (err) { console.error(err); process.exit(1); }
};
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
process.stdin.on('end', shutdown);
process.stdin.on('error', shutdown);
process.stdout.on('error', () => undefined);
process.stdin.resume();
(async () => {
  db = await PGlite.create(process.env.SF_PGLITE_DATA_DIR);
  fs.rmSync(process.env.SF_PGLITE_INITIALIZING, { force: true });
  if (leaving) return shutdown();
  server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: Number(process.env.SF_PGLITE_PORT), maxConnections: 4 });
  await server.start();
  if (leaving) return shutdown();
  process.stdout.write(JSON.stringify({ conn: server.getServerConn() }) + '\\n');
})().catch((err) => { console.error(err && err.stack || String(err)); process.exit(1); });
`;

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedPostgres> {
  const dataDir = path.resolve(options.dataDir);
  options.signal?.throwIfAborted();
  const lock = acquireLock(dataDir);
  const initializing = `${dataDir}.initializing`;
  let child: ChildProcess;
  let fresh: boolean;
  try {
    fresh = !fs.existsSync(dataDir) || fs.readdirSync(dataDir).length === 0 || fs.existsSync(initializing);
    if (fresh) {
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.mkdirSync(dataDir, { recursive: true });
      fs.writeFileSync(initializing, '');
    }
    child = spawn(process.execPath, ['-e', SERVER], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        SF_PGLITE_MODULE: require.resolve('@electric-sql/pglite'),
        SF_PGLITE_SOCKET_MODULE: require.resolve('@electric-sql/pglite-socket'),
        SF_PGLITE_DATA_DIR: dataDir,
        SF_PGLITE_INITIALIZING: initializing,
        SF_PGLITE_PORT: String(options.port ?? 0),
      },
    });
  } catch (err) {
    lock.release();
    throw err;
  }
  lock.record(child.pid);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => lock.release());
  if (options.niceness !== undefined && child.pid !== undefined) {
    try {
      os.setPriority(child.pid, options.niceness);
    } catch {
      // Best effort: a host that refuses leaves the server at normal priority.
    }
  }
  const port = await readPort(child, dataDir, options, fresh);
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

function readPort(child: ChildProcess, dataDir: string, options: EmbeddedOptions, initializing: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const settle = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', abandon);
    };
    const fail = (message: string) => {
      settle();
      child.kill('SIGKILL');
      reject(new EmbeddedPostgresError(`${message}${err ? `: ${err.trim().slice(-2000)}` : ''}`, dataDir));
    };
    const abandon = () => {
      settle();
      if (initializing) {
        // Finishes initializing, then sees its stdin close and exits; nothing here waits for it.
        child.stdin?.end();
        child.stdout?.destroy();
        child.stderr?.destroy();
        child.unref();
      } else {
        child.kill('SIGKILL');
      }
      reject(new EmbeddedPostgresError('start abandoned', dataDir));
    };
    const timer = setTimeout(() => fail('did not start in time'), options.startTimeoutMs ?? 60_000);
    options.signal?.addEventListener('abort', abandon, { once: true });
    child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const line = out.split('\n')[0];
      if (!out.includes('\n')) return;
      try {
        const { conn } = JSON.parse(line) as { conn: string };
        settle();
        resolve(Number(conn.split(':').pop()));
      } catch {
        fail(`unexpected output ${JSON.stringify(line.slice(0, 200))}`);
      }
    });
    child.once('exit', (code) => fail(`exited with code ${String(code)} before listening`));
    child.once('error', (e) => fail(e.message));
  });
}

interface Lock {
  /** Records the server process, so the lock stays held while it runs. */
  record(server: number | undefined): void;
  /** Removes the lock file if it is still this process's. */
  release(): void;
}

interface LockHolder {
  readonly owner: number;
  readonly server?: number;
}

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(file: string): LockHolder | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as LockHolder;
  } catch {
    return undefined;
  }
}

function acquireLock(dataDir: string): Lock {
  const file = `${dataDir}.lock`;
  const mine = (server?: number): string => JSON.stringify({ owner: process.pid, ...(server ? { server } : {}) });
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, mine(), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = readHolder(file);
      if (holder && (alive(holder.owner) || alive(holder.server) || attempt > 0)) {
        throw new EmbeddedPostgresBusyError(dataDir, alive(holder.server) ? holder.server! : holder.owner);
      }
      fs.rmSync(file, { force: true });
    }
  }
  let released = false;
  return {
    record(server) {
      if (!released) fs.writeFileSync(file, mine(server));
    },
    release() {
      if (released) return;
      released = true;
      if (readHolder(file)?.owner === process.pid) fs.rmSync(file, { force: true });
    },
  };
}
