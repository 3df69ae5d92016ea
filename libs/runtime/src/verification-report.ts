/** `sf runs verify`: every attempt of a stage with its checks, their status and full evidence. */
import type { RunState } from '@stageflow/domain';
import type { BlobStore } from '@stageflow/eventlog';
import { CommandRefused } from '@stageflow/domain';
import { resolveEvidence } from './evidence';

export interface VerificationReport {
  readonly run_id: string;
  readonly stage_id: string;
  readonly status: string;
  readonly attempts: readonly {
    readonly n: number;
    readonly reason: string;
    readonly disposition: string;
    readonly failure: string | null;
    readonly started_at: string;
    readonly finished_at: string | null;
    /** Every emit the attempt's session rejected (soft rejects), in order. */
    readonly rejections: readonly string[];
    /** Reminder turns the session was sent. */
    readonly reminders: number;
    /** Each recorded agent turn's transcript blob (`sf runs transcript` resolves them). */
    readonly transcripts: readonly { readonly turn: number; readonly digest: string }[];
    readonly checks: readonly { id: string; type: string; phase: string; status: string; message?: string; evidence: Record<string, unknown>; started_at: string; finished_at: string }[];
  }[];
}

export async function verificationReport(state: RunState, stageId: string, blobs: BlobStore): Promise<VerificationReport> {
  const stage = state.stages[stageId];
  if (!stage) throw new CommandRefused('stage.not_found', `run ${state.runId} has no stage ${stageId}`);
  const attempts = [];
  for (const a of stage.attempts) {
    const checks = [];
    for (const c of a.checks) checks.push({ ...c, evidence: await resolveEvidence(c.evidence, blobs) });
    attempts.push({ n: a.n, reason: a.reason, disposition: a.disposition, failure: a.failure, started_at: a.startedAt, finished_at: a.finishedAt ?? null, rejections: a.rejections, reminders: a.reminders, transcripts: a.transcripts ?? [], checks });
  }
  return { run_id: state.runId, stage_id: stageId, status: stage.status, attempts };
}

export function formatVerification(report: VerificationReport): string {
  const lines = [`stage ${report.stage_id} of run ${report.run_id}: ${report.status}`];
  for (const a of report.attempts) {
    lines.push(`  attempt ${a.n} (${a.reason}): ${a.disposition}${a.failure ? ` — ${a.failure}` : ''}`);
    for (const r of a.rejections) lines.push(`    emit rejected: ${r}`);
    if (a.reminders) lines.push(`    reminders sent: ${a.reminders}`);
    if (a.transcripts.length) lines.push(`    transcripts: ${a.transcripts.length} turn(s) (sf runs transcript --run ${report.run_id} --stage ${report.stage_id} --attempt ${a.n})`);
    for (const c of a.checks) lines.push(`    ${c.status.padEnd(6)} ${c.id} (${c.type})${c.message ? `: ${c.message}` : ''}`);
  }
  return lines.join('\n');
}
