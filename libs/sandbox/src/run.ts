/**
 * Runs one command of agent-influenced code. With bubblewrap (`isolation: 'bwrap'`):
 *  - namespaces: user, pid, net, ipc, uts, mount (`--unshare-all`), `--die-with-parent`,
 *    `--new-session`; /proc shows only the sandbox's processes;
 *  - files: read-only system directories (mounts.ts), a private /tmp (HOME inside it), the
 *    caller's binds; writable only the `writable` directories and /tmp; hidden paths covered;
 *  - environment: built from scratch (PATH, HOME, TMPDIR, LANG, LC_ALL, plus the caller's `env`);
 *    bubblewrap itself starts with that same environment, so /proc/1/environ shows nothing else;
 *  - identity: when this process is root, the configured non-zero uid/gid (so RLIMIT_NPROC binds);
 *    otherwise this process's own;
 *  - limits: processes, open files, file size, address space (limits.ts), named in `limit`;
 *  - network: none (an empty namespace) unless `network: true`: then slirp4netns, host loopback off;
 *  - lifetime: the call resolves when the command's main process exits (after at most
 *    OUTPUT_GRACE_MS for the pipes); every other process of the sandbox is killed then by the
 *    kernel (pid namespace), and at timeout or abort the sandbox is killed whole.
 * Without bubblewrap (`isolation: 'none'`, SF_SANDBOX=off or unavailable) the same environment,
 * identity, limits and process-group kill apply, but no namespaces: no file, /proc or network
 * isolation, and a process that calls setsid can outlive the call.
 * Output: each stream keeps `outputCapBytes`, redacted of `secrets`. Never rejects: a failure to
 * start is an outcome with `exit_code: null` and `start_error`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { timerDelayMs } from '@stageflow/domain';
import { CappedOutput, type OutputKeep } from './capped-output';
import { ensureTraversable, grantGroupWrite } from './access';
import type { SandboxConfig } from './config';
import { limitedArgv, stoppingLimit, type LimitName } from './limits';
import { insidePath, mountArgs, type Bind } from './mounts';
import { readChildPid, SANDBOX_RESOLV_CONF, startSlirp } from './network';
import { redact } from './redact';

export type Isolation = 'bwrap' | 'none';

export interface SandboxCommand {
  /** The program and its arguments (e.g. ['bash', '-c', script]); never joined into shell text. */
  readonly argv: readonly string[];
  /** Host path of the working directory; must lie inside a bind. */
  readonly cwd: string;
  /** Values set for the command (the attempt's SF_* and explicit pass-throughs); nothing is inherited. */
  readonly env: Readonly<Record<string, string>>;
  /** Directories the command may write (the checkout, the attempt's artifact directory). */
  readonly writable: readonly string[];
  /** Further read-only (or, with `writable`, read-write) binds, e.g. a socket directory at a fixed path. */
  readonly binds?: readonly Bind[];
  /** Host paths never visible inside, in addition to the configured ones. */
  readonly hidden?: readonly string[];
  /** Directories prepended to PATH (inside paths). */
  readonly pathPrepend?: readonly string[];
  readonly network?: boolean;
  readonly timeoutMs: number;
  readonly stdin?: string;
  readonly outputCapBytes: number;
  /** Which part of an over-long stream is kept: the first bytes (default) or the last. */
  readonly outputKeep?: OutputKeep;
  readonly secrets?: readonly string[];
  readonly signal?: AbortSignal;
  readonly onProgress?: () => void;
  readonly progressIntervalMs?: number;
}

export interface SandboxOutcome {
  readonly isolation: Isolation;
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly timed_out: boolean;
  readonly aborted: boolean;
  /** The resource limit that stopped the command, when it can be told. */
  readonly limit: LimitName | null;
  readonly start_error?: string;
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

/** How long the pipes are drained after the main process exited. */
export const OUTPUT_GRACE_MS = 200;
/** Inside path of the private tmp; HOME is a directory in it. */
export const SANDBOX_TMP = '/tmp';
export const SANDBOX_HOME = '/tmp/home';
const BASE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

interface Identity {
  readonly uid: number;
  readonly gid: number;
}

/** The host identity sandboxed code runs as: the configured uid when root, else none (this process's). */
export function sandboxIdentity(config: SandboxConfig): Identity | undefined {
  return process.getuid?.() === 0 ? { uid: config.uid, gid: config.gid } : undefined;
}

function scratchEnv(cmd: SandboxCommand, home: string, tmp: string): Record<string, string> {
  const prepend = cmd.pathPrepend?.length ? `${cmd.pathPrepend.join(':')}:` : '';
  return { ...cmd.env, PATH: `${prepend}${BASE_PATH}`, HOME: home, TMPDIR: tmp, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' };
}

/** Creates the per-command scratch: tmp/ (bound at /tmp, HOME inside) and, with network, resolv.conf. */
async function makeScratch(identity: Identity | undefined, network: boolean): Promise<{ root: string; tmp: string; resolvConf?: string }> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'sf-sandbox-'));
  const tmp = path.join(root, 'tmp');
  await fs.mkdir(path.join(tmp, 'home'), { recursive: true, mode: 0o700 });
  if (identity) {
    await fs.chmod(root, 0o711);
    await fs.chown(tmp, identity.uid, identity.gid);
    await fs.chown(path.join(tmp, 'home'), identity.uid, identity.gid);
  }
  if (!network) return { root, tmp };
  const resolvConf = path.join(root, 'resolv.conf');
  await fs.writeFile(resolvConf, SANDBOX_RESOLV_CONF, { mode: 0o644 });
  return { root, tmp, resolvConf };
}

