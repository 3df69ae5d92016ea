/** Runs one `sf` command as its own OS process and collects its output and exit code. */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
export const SF = path.join(ROOT, 'bin', 'sf.js');

export interface SfResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface SfOptions {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
  /** Told about the child while it runs (so a caller can kill what is left at cleanup). */
  readonly track?: (child: ChildProcess, running: boolean) => void;
}

export function runSf(args: readonly string[], options: SfOptions): Promise<SfResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SF, ...args], { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    options.track?.(child, true);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`sf ${args.join(' ')} timed out; stderr:\n${stderr.slice(-3000)}`));
    }, options.timeoutMs ?? 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      options.track?.(child, false);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}

/** The environment of the embedded default: no NATS_URL, no DATABASE_URL. */
export function embeddedEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, STAGEFLOW_HOME: home, ...extra };
  delete env.NATS_URL;
  delete env.DATABASE_URL;
  return env;
}
