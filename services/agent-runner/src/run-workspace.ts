/**
 * Where an attempt works on this replica: the run directory (artifacts live under
 * `stages/<stageId>/attempts/<n>/artifacts/`) and the run's checkout.
 *
 * Guarantees:
 * - A `{path}` checkout (embedded default only) is used in place; nothing is copied or rolled back.
 * - A git checkout is at the run's ref or fails: a ref the repository does not have is
 *   `checkout.ref_not_found` (not retryable), never the default branch. A copy counts as made
 *   only once its ref is checked out (a marker in `.git/`); a failed or interrupted clone is
 *   removed, so the next delivery starts from an empty directory. A clone that fails for any
 *   other reason (network, credentials) is retryable.
 * - Otherwise the checkout is this replica's own copy, brought to the state the run's latest
 *   captured attempt left (its sealed snapshot) before the attempt starts, so replicas that share
 *   no disk hand the checkout on through the blob store. A marker in `.git/` names the snapshot
 *   the copy holds; a copy already at that snapshot is used as it is.
 * - A session resumed after an operator answer starts from what it left when it parked (the
 *   snapshots sealed then): the checkout as above, and an artifact directory that is empty on
 *   this replica is filled from the parked one; one that is not empty is what this replica left.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { materializeSnapshot } from '@stageflow/checks';
import type { Checkout, RunEvent } from '@stageflow/domain';
import type { BlobStore } from '@stageflow/eventlog';

const run = promisify(execFile);
const MARKER = path.join('.git', 'stageflow-snapshot');
const CHECKED_OUT = path.join('.git', 'stageflow-checked-out');

/** A checkout that could not be made; `retryable: false` when trying again cannot help. */
export class CheckoutFailed extends Error {
  constructor(
    readonly code: 'checkout.ref_not_found' | 'checkout.clone_failed',
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'CheckoutFailed';
  }
}

export interface AttemptWorkspace {
  readonly runDir: string;
  readonly checkoutDir: string;
  readonly artifactsDir: string;
  /** Whether the checkout is shared with the caller (a `{path}` checkout) rather than our own copy. */
  readonly inPlace: boolean;
}

/** Sealed snapshots of a parked session's workspace (`checkout` absent for an in-place checkout). */
export interface ParkedWorkspace {
  readonly checkout?: string;
  readonly artifacts: string;
}

/** The parked workspace recorded in an OperatorQuestionAsked `resume`, if it holds a well-formed one. */
export function parkedWorkspace(resume: { readonly [key: string]: unknown } | undefined): ParkedWorkspace | undefined {
  const workspace = resume?.workspace;
  if (typeof workspace !== 'object' || workspace === null) return undefined;
  const { checkout, artifacts } = workspace as { checkout?: unknown; artifacts?: unknown };
  if (typeof artifacts !== 'string' || (checkout !== undefined && typeof checkout !== 'string')) return undefined;
  return { artifacts, ...(typeof checkout === 'string' ? { checkout } : {}) };
}

export function runDirectory(root: string, runId: string): string {
  return path.join(root, 'runs', runId);
}

export function artifactsDirectory(runDir: string, stageId: string, attempt: number): string {
  return path.join(runDir, 'stages', stageId, 'attempts', String(attempt), 'artifacts');
}

/** The checkout snapshot the run's latest captured attempt left, if any. */
export function latestCheckoutSnapshot(events: readonly RunEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i];
    if (event.type === 'EnvelopeCaptured') return event.checkoutSnapshot;
  }
  return undefined;
}

