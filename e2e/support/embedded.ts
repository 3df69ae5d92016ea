/**
 * The embedded default as separate OS processes: every call is its own `sf` process, and all
 * the processes of one `embedded()` share a fresh STAGEFLOW_HOME (no NATS_URL / DATABASE_URL).
 */
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { embeddedEnv, runSf, type SfResult } from './sf-process';

export type { SfResult } from './sf-process';

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
  const env = embeddedEnv(path.join(dir, 'home'), extraEnv);
  const running = new Set<ChildProcess>();
  const sf = (args: string[], timeoutMs = 60_000) =>
    runSf(args, { cwd: dir, env, timeoutMs, track: (child, alive) => (alive ? running.add(child) : running.delete(child)) });
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
  return runSf(args, { cwd: options.cwd, env: embeddedEnv(path.join(options.cwd, '.stageflow'), options.env), timeoutMs: options.timeoutMs });
}
