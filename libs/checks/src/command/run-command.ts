/**
 * Runs one shell command as its own process group under a deadline.
 *
 * Guarantees: `bash -c <run>` runs with `cwd` and exactly `env`; at the deadline the WHOLE group
 * gets SIGTERM, then SIGKILL after `killGraceMs`; when the leader exits, whatever it left running
 * in its group is terminated the same way, so no member of the group outlives the call (a process
 * that leaves the group with setsid is beyond this guarantee). stdout and stderr keep at most
 * `outputCapBytes` each, redacted of `secrets`. A spawn failure rejects with the spawn error.
 */
import { timerDelayMs } from '@stageflow/domain';
import { spawn } from 'node:child_process';
import { CappedOutput } from './capped-output';
import { groupExists, terminateGroup } from './process-group';

export interface RunCommandOptions {
  readonly run: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly killGraceMs: number;
  readonly outputCapBytes: number;
  readonly secrets: readonly string[];
  readonly onProgress?: () => void;
  readonly progressIntervalMs: number;
}

export interface CommandOutcome {
  readonly pgid: number;
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly timed_out: boolean;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdout_truncated: boolean;
  readonly stderr_truncated: boolean;
  readonly stdout_bytes: number;
  readonly stderr_bytes: number;
  readonly started_at: string;
  readonly finished_at: string;
  readonly duration_ms: number;
}

/** After the group is gone, a pipe held open by an escaped process is waited for this long. */
const PIPE_DRAIN_MS = 500;

export function runCommand(options: RunCommandOptions): Promise<CommandOutcome> {
  const slack = Math.max(0, ...options.secrets.map((secret) => Buffer.byteLength(secret)));
  const stdout = new CappedOutput(options.outputCapBytes, slack);
  const stderr = new CappedOutput(options.outputCapBytes, slack);
  const started = Date.now();
  const child = spawn('bash', ['-c', options.run], {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));

  return new Promise<CommandOutcome>((resolve, reject) => {
    let timedOut = false;
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    const pgid = child.pid;
    const progress = options.onProgress === undefined ? undefined : setInterval(options.onProgress, options.progressIntervalMs);
    const deadline = setTimeout(() => {
      timedOut = true;
      if (pgid !== undefined) void terminateGroup(pgid, options.killGraceMs);
    }, timerDelayMs(options.timeoutMs));
    const stopTimers = (): void => {
      clearTimeout(deadline);
      if (progress !== undefined) clearInterval(progress);
    };

    child.once('error', (error) => {
      stopTimers();
      if (pgid !== undefined) void terminateGroup(pgid, 0);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      stopTimers();
      if (pgid === undefined || !groupExists(pgid)) return;
      void terminateGroup(pgid, options.killGraceMs).then(() => {
        // Streams of an escaped process would never end: stop waiting for them.
        setTimeout(() => {
          child.stdout.destroy();
          child.stderr.destroy();
          finish();
        }, PIPE_DRAIN_MS).unref();
      });
    });
    let finished = false;
    const finish = (): void => {
      if (finished || exited === undefined || pgid === undefined) return;
      finished = true;
      const finishedAt = Date.now();
      resolve({
        pgid,
        exit_code: exited.code,
        signal: exited.signal,
        timed_out: timedOut,
        stdout: stdout.text(options.secrets),
        stderr: stderr.text(options.secrets),
        stdout_truncated: stdout.truncated,
        stderr_truncated: stderr.truncated,
        stdout_bytes: stdout.total,
        stderr_bytes: stderr.total,
        started_at: new Date(started).toISOString(),
        finished_at: new Date(finishedAt).toISOString(),
        duration_ms: finishedAt - started,
      });
    };
    child.once('close', finish);
  });
}
