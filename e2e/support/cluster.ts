/**
 * Starts Stageflow services as separate OS processes (`sf serve <name>`) against real NATS and
 * Postgres, each in its own namespace-isolated deployment and its own working directory, and
 * runs `sf` commands against them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { deleteNamespace } from './events';
import { ROOT, runSf, SF, type SfResult } from './sf-process';

export { ROOT, SF } from './sf-process';

export function assertBuilt(): void {
  if (!fs.existsSync(path.join(ROOT, 'libs', 'cli', 'dist', 'index.js'))) {
    throw new Error('e2e tests run the built code: run `npm run build` first (npm test does it)');
  }
}

export interface ServiceProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly home: string;
  /** Everything the process wrote to stderr so far. */
  logs(): string;
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<string>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface Deployment {
  readonly namespace: string;
  readonly env: NodeJS.ProcessEnv;
  readonly dir: string;
  start(name: string, args?: string[], extraEnv?: NodeJS.ProcessEnv): Promise<ServiceProcess>;
  /** Runs `sf setup` for the namespace (once; start() and sf() do it first). */
  setup(): Promise<void>;
  sf(args: string[], options?: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<SfResult>;
  stop(): Promise<void>;
}

export function deployment(extraEnv: NodeJS.ProcessEnv = {}): Deployment {
  const namespace = extraEnv.SF_NAMESPACE ?? `e2e${randomBytes(4).toString('hex')}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-e2e-'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NATS_URL: process.env.SF_TEST_NATS_URL ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    DATABASE_URL: process.env.SF_TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    SF_NAMESPACE: namespace,
    SF_API_TOKENS: 'e2e-token',
    SF_LOG_LEVEL: 'info',
    SF_VALIDATE_EVENTS: '1',
    // One keys directory for the whole deployment: the verifier and the api make their signing
    // keys there on first use, and every service and the CLI trust what is in it.
    SF_KEYS_DIR: path.join(dir, 'keys'),
    ...extraEnv,
  };
  const processes: ServiceProcess[] = [];
  let counter = 0;
  // Services and the CLI only bind to the namespace's streams and consumers: set it up once, first.
  let setUp: Promise<void> | undefined;
  const ensureSetUp = () =>
    (setUp ??= runSf(['setup'], { cwd: ROOT, env: { ...env, STAGEFLOW_HOME: path.join(dir, 'setup') } }).then((result) => {
      if (result.code !== 0) throw new Error(`sf setup failed (${result.code}): ${result.stderr}`);
    }));

  const start = async (name: string, args: string[] = [], more: NodeJS.ProcessEnv = {}) => {
    await ensureSetUp();
    const home = path.join(dir, `${name}-${++counter}`);
    fs.mkdirSync(home, { recursive: true });
    const child = spawn(process.execPath, [SF, 'serve', name, ...args], {
      cwd: home,
      env: { ...env, STAGEFLOW_HOME: home, ...more },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let logs = '';
    const listeners = new Set<() => void>();
    child.stderr!.on('data', (d: Buffer) => {
      logs += d.toString();
      listeners.forEach((l) => l());
    });
    child.stdout!.resume();
    const proc: ServiceProcess = {
      name,
      child,
      home,
      logs: () => logs,
      waitForLog: (pattern, timeoutMs = 20_000) =>
        new Promise((resolve, reject) => {
          const check = () => {
            const match = logs.split('\n').find((line) => pattern.test(line));
            if (match) {
              listeners.delete(check);
              clearTimeout(timer);
              resolve(match);
            }
          };
          const timer = setTimeout(() => {
            listeners.delete(check);
            reject(new Error(`${name}: no log line matching ${pattern} within ${timeoutMs} ms; logs:\n${logs.slice(-3000)}`));
          }, timeoutMs);
          listeners.add(check);
          check();
        }),
      kill: (signal = 'SIGTERM') =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill(signal);
        }),
    };
    processes.push(proc);
    await proc.waitForLog(/"msg":"service started"/, 60_000);
    return proc;
  };

  const sf = async (args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}) => {
    await ensureSetUp();
    return runSf(args, { cwd: options.cwd ?? ROOT, env: { ...env, STAGEFLOW_HOME: path.join(dir, 'cli'), ...options.env }, timeoutMs: options.timeoutMs });
  };

  return {
    namespace,
    env,
    dir,
    start,
    setup: ensureSetUp,
    sf,
    stop: async () => {
      await Promise.all(processes.map((p) => p.kill('SIGKILL')));
      await deleteNamespace(String(env.NATS_URL), namespace).catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
