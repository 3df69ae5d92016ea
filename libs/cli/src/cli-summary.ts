import * as path from 'node:path';
import { summarizeRun, type RunState, type RunSummary } from '@stageflow/domain';
import type { StageflowConfig } from '@stageflow/runtime';

/**
 * The run summary as the CLI prints it: the domain's summary plus, in the embedded default,
 * `run_dir` (where `stages/<id>/attempts/<n>/artifacts/` live), so a file written with
 * `sf run --json --include stages` can be turned into absolute artifact paths later.
 */
export type CliRunSummary = RunSummary & { readonly run_dir?: string };

export function cliSummary(state: RunState, config: StageflowConfig, includeStages: boolean): CliRunSummary {
  const summary = summarizeRun(state, { includeEnvelopes: includeStages });
  return config.mode === 'embedded' ? { ...summary, run_dir: path.join(config.home, 'runs', state.runId) } : summary;
}