async function prepareAccess(cmd: SandboxCommand, identity: Identity, hidden: readonly string[]): Promise<void> {
  for (const dir of cmd.writable) {
    await ensureTraversable(dir, identity.uid, identity.gid);
    await grantGroupWrite(dir, identity.gid, hidden);
  }
  for (const bind of cmd.binds ?? []) {
    await ensureTraversable(bind.src, identity.uid, identity.gid);
    if (bind.writable) await grantGroupWrite(bind.src, identity.gid, hidden);
  }
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

const INIT_GONE_POLL_MS = 5;
const INIT_GONE_TIMEOUT_MS = 5_000;

/** Resolves when `pid` no longer runs (absent, or a zombie), or after INIT_GONE_TIMEOUT_MS. */
async function initGone(pid: number | undefined): Promise<void> {
  if (pid === undefined) return;
  const until = Date.now() + INIT_GONE_TIMEOUT_MS;
  while (Date.now() < until) {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
    // The state follows the command name's closing parenthesis.
    if (stat === undefined || stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') return;
    await new Promise((r) => setTimeout(r, INIT_GONE_POLL_MS));
  }
}

function killPid(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

export async function runInSandbox(config: SandboxConfig, isolation: Isolation, cmd: SandboxCommand): Promise<SandboxOutcome> {
  const started = Date.now();
  const secrets = cmd.secrets ?? [];
  const slack = Math.max(0, ...secrets.map((s) => Buffer.byteLength(s)));
  const stdout = new CappedOutput(cmd.outputCapBytes, slack, cmd.outputKeep);
  const stderr = new CappedOutput(cmd.outputCapBytes, slack, cmd.outputKeep);
  const identity = sandboxIdentity(config);
  const network = isolation === 'bwrap' && cmd.network === true;
  const hidden = [...config.hiddenPaths, ...(cmd.hidden ?? []), ...cmd.writable.map((dir) => path.join(dir, '.stageflow'))];
  let scratch: Awaited<ReturnType<typeof makeScratch>> | undefined;
  const outcome = (fields: Partial<SandboxOutcome> & Pick<SandboxOutcome, 'exit_code' | 'signal'>): SandboxOutcome => {
    const finished = Date.now();
    const errText = stderr.text(secrets);
    return {
      isolation,
      timed_out: false,
      aborted: false,
      limit: stoppingLimit(fields.exit_code, fields.signal, errText),
      ...fields,
      stdout: stdout.text(secrets),
      stderr: errText,
      stdout_truncated: stdout.truncated,
      stderr_truncated: stderr.truncated,
      stdout_bytes: stdout.total,
      stderr_bytes: stderr.total,
      started_at: new Date(started).toISOString(),
      finished_at: new Date(finished).toISOString(),
      duration_ms: finished - started,
    };
  };
  try {
    for (const dir of [...cmd.writable, ...(cmd.binds ?? []).filter((b) => b.writable).map((b) => b.src)]) {
      // Granting a tree to the sandbox group walks it: never a top-level directory such as /tmp or /home.
      if (path.resolve(dir).split(path.sep).filter(Boolean).length < 2) throw new Error(`refusing to make ${dir} writable in the sandbox: too close to /`);
    }
    scratch = await makeScratch(identity, network);
    if (identity) await prepareAccess(cmd, identity, hidden);
    const inner = limitedArgv(config.limits, cmd.argv);
    let file: string;
    let args: string[];
    let env: Record<string, string>;
    if (isolation === 'bwrap') {
      const binds: Bind[] = [...cmd.writable.map((dir) => ({ src: dir, writable: true })), ...(cmd.binds ?? [])];
      const cwd = insidePath(binds, cmd.cwd);
      if (cwd === undefined) throw new Error(`working directory ${cmd.cwd} is not inside a sandbox bind`);
      env = scratchEnv(cmd, SANDBOX_HOME, SANDBOX_TMP);
      file = config.bwrapPath;
      args = [
        '--unshare-all', '--unshare-user', '--die-with-parent', '--new-session',
        ...mountArgs({ binds, hidden, privateTmp: scratch.tmp, ...(scratch.resolvConf ? { resolvConf: scratch.resolvConf } : {}) }),
        '--info-fd', '3',
        ...(network ? ['--block-fd', '4'] : []),
        '--chdir', cwd,
        '--', ...inner,
      ];
    } else {
      env = scratchEnv(cmd, path.join(scratch.tmp, 'home'), scratch.tmp);
      [file, ...args] = inner as [string, ...string[]];
    }
    return await supervise(config, cmd, { file, args, env, cwd: isolation === 'bwrap' ? '/' : cmd.cwd, identity, network, infoFd: isolation === 'bwrap', stdout, stderr }, outcome);
  } catch (error) {
    return outcome({ exit_code: null, signal: null, start_error: redact((error as Error).message, secrets) });
  } finally {
    if (scratch) await fs.rm(scratch.root, { recursive: true, force: true }).catch(() => undefined);
  }
}

interface Launch {
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
  readonly cwd: string;
  readonly identity: Identity | undefined;
  readonly network: boolean;
  /** bubblewrap reports the sandbox's init (a host pid) on fd 3. */
  readonly infoFd: boolean;
  readonly stdout: CappedOutput;
  readonly stderr: CappedOutput;
}

function supervise(
  config: SandboxConfig,
  cmd: SandboxCommand,
  launch: Launch,
  outcome: (fields: Partial<SandboxOutcome> & Pick<SandboxOutcome, 'exit_code' | 'signal'>) => SandboxOutcome,
): Promise<SandboxOutcome> {
  return new Promise((resolve) => {
    const extraFds = launch.network ? (['pipe', 'pipe'] as const) : launch.infoFd ? (['pipe'] as const) : [];
    const child: ChildProcess = spawn(launch.file, launch.args, {
      cwd: launch.cwd,
      env: launch.env,
      detached: true,
      ...(launch.identity ? { uid: launch.identity.uid, gid: launch.identity.gid } : {}),
      stdio: [cmd.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', ...extraFds],
    });
    let timedOut = false;
    let aborted = false;
    let sandboxPid: number | undefined;
    let slirp: ChildProcess | undefined;
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    child.stdout!.on('data', (c: Buffer) => launch.stdout.push(c));
    child.stderr!.on('data', (c: Buffer) => launch.stderr.push(c));
    if (cmd.stdin !== undefined) {
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(cmd.stdin);
    }
    const killAll = () => {
      killGroup(child.pid);
      killPid(sandboxPid);
    };
    const progress = cmd.onProgress ? setInterval(cmd.onProgress, cmd.progressIntervalMs ?? 5000) : undefined;
    const deadline = setTimeout(() => {
      timedOut = true;
      killAll();
    }, timerDelayMs(cmd.timeoutMs));
    const onAbort = () => {
      aborted = true;
      killAll();
    };
    cmd.signal?.addEventListener('abort', onAbort, { once: true });
    if (cmd.signal?.aborted) onAbort();

    const settle = (fields: Partial<SandboxOutcome> & Pick<SandboxOutcome, 'exit_code' | 'signal'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (progress) clearInterval(progress);
      cmd.signal?.removeEventListener('abort', onAbort);
      killAll();
      slirp?.kill('SIGKILL');
      child.stdout!.destroy();
      child.stderr!.destroy();
      // The kernel empties a pid namespace before its init finishes exiting: once the sandbox's init
      // is gone (or a zombie), none of its processes runs any more, setsid or not.
      void initGone(sandboxPid).then(() => resolve(outcome({ timed_out: timedOut, aborted, ...fields })));
    };
    const finish = () => exited && settle({ exit_code: exited.code, signal: exited.signal });

    if (launch.infoFd && !launch.network) {
      readChildPid(child.stdio[3] as Readable).then(
        (pid) => (sandboxPid = pid),
        () => undefined, // bubblewrap failed before starting the sandbox: its exit reports why
      );
    }
    if (launch.network) {
      const info = child.stdio[3] as Readable;
      const block = child.stdio[4] as Writable;
      readChildPid(info)
        .then(async (pid) => {
          sandboxPid = pid;
          slirp = await startSlirp(config.slirp4netnsPath, pid);
          block.end('1');
        })
        .catch((error: Error) => {
          killAll();
          settle({ exit_code: null, signal: null, start_error: `network setup failed: ${error.message}` });
        });
    }
    child.once('error', (error) => settle({ exit_code: null, signal: null, start_error: error.message }));
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      // Every other process of the sandbox dies now; a pipe an escaped process still holds is not waited for.
      killGroup(child.pid);
      setTimeout(finish, OUTPUT_GRACE_MS).unref();
    });
    child.once('close', finish);
  });
}
