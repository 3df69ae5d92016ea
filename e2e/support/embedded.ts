/** Runs `sf` as a separate process on the embedded default: no NATS_URL, no DATABASE_URL. */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SF } from './cluster';

export interface SfResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function embeddedHome(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'sf-embedded-'));
}

export function sfEmbedded(args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<SfResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, STAGEFLOW_HOME: path.join(options.cwd, '.stageflow'), ...options.env };
  delete env.NATS_URL;
  delete env.DATABASE_URL;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SF, ...args], { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}
