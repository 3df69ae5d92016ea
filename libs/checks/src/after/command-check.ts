/**
 * `command`: passes only on exit status 0 within the deadline. A cwd outside the checkout (by
 * path or through a symlink) or missing fails; a command that cannot be spawned is an `error`.
 * Evidence never contains the verifier's secrets.
 */
import { realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { buildCommandEnv, secretValues } from '../command/environment';
import { redact } from '../command/redact';
import { runCommand, type CommandOutcome } from '../command/run-command';
import type { CommandCheck } from '../domain';
import { CheckCannotRunError, errorMessage } from '../errors';
import { parseRelativePath } from '../paths';
import type { AfterCheckContext } from '../types';
import type { CheckOutcome } from './outcome';

export const DEFAULT_COMMAND_TIMEOUT_MS = 10 * 60 * 1000;
export const OUTPUT_CAP_BYTES = 64 * 1024;
const DEFAULT_KILL_GRACE_MS = 2000;
const DEFAULT_PROGRESS_INTERVAL_MS = 5000;

type CwdResolution = { readonly ok: true; readonly path: string } | { readonly ok: false; readonly reason: string };

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
  return { ok: true, path: resolved };
}

export async function runCommandCheck(item: CommandCheck, ctx: AfterCheckContext): Promise<CheckOutcome> {
  const secrets = secretValues(ctx.env, ctx.secrets);
  const declaredCwd = item.cwd ?? '.';
  const base = { command: redact(item.run, secrets), cwd: declaredCwd };
  const cwd = await resolveCwd(ctx.checkoutDir, declaredCwd);
  if (!cwd.ok) return { status: 'failed', message: cwd.reason, evidence: base };
  let result: CommandOutcome;
  try {
    result = await runCommand({
      run: item.run,
      cwd: cwd.path,
      env: buildCommandEnv(ctx.env),
      timeoutMs: item.timeout_ms ?? DEFAULT_COMMAND_TIMEOUT_MS,
      killGraceMs: ctx.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
      outputCapBytes: OUTPUT_CAP_BYTES,
      secrets,
      ...(ctx.onProgress === undefined ? {} : { onProgress: ctx.onProgress }),
      progressIntervalMs: ctx.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS,
    });
  } catch (error) {
    const message = redact(errorMessage(error), secrets);
    return { status: 'error', message: `command could not be started: ${message}`, evidence: base };
  }
  const evidence = { ...base, ...result };
  if (result.timed_out) {
    return { status: 'failed', message: `timed out after ${item.timeout_ms ?? DEFAULT_COMMAND_TIMEOUT_MS} ms`, evidence };
  }
  if (result.exit_code !== 0) {
    const how = result.exit_code === null ? `was killed by ${result.signal ?? 'a signal'}` : `exited with status ${result.exit_code}`;
    return { status: 'failed', message: `command ${how}`, evidence };
  }
  return { status: 'passed', evidence };
}
