/**
 * Self-check (`sf stage check`, the `check_outputs` tool, the stop hook): the required outputs are
 * the stage's after-phase `artifact` items, judged by the SAME inspectArtifact the verifier uses,
 * plus freshness: each must have been written by this attempt. Advisory only: the after-phase
 * checks decide.
 */
import { inspectArtifact } from './artifact/inspect';
import type { ArtifactCheck, VerifyItem } from './domain';
import { CheckCannotRunError } from './errors';

/**
 * Kernel file timestamps come from a coarse clock that may lag the wall clock by a tick, so a file
 * written just after `attemptStartedAt` can carry an mtime slightly before it.
 */
export const MTIME_SLACK_MS = 20;

interface SelfCheckBase {
  readonly items: readonly VerifyItem[];
  /** This attempt's artifact directory. */
  readonly artifactsDir: string;
}

/** Freshness by wall clock: the file's mtime is not before the attempt started. */
interface ByStartTime extends SelfCheckBase {
  readonly attemptStartedAt: Date | number;
  readonly baselineMtimes?: undefined;
}

/** Freshness by baseline: the file did not exist at the baseline, or its mtime changed since. */
interface ByBaseline extends SelfCheckBase {
  /** Relative path (as declared) → mtimeMs of the files present when the attempt started. */
  readonly baselineMtimes: Readonly<Record<string, number>>;
  readonly attemptStartedAt?: undefined;
}

export type SelfCheckInput = ByStartTime | ByBaseline;

export interface SelfCheckResult {
  readonly ok: boolean;
  /** One line per unmet requirement, naming the check id and path. */
  readonly problems: readonly string[];
  /** `id (path)` of every required output considered. */
  readonly checked: readonly string[];
}

export function requiredOutputs(items: readonly VerifyItem[]): ArtifactCheck[] {
  return items.filter((item): item is ArtifactCheck => item.type === 'artifact' && item.when.includes('after'));
}

function isFresh(input: SelfCheckInput, path: string, mtimeMs: number): boolean {
  if (input.baselineMtimes !== undefined) {
    const before = input.baselineMtimes[path];
    return before === undefined || before !== mtimeMs;
  }
  const started = typeof input.attemptStartedAt === 'number' ? input.attemptStartedAt : input.attemptStartedAt.getTime();
  return mtimeMs >= started - MTIME_SLACK_MS;
}

export async function checkRequiredOutputs(input: SelfCheckInput): Promise<SelfCheckResult> {
  const problems: string[] = [];
  const checked: string[] = [];
  for (const item of requiredOutputs(input.items)) {
    const label = `${item.id} (${item.path ?? '?'})`;
    checked.push(label);
    try {
      const inspection = await inspectArtifact(item, input.artifactsDir);
      for (const problem of inspection.problems) problems.push(`${item.id}: ${problem}`);
      if (inspection.mtimeMs !== undefined && item.path !== undefined && !isFresh(input, item.path, inspection.mtimeMs)) {
        problems.push(`${item.id}: ${item.path} was not written by this attempt`);
      }
    } catch (error) {
      if (!(error instanceof CheckCannotRunError)) throw error;
      problems.push(`${item.id}: ${error.message}`);
    }
  }
  return { ok: problems.length === 0, problems, checked };
}

/** Text for `sf stage check`; the caller exits 0 when `result.ok`, else 1. */
export function formatSelfCheck(result: SelfCheckResult): string {
  if (result.checked.length === 0) return 'No required outputs are declared for this stage.\n';
  if (result.ok) {
    return `All ${result.checked.length} required output(s) are present, written by this attempt and valid:\n${result.checked.map((label) => `  ok  ${label}\n`).join('')}`;
  }
  return `${result.problems.length} problem(s) with required outputs:\n${result.problems.map((problem) => `  - ${problem}\n`).join('')}The verifier runs the same checks after the turn ends; fix these before emitting success.\n`;
}
