/**
 * The embedded default as separate OS processes: every call is its own `sf` process, and all
 * the processes of one `embedded()` share a fresh STAGEFLOW_HOME (no NATS_URL / DATABASE_URL).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SF } from './cluster';

export interface SfResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Embedded {
  /** A scratch directory; STAGEFLOW_HOME is `<dir>/home`. */
  readonly dir: string;
  sf(args: string[], timeoutMs?: number): Promise<SfResult>;
  /** Runs `sf <args>`, insists on the exit code, and parses stdout as JSON. */
  json<T>(args: string[], expectedCode: number): Promise<T>;
  /** Kills what is still running and removes the directory. */
  cleanup(): Promise<void>;
}

export function embedded(extraEnv: NodeJS.ProcessEnv = {}): Embedded {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-e2e-embedded-'));
  const env: NodeJS.ProcessEnv = { ...process.env, STAGEFLOW_HOME: path.join(dir, 'home'), ...extraEnv };
  delete env.NATS_URL;
  delete env.DATABASE_URL;
  const running = new Set<ChildProcess>();
  const sf = (args: string[], timeoutMs = 60_000) =>
    new Promise<SfResult>((resolve, reject) => {
      const child = spawn(process.execPath, [SF, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      running.add(child);
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`sf ${args.join(' ')} timed out; stderr:\n${stderr.slice(-3000)}`));
      }, timeoutMs);
      child.on('exit', (code) => {
        clearTimeout(timer);
        running.delete(child);
        resolve({ code: code ?? 1, stdout, stderr });
      });
    });
  return {
    dir,
    sf,
    json: async <T>(args: string[], expectedCode: number): Promise<T> => {
      const result = await sf(args);
      if (result.code !== expectedCode) {
        throw new Error(`sf ${args.join(' ')} exited ${result.code}, expected ${expectedCode}; stdout:\n${result.stdout.slice(-2000)}\nstderr:\n${result.stderr.slice(-3000)}`);
      }
      return JSON.parse(result.stdout) as T;
    },
    cleanup: async () => {
      await Promise.all(
        [...running].map(
          (child) =>
            new Promise<void>((resolve) => {
              child.once('exit', () => resolve());
              child.kill('SIGKILL');
            }),
        ),
      );
      fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}

/** A scratch directory for `sfEmbedded`; STAGEFLOW_HOME is `<dir>/.stageflow`. */
export function embeddedHome(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'sf-embedded-'));
}

/** One `sf` process on the embedded default in `cwd` (no NATS_URL, no DATABASE_URL). */
export function sfEmbedded(args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<SfResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, STAGEFLOW_HOME: path.join(options.cwd, '.stageflow'), ...options.env };
  delete env.NATS_URL;
  delete env.DATABASE_URL;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SF, ...args], { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`sf ${args.join(' ')} timed out; stderr:\n${stderr.slice(-3000)}`));
    }, options.timeoutMs ?? 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}
