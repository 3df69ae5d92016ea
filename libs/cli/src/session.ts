/**
 * Running a run in the foreground: `sf run`, and every command that unblocks an embedded run
 * (`recover`, `answer`, `retry`, `resume`) continue through here, with the same output and exit
 * codes. In the embedded default the services run in this process; against a cluster this
 * process only follows the run's events.
 */
import type { RunEvent } from '@stageflow/domain';
import type { AgentSpec } from '@stageflow/runtime';
import { loadConfig, openInfrastructure, type Infrastructure, type StageflowConfig } from '@stageflow/runtime';
import { cliSummary } from './cli-summary';
import type { Engine } from './engine';
import { exitCodeFor } from './exit-codes';
import { followRun } from './follow';
import type { Output } from './output';
import { board, progressLine } from './progress';

export interface ForegroundOptions {
  readonly json: boolean;
  readonly includeStages: boolean;
  readonly agent?: AgentSpec;
}

/** Opens what a command needs: the whole engine when embedded, only the log against a cluster. */
export async function openSession(config: StageflowConfig = loadConfig(), agent?: AgentSpec): Promise<{ infra: Infrastructure; engine?: Engine; close(): Promise<void> }> {
  if (config.mode === 'embedded') {
    // The services load only when a command runs them.
    const { startEngine } = await import('./engine');
    const engine = await startEngine({ config, agent });
    return { infra: engine.infra, engine, close: () => engine.stop() };
  }
  const infra = await openInfrastructure(config);
  return { infra, close: () => infra.close() };
}

/** Opens only the log (read commands and decisions that need no services). */
export async function openLog(config: StageflowConfig = loadConfig()): Promise<Infrastructure> {
  return openInfrastructure(config);
}

export async function runInForeground(infra: Infrastructure, runId: string, out: Output, options: ForegroundOptions, printFromStart = false): Promise<number> {
  const onEvent = (event: RunEvent) => {
    if (options.json) return;
    const line = progressLine(event);
    if (line) out.out(line);
  };
  const stopOnSignal = new AbortController();
  const onSigint = () => stopOnSignal.abort();
  process.once('SIGINT', onSigint);
  try {
    const result = await followRun(infra.runs, runId, onEvent, { signal: stopOnSignal.signal, fromStart: printFromStart });
    const summary = cliSummary(result.state, infra.config, options.includeStages);
    if (options.json) out.out(JSON.stringify(summary, null, 2));
    else out.out(`\n${board(summary)}`);
    return exitCodeFor(result.status);
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}
