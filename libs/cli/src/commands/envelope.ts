import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import type { StageEnvelope } from '@stageflow/domain';
import { loadConfig } from '@stageflow/runtime';
import { cliSummary, type CliRunSummary } from '../cli-summary';
import { UsageError, type Output } from '../output';
import { openLog } from '../session';

interface EnvelopeFlags {
  from?: string;
  run?: string;
  stage: string;
  format: string;
  detectStage?: string;
  json?: boolean;
}

/** Normalised deliverables for CI scripts: artifact paths made absolute. */
export interface Handoff {
  readonly stage_id: string;
  readonly status: StageEnvelope['status'];
  readonly summary: string;
  readonly payload: StageEnvelope['payload'] | null;
  readonly artifacts: readonly string[];
  readonly notes?: string;
}

async function readSummary(flags: EnvelopeFlags): Promise<CliRunSummary> {
  if ((flags.from === undefined) === (flags.run === undefined)) throw new UsageError('give --from <sf-run.json> or --run <id>');
  if (flags.from !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(fs.readFileSync(flags.from, 'utf8'));
    } catch (err) {
      throw new UsageError(`cannot read ${flags.from}: ${(err as Error).message}`);
    }
    const summary = parsed as CliRunSummary;
    if (!summary || !Array.isArray(summary.stages)) throw new UsageError(`${flags.from} is not a run summary (write it with: sf run --json --include stages)`);
    return summary;
  }
  const infra = await openLog();
  try {
    const { state } = await infra.runs.load(flags.run!);
    if (!state.exists) throw new UsageError(`run ${flags.run} not found`);
    return cliSummary(state, loadConfig(), true);
  } finally {
    await infra.close();
  }
}

function stageEnvelope(summary: CliRunSummary, stageId: string): StageEnvelope {
  const stage = summary.stages.find((s) => s.id === stageId);
  if (!stage) throw new UsageError(`run ${summary.run_id} has no stage ${stageId}`);
  if (stage.envelope === undefined) throw new UsageError(`the summary has no envelopes (write it with: sf run --json --include stages)`);
  if (stage.envelope === null) throw new UsageError(`stage ${stageId} has no envelope (status ${stage.status})`);
  return stage.envelope;
}

export function detectSkipped(summary: CliRunSummary, detectStage: string): boolean {
  const stage = summary.stages.find((s) => s.id === detectStage);
  if (!stage) throw new UsageError(`run ${summary.run_id} has no stage ${detectStage}`);
  if (stage.status === 'skipped') return true;
  const choice = stage.envelope?.fork_choice;
  return Array.isArray(choice) && choice.length === 0;
}

export function handoff(summary: CliRunSummary, stageId: string): Handoff {
  const envelope = stageEnvelope(summary, stageId);
  const base = summary.run_dir;
  return {
    stage_id: stageId,
    status: envelope.status,
    summary: envelope.summary,
    payload: envelope.payload ?? null,
    artifacts: envelope.artifacts.map((a) => (path.isAbsolute(a) || !base ? a : path.join(base, a))),
    ...(envelope.notes ? { notes: envelope.notes } : {}),
  };
}

export function registerEnvelope(program: Command, out: Output, setExit: (code: number) => void): void {
  program
    .command('envelope')
    .description('read envelopes (for CI)')
    .command('get')
    .description('print a stage\'s envelope, from a saved run summary or the store')
    .option('--from <file>', 'a summary written by: sf run --json --include stages')
    .option('--run <id>', 'read the run from the store instead')
    .requiredOption('--stage <id>', 'stage id')
    .option('--format <format>', 'envelope | handoff', 'envelope')
    .option('--detect-stage <id>', 'handoff: print {"skipped": true} when this stage was skipped or chose no fork')
    .option('--json', 'print JSON (the only format there is; kept for the reference\'s scripts)')
    .action(async (flags: EnvelopeFlags) => {
      if (flags.format !== 'envelope' && flags.format !== 'handoff') throw new UsageError(`--format ${flags.format}: envelope or handoff`);
      const summary = await readSummary(flags);
      if (flags.format === 'handoff' && flags.detectStage && detectSkipped(summary, flags.detectStage)) {
        out.out(JSON.stringify({ skipped: true }));
      } else {
        out.out(JSON.stringify(flags.format === 'envelope' ? stageEnvelope(summary, flags.stage) : handoff(summary, flags.stage), null, 2));
      }
      setExit(0);
    });
}
