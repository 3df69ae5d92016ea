/**
 * Shell commands for tools (run_command, the script backend's `run`). Guarantees: each command
 * runs in its own process group with an allow-listed environment; on timeout or `killAll()` the
 * whole group gets SIGKILL; each output stream keeps at most its last 64 KiB; the call resolves
 * even if a detached grandchild keeps the pipes open.
 */
import { spawn } from 'node:child_process';

export const OUTPUT_CAP_BYTES = 64 * 1024;
export const DEFAULT_COMMAND_TIMEOUT_MS = 120_000;
export const MAX_COMMAND_TIMEOUT_MS = 30 * 60_000;

/** Variables passed through from the runner's environment; nothing else leaks (no credentials). */
export const ENV_ALLOW_LIST = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TERM', 'TMPDIR', 'TZ', 'USER', 'SHELL'] as const;

export interface CommandResult {
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly timed_out: boolean;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdout_truncated: boolean;
  readonly stderr_truncated: boolean;
}

export function allowListedEnv(extra: Readonly<Record<string, string>>, base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ENV_ALLOW_LIST) {
    const value = base[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}

class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > OUTPUT_CAP_BYTES && this.chunks.length) {
      const excess = this.size - OUTPUT_CAP_BYTES;
      const head = this.chunks[0]!;
      this.truncated = true;
      if (head.length <= excess) {
        this.chunks.shift();
        this.size -= head.length;
      } else {
        this.chunks[0] = head.subarray(excess);
        this.size -= excess;
      }
    }
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

export class ProcessGroups {
  private readonly live = new Set<number>();

  /** Runs `command` with /bin/sh -c in `cwd`. Never rejects: spawn failures come back as exit_code null + stderr. */
  run(command: string, opts: { cwd: string; env: Record<string, string>; timeoutMs: number; signal?: AbortSignal }): Promise<CommandResult> {
    return new Promise((resolve) => {
      const stdout = new TailBuffer();
      const stderr = new TailBuffer();
      let timedOut = false;
      let settled = false;
      const child = spawn('/bin/sh', ['-c', command], { cwd: opts.cwd, env: opts.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      const pid = child.pid;
      if (pid !== undefined) this.live.add(pid);
      child.stdout.on('data', (c: Buffer) => stdout.push(c));
      child.stderr.on('data', (c: Buffer) => stderr.push(c));
      const kill = () => {
        if (pid !== undefined) killGroup(pid);
        // A grandchild that left the group may hold the pipes: stop waiting for them shortly.
        setTimeout(() => finish(child.exitCode, child.signalCode), 500).unref();
      };
      const timer = setTimeout(() => {
        timedOut = true;
        kill();
      }, opts.timeoutMs);
      const onAbort = () => kill();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      if (opts.signal?.aborted) kill();
      const finish = (code: number | null, signal: NodeJS.Signals | null, spawnError?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        if (pid !== undefined) {
          killGroup(pid); // reap anything the command left running in its group
          this.live.delete(pid);
        }
        child.stdout.destroy();
        child.stderr.destroy();
        if (spawnError) stderr.push(Buffer.from(`failed to start: ${spawnError.message}`));
        resolve({
          exit_code: code,
          signal: signal,
          timed_out: timedOut,
          stdout: stdout.text(),
          stderr: stderr.text(),
          stdout_truncated: stdout.truncated,
          stderr_truncated: stderr.truncated,
        });
      };
      child.once('error', (err) => finish(null, null, err));
      child.once('close', (code, signal) => finish(code, signal));
    });
  }

  /** SIGKILLs every process group still running (session end, timeout, cancel). */
  killAll(): void {
    for (const pid of this.live) killGroup(pid);
  }

  get running(): number {
    return this.live.size;
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