export async function prepareWorkspace(options: {
  readonly root: string;
  readonly runId: string;
  readonly stageId: string;
  readonly attempt: number;
  readonly checkout: Checkout;
  readonly events: readonly RunEvent[];
  readonly blobs: BlobStore;
  /** Credentials and options for cloning come from this replica's configuration. */
  readonly gitEnv?: NodeJS.ProcessEnv;
  /** The workspace the attempt's session parked with, when it resumes after an answer. */
  readonly parked?: ParkedWorkspace;
}): Promise<AttemptWorkspace> {
  const runDir = runDirectory(options.root, options.runId);
  const artifactsDir = artifactsDirectory(runDir, options.stageId, options.attempt);
  await fs.mkdir(artifactsDir, { recursive: true });
  if (options.parked && (await fs.readdir(artifactsDir)).length === 0) await materializeSnapshot(options.parked.artifacts, options.blobs, artifactsDir);
  if (options.checkout.kind === 'path') {
    return { runDir, checkoutDir: options.checkout.path, artifactsDir, inPlace: true };
  }
  const checkoutDir = path.join(runDir, 'checkout');
  await checkedOut(checkoutDir, options.checkout, options.gitEnv);
  const wanted = options.parked?.checkout ?? latestCheckoutSnapshot(options.events);
  if (wanted && (await readMarker(checkoutDir)) !== wanted) {
    // Materialized beside the checkout (snapshots only fill empty folders), then moved in.
    const incoming = `${checkoutDir}.incoming-${process.pid}-${Date.now()}`;
    await materializeSnapshot(wanted, options.blobs, incoming);
    await clearWorkingTree(checkoutDir);
    for (const entry of await fs.readdir(incoming)) await fs.rename(path.join(incoming, entry), path.join(checkoutDir, entry));
    await fs.rm(incoming, { recursive: true, force: true });
    await writeMarker(checkoutDir, wanted);
  }
  return { runDir, checkoutDir, artifactsDir, inPlace: false };
}

/** Checkouts being made in this process, by directory: concurrent attempts of a run wait for the one clone. */
const making = new Map<string, Promise<void>>();

async function checkedOut(dir: string, checkout: Checkout, env?: NodeJS.ProcessEnv): Promise<void> {
  const pending = making.get(dir);
  if (pending) return pending;
  if (await exists(path.join(dir, CHECKED_OUT))) return;
  const again = making.get(dir);
  if (again) return again;
  const made = createCheckout(dir, checkout, env).finally(() => making.delete(dir));
  making.set(dir, made);
  return made;
}

async function createCheckout(dir: string, checkout: Checkout, env?: NodeJS.ProcessEnv): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
  await fs.mkdir(path.dirname(dir), { recursive: true });
  try {
    if (checkout.kind === 'git') await cloneAtRef(dir, checkout.url, checkout.ref, { ...process.env, ...env, GIT_TERMINAL_PROMPT: '0' });
    else {
      await fs.mkdir(dir, { recursive: true });
      await run('git', ['init', '--quiet', dir]);
    }
    await fs.writeFile(path.join(dir, CHECKED_OUT), checkout.kind === 'git' ? checkout.ref : 'fresh');
  } catch (err) {
    await fs.rm(dir, { recursive: true, force: true });
    throw err;
  }
}

async function cloneAtRef(dir: string, url: string, ref: string, env: NodeJS.ProcessEnv): Promise<void> {
  try {
    await run('git', ['clone', '--quiet', '--no-checkout', '--', url, dir], { env });
  } catch (err) {
    throw new CheckoutFailed('checkout.clone_failed', `cloning ${withoutCredentials(url)} failed: ${withoutCredentials(lastLine(err))}`, true);
  }
  const found = (await resolve(dir, ref)) ?? (await resolve(dir, `refs/remotes/origin/${ref}`));
  if (!found) throw new CheckoutFailed('checkout.ref_not_found', `ref ${JSON.stringify(ref)} does not exist in ${withoutCredentials(url)}`, false);
  // A remote branch name becomes a local branch tracking it, as `git checkout <branch>` does.
  await run('git', ['-C', dir, 'checkout', '--quiet', ref, '--']);
}

/** The commit a ref names in the clone, or undefined when it names none. */
async function resolve(dir: string, ref: string): Promise<string | undefined> {
  if (ref.startsWith('-')) return undefined;
  try {
    const { stdout } = await run('git', ['-C', dir, 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

const withoutCredentials = (text: string) => text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]*@/gi, '$1');

function lastLine(err: unknown): string {
  const stderr = String((err as { stderr?: unknown }).stderr ?? '').trim();
  return stderr.split('\n').at(-1) || (err as Error).message;
}

async function clearWorkingTree(dir: string): Promise<void> {
  for (const entry of await fs.readdir(dir)) {
    if (entry !== '.git') await fs.rm(path.join(dir, entry), { recursive: true, force: true });
  }
}

export async function writeMarker(checkoutDir: string, digest: string): Promise<void> {
  if (await exists(path.join(checkoutDir, '.git'))) await fs.writeFile(path.join(checkoutDir, MARKER), digest);
}

async function readMarker(checkoutDir: string): Promise<string | undefined> {
  try {
    return (await fs.readFile(path.join(checkoutDir, MARKER), 'utf8')).trim();
  } catch {
    return undefined;
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch {
    return false;
  }
}
