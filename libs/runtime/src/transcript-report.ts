/** `sf runs transcript`: an attempt's recorded agent turns, resolved from the blob store. */
import { CommandRefused, type RunState } from '@stageflow/domain';
import type { BlobStore } from '@stageflow/eventlog';

export interface TranscriptReport {
  readonly run_id: string;
  readonly stage_id: string;
  readonly attempt: number;
  /** In recording order; `transcript` is null when its blob is missing from this store. */
  readonly turns: readonly { readonly turn: number; readonly digest: string; readonly transcript: unknown }[];
}

export async function transcriptReport(state: RunState, stageId: string, attempt: number, blobs: BlobStore): Promise<TranscriptReport> {
  const stage = state.stages[stageId];
  if (!stage) throw new CommandRefused('stage.not_found', `run ${state.runId} has no stage ${stageId}`);
  const found = stage.attempts.find((a) => a.n === attempt);
  if (!found) throw new CommandRefused('attempt.not_found', `stage ${stageId} of run ${state.runId} has no attempt ${attempt}`);
  const turns = [];
  for (const t of found.transcripts ?? []) {
    const bytes = await blobs.get(t.digest);
    turns.push({ turn: t.turn, digest: t.digest, transcript: bytes ? (JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown) : null });
  }
  return { run_id: state.runId, stage_id: stageId, attempt, turns };
}

interface ToolCallView {
  readonly name?: string;
  readonly args?: unknown;
  readonly result?: { readonly content?: string; readonly isError?: boolean };
}

export function formatTranscript(report: TranscriptReport): string {
  const lines = [`transcript of ${report.stage_id} attempt ${report.attempt} (run ${report.run_id}): ${report.turns.length} turn(s)`];
  for (const t of report.turns) {
    const body = t.transcript as { input?: { kind?: string }; toolCalls?: readonly ToolCallView[]; result?: { kind?: string; text?: string; message?: string } } | null;
    if (!body) {
      lines.push(`  turn ${t.turn}: transcript ${t.digest} is not in the blob store`);
      continue;
    }
    lines.push(`  turn ${t.turn} (${body.input?.kind ?? '?'}) → ${body.result?.kind ?? '?'}`);
    for (const call of body.toolCalls ?? []) {
      lines.push(`    ${call.result?.isError ? '✖' : '✔'} ${call.name} ${clip(typeof call.args === 'string' ? call.args : JSON.stringify(call.args))}`);
      if (call.result?.content) lines.push(`      → ${clip(call.result.content)}`);
    }
    const text = body.result?.text ?? body.result?.message;
    if (text) lines.push(`    agent: ${clip(text)}`);
  }
  return lines.join('\n');
}

function clip(text: string | undefined, max = 400): string {
  if (text === undefined) return '';
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
