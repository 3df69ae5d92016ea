/**
 * `command`: passes only on exit status 0 within the deadline. The command runs in the sandbox
 * (@stageflow/sandbox): its environment is the sandbox's scratch one plus `ctx.env.set`, it may
 * write only the checkout, the artifact directory and its private tmp, and it has a network only
 * with `network: true`. A cwd outside the checkout (by path or through a symlink) or missing fails;
 * a command that cannot be started is an `error`; a resource limit that stopped it is named.
 * Evidence never contains the verifier's secrets.
 */
import { realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { defaultSandbox, redact, type SandboxOutcome } from '@stageflow/sandbox';
import { secretValues } from '../command/environment';
import type { CommandCheck } from '../domain';
import { CheckCannotRunError, errorMessage } from '../errors';
import { parseRelativePath } from '../paths';
import type { AfterCheckContext } from '../types';
import type { CheckOutcome } from './outcome';

export const DEFAULT_COMMAND_TIMEOUT_MS = 10 * 60 * 1000;
export const OUTPUT_CAP_BYTES = 64 * 1024;
const DEFAULT_PROGRESS_INTERVAL_MS = 5000;

type CwdResolution = { readonly ok: true; readonly root: string; readonly path: string } | { readonly ok: false; readonly reason: string };

async function resolveCwd(checkoutDir: string, cwd: string): Promise<CwdResolution> {
  const parsed = parseRelativePath(cwd, { allowRoot: true });
  if (!parsed.ok) return { ok: false, reason: `cwd ${JSON.stringify(cwd)} refused: ${parsed.reason}` };
  let root: string;
  try {
    root = await realpath(checkoutDir);
  } catch (error) {
    throw new CheckCannotRunError(`checkout directory unavailable: ${errorMessage(error)}`);
  }
  let resolved: string;
  try {
    resolved = await realpath(join(root, parsed.normalized));
  } catch {
    return { ok: false, reason: `cwd ${parsed.normalized} does not exist in the checkout` };
  }
  if (resolved !== root && !resolved.startsWith(root + sep)) {
    return { ok: false, reason: `cwd ${parsed.normalized} resolves outside the checkout` };
  }
  if (!(await stat(resolved)).isDirectory()) return { ok: false, reason: `cwd ${parsed.normalized} is not a directory` };
  return { ok: true, root, path: resolved };
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

function failure(result: SandboxOutcome, timeoutMs: number): string | undefined {
  if (result.timed_out) return `timed out after ${timeoutMs} ms`;
  if (result.exit_code === 0) return undefined;
  const how = result.exit_code === null ? `was killed by ${result.signal ?? 'a signal'}` : `exited with status ${result.exit_code}`;
  return result.limit === null ? `command ${how}` : `command ${how}: stopped by the sandbox's ${result.limit.replace('_', ' ')} limit`;
}

export async function runCommandCheck(item: CommandCheck, ctx: AfterCheckContext): Promise<CheckOutcome> {
  const secrets = secretValues(ctx.env, ctx.secrets);
  const declaredCwd = item.cwd ?? '.';
  const base = { command: redact(item.run, secrets), cwd: declaredCwd };
  const cwd = await resolveCwd(ctx.checkoutDir, declaredCwd);
  if (!cwd.ok) return { status: 'failed', message: cwd.reason, evidence: base };
  const timeoutMs = item.timeout_ms ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const result = await (ctx.sandbox ?? defaultSandbox()).run({
    argv: ['bash', '-c', item.run],
    cwd: cwd.path,
    env: { ...ctx.env?.set },
    writable: [cwd.root, ...((await isDirectory(ctx.artifactsDir)) ? [ctx.artifactsDir] : [])],
    network: item.network === true,
    timeoutMs,
    outputCapBytes: OUTPUT_CAP_BYTES,
    secrets,
    ...(ctx.onProgress === undefined ? {} : { onProgress: ctx.onProgress }),
    progressIntervalMs: ctx.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS,
  });
  if (result.start_error !== undefined) {
    return { status: 'error', message: `command could not be started: ${result.start_error}`, evidence: base };
  }
  const evidence = { ...base, ...result };
  const message = failure(result, timeoutMs);
  return message === undefined ? { status: 'passed', evidence } : { status: 'failed', message, evidence };
}
