/**
 * `sf envelope get`: a stage's envelope for CI, from a file written by
 * `sf run --json --include stages` (no store, no database, no servers) or from the store
 * (`--run`). `--format envelope` prints the envelope as emitted; `--format handoff` prints the
 * deliverables of a verified stage with absolute artifact paths, or `{"skipped": true}` when
 * there is nothing to deliver: the `--detect-stage` was skipped or chose no fork
 * (`fork_choice: []`), or the stage itself was skipped.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import type { StageEnvelope } from '@stageflow/domain';
import { cliSummary, type CliRunSummary } from '../cli-summary';
import { UsageError, type Output } from '../output';
import { openLog } from '../session';

export type EnvelopeFormat = 'envelope' | 'handoff';

export interface EnvelopeRequest {
  readonly stage: string;
  readonly format: EnvelopeFormat;
  readonly detectStage?: string;
}

/** The deliverables of a verified stage, for CI scripts: artifact paths made absolute. */
export interface Handoff {
  readonly skipped: false;
  readonly run_id: string;
  /** Where the run's files live (embedded default); artifact paths are relative to it. */
  readonly run_dir?: string;
  readonly stage_id: string;
  readonly status: StageEnvelope['status'];
  readonly summary: string;
  readonly payload: StageEnvelope['payload'] | null;
  readonly artifacts: readonly string[];
  readonly notes?: string;
}

export type HandoffOutput = Handoff | { readonly skipped: true };

/** Reads a summary written by `sf run --json --include stages`; touches nothing else. */
export function readSummaryFile(file: string): CliRunSummary {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const summary = parsed as CliRunSummary;
  if (!summary || typeof summary.run_id !== 'string' || !Array.isArray(summary.stages)) {
    throw new UsageError(`${file} is not a run summary (write it with: sf run --json --include stages)`);
  }
  return summary;
}

/** The same summary `sf run --json --include stages` prints, folded from the store. */
export async function readSummaryFromStore(runId: string): Promise<CliRunSummary> {
  const infra = await openLog();
  try {
    const { state } = await infra.runs.load(runId);
    if (!state.exists) throw new UsageError(`run ${runId} not found`);
    return cliSummary(state, infra.config, true);
  } finally {
    await infra.close();
  }
}

function stageOf(summary: CliRunSummary, stageId: string): CliRunSummary['stages'][number] {
  const stage = summary.stages.find((s) => s.id === stageId);
  if (!stage) throw new UsageError(`run ${summary.run_id} has no stage ${stageId}`);
  return stage;
}

export function stageEnvelope(summary: CliRunSummary, stageId: string): StageEnvelope {
  const stage = stageOf(summary, stageId);
  if (stage.envelope === undefined) throw new UsageError(`the summary has no envelopes (write it with: sf run --json --include stages)`);
  if (stage.envelope === null) throw new UsageError(`stage ${stageId} has no envelope (status ${stage.status})`);
  return stage.envelope;
}

/** True when the stage was skipped or emitted `fork_choice: []` (chose no successor). */
export function detectSkipped(summary: CliRunSummary, detectStage: string): boolean {
  const stage = stageOf(summary, detectStage);
  if (stage.status === 'skipped') return true;
  const choice = stage.envelope?.fork_choice;
  return Array.isArray(choice) && choice.length === 0;
}

/** The verified deliverables of a stage; refused unless the stage succeeded. */
export function handoff(summary: CliRunSummary, stageId: string): Handoff {
  const stage = stageOf(summary, stageId);
  if (stage.status !== 'succeeded') throw new UsageError(`stage ${stageId} has no verified deliverables (status ${stage.status})`);
  const envelope = stageEnvelope(summary, stageId);
  const base = summary.run_dir;
  return {
    skipped: false,
    run_id: summary.run_id,
    ...(base ? { run_dir: base } : {}),
    stage_id: stageId,
    status: envelope.status,
    summary: envelope.summary,
    payload: envelope.payload ?? null,
    artifacts: envelope.artifacts.map((a) => (path.isAbsolute(a) || !base ? a : path.join(base, a))),
    ...(envelope.notes ? { notes: envelope.notes } : {}),
  };
}

export function handoffOutput(summary: CliRunSummary, request: Omit<EnvelopeRequest, 'format'>): HandoffOutput {
  if (request.detectStage !== undefined && detectSkipped(summary, request.detectStage)) return { skipped: true };
  if (stageOf(summary, request.stage).status === 'skipped') return { skipped: true };
  return handoff(summary, request.stage);
}

/** What `sf envelope get` prints for a summary. */
export function envelopeOutput(summary: CliRunSummary, request: EnvelopeRequest): StageEnvelope | HandoffOutput {
  switch (request.format) {
    case 'envelope':
      return stageEnvelope(summary, request.stage);
    case 'handoff':
      return handoffOutput(summary, request);
    default: {
      const unreachable: never = request.format;
      throw new UsageError(`--format ${String(unreachable)}: envelope or handoff`);
    }
  }
}

interface EnvelopeFlags {
  from?: string;
  run?: string;
  stage: string;
  format: string;
  detectStage?: string;
  json?: boolean;
}

export function registerEnvelope(program: Command, out: Output, setExit: (code: number) => void): void {
  program
    .command('envelope')
    .description('read envelopes (for CI)')
    .command('get')
    .description('print a stage\'s envelope, from a saved run summary or the store')
    .option('--from <file>', 'a summary written by: sf run --json --include stages (needs no store, database or server)')
    .option('--run <id>', 'read the run from the store instead')
    .requiredOption('--stage <id>', 'stage id')
    .option('--format <format>', 'envelope | handoff', 'envelope')
    .option('--detect-stage <id>', 'handoff: print {"skipped": true} when this stage was skipped or chose no fork')
    .option('--json', 'print JSON (the only format there is; kept for the reference\'s scripts)')
    .action(async (flags: EnvelopeFlags) => {
      if (flags.format !== 'envelope' && flags.format !== 'handoff') throw new UsageError(`--format ${flags.format}: envelope or handoff`);
      if ((flags.from === undefined) === (flags.run === undefined)) throw new UsageError('give --from <sf-run.json> or --run <id>');
      if (flags.detectStage !== undefined && flags.format !== 'handoff') throw new UsageError('--detect-stage works with --format handoff');
      const summary = flags.from !== undefined ? readSummaryFile(flags.from) : await readSummaryFromStore(flags.run!);
      const request: EnvelopeRequest = { stage: flags.stage, format: flags.format, ...(flags.detectStage !== undefined ? { detectStage: flags.detectStage } : {}) };
      out.out(JSON.stringify(envelopeOutput(summary, request), null, 2));
      setExit(0);
    });
}
