/** `artifact` (after phase): the file on disk in the attempt's artifact directory, judged by inspectArtifact. */
import { inspectArtifact } from '../artifact/inspect';
import type { ArtifactCheck } from '../domain';
import type { AfterCheckContext } from '../types';
import { outcome, type CheckOutcome } from './outcome';

export async function runArtifactCheck(item: ArtifactCheck, ctx: AfterCheckContext): Promise<CheckOutcome> {
  const inspection = await inspectArtifact(item, ctx.artifactsDir);
  return outcome(inspection.problems, { ...inspection.evidence });
}
