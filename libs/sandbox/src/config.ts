/**
 * Sandbox configuration from the environment (read once by `sandboxConfigFromEnv`; nothing else
 * in this package reads process.env). Every limit has a safe default; a malformed value is an
 * error at startup, never a silent default.
 *
 *   SF_SANDBOX               auto (default): bubblewrap when usable, else the fallback | off
 *   SF_SANDBOX_UID / _GID    host uid/gid of sandboxed code when the service runs as root (65534)
 *   SF_SANDBOX_NPROC         processes of the sandbox uid (RLIMIT_NPROC)          default 256
 *   SF_SANDBOX_NOFILE        open files per process (RLIMIT_NOFILE)                default 1024
 *   SF_SANDBOX_FSIZE_BYTES   largest file a process may write (RLIMIT_FSIZE)       default 1 GiB
 *   SF_SANDBOX_MEMORY_BYTES  address space per process (RLIMIT_AS)                 default 3 GiB
 *   SF_SANDBOX_BWRAP         bubblewrap binary                                      default /usr/bin/bwrap
 *   SF_SANDBOX_SLIRP4NETNS   slirp4netns binary (network: true)                     default /usr/bin/slirp4netns
 */
import * as path from 'node:path';

export type SandboxMode = 'auto' | 'off';

export interface SandboxLimits {
  readonly processes: number;
  readonly openFiles: number;
  readonly fileSizeBytes: number;
  readonly memoryBytes: number;
}

export interface SandboxConfig {
  readonly mode: SandboxMode;
  /** Host uid/gid sandboxed code runs as when this process is root; ignored otherwise. */
  readonly uid: number;
  readonly gid: number;
  readonly limits: SandboxLimits;
  /** Never visible inside, even when they lie inside a bound directory: STAGEFLOW_HOME, and SF_WORK_DIR, SF_KEYS_DIR, SF_SIGNING_KEY_FILE, SF_API_TOKENS_FILE, NATS_CREDS when set. */
  readonly hiddenPaths: readonly string[];
  readonly bwrapPath: string;
  readonly slirp4netnsPath: string;
}

export const DEFAULT_LIMITS: SandboxLimits = {
  processes: 256,
  openFiles: 1024,
  fileSizeBytes: 1024 ** 3,
  memoryBytes: 3 * 1024 ** 3,
};

export const DEFAULT_SANDBOX_UID = 65534;

/** Paths of the service's own files, hidden like the state directory wherever they lie. */
const SECRET_PATH_VARIABLES = ['SF_WORK_DIR', 'SF_KEYS_DIR', 'SF_SIGNING_KEY_FILE', 'SF_API_TOKENS_FILE', 'NATS_CREDS'];

export class SandboxConfigError extends Error {
  readonly retryable = false;
}

function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new SandboxConfigError(`${name}=${raw}: expected a positive integer`);
  return value;
}

export function sandboxConfigFromEnv(env: NodeJS.ProcessEnv = process.env): SandboxConfig {
  const rawMode = (env.SF_SANDBOX ?? '').trim() || 'auto';
  if (rawMode !== 'auto' && rawMode !== 'off') throw new SandboxConfigError(`SF_SANDBOX=${rawMode}: expected auto or off`);
  const uid = positiveInteger(env, 'SF_SANDBOX_UID', DEFAULT_SANDBOX_UID);
  const home = path.resolve(env.STAGEFLOW_HOME || '.stageflow');
  return {
    mode: rawMode,
    uid,
    gid: positiveInteger(env, 'SF_SANDBOX_GID', uid),
    limits: {
      processes: positiveInteger(env, 'SF_SANDBOX_NPROC', DEFAULT_LIMITS.processes),
      openFiles: positiveInteger(env, 'SF_SANDBOX_NOFILE', DEFAULT_LIMITS.openFiles),
      fileSizeBytes: positiveInteger(env, 'SF_SANDBOX_FSIZE_BYTES', DEFAULT_LIMITS.fileSizeBytes),
      memoryBytes: positiveInteger(env, 'SF_SANDBOX_MEMORY_BYTES', DEFAULT_LIMITS.memoryBytes),
    },
    hiddenPaths: [home, ...SECRET_PATH_VARIABLES.map((name) => env[name]?.trim()).filter((value): value is string => Boolean(value)).map((value) => path.resolve(value))],
    bwrapPath: env.SF_SANDBOX_BWRAP?.trim() || '/usr/bin/bwrap',
    slirp4netnsPath: env.SF_SANDBOX_SLIRP4NETNS?.trim() || '/usr/bin/slirp4netns',
  };
}
