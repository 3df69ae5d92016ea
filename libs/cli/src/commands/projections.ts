/**
 * `sf projections rebuild`: recreates every read-model table from the event log, into Postgres
 * at DATABASE_URL or the embedded Postgres under STAGEFLOW_HOME. Refused (exit 1) while another
 * process serves the embedded Postgres; a rebuild that stops half-way resumes like a projector.
 * The read-model library (pg, Kysely) is loaded only when the command runs: every other `sf`
 * command starts without it.
 */
import * as path from 'node:path';
import type { Command } from 'commander';
import { loadConfig, type StageflowConfig } from '@stageflow/runtime';
import { UsageError, type Output } from '../output';
import { openLog } from '../session';

export interface RebuildReport {
  readonly database: 'postgres' | 'embedded';
  readonly schema: string;
  /** Log messages (decisions) replayed. */
  readonly messages: number;
  readonly events: number;
  readonly batches: number;
  readonly checkpoint: number;
  readonly ms: number;
  readonly events_per_second: number;
}

/** The embedded default keeps its read models here, under STAGEFLOW_HOME. */
export const embeddedReadModelDir = (config: StageflowConfig): string => path.join(config.home, 'postgres');

export async function rebuildProjections(config: StageflowConfig, options: { schema?: string } = {}): Promise<RebuildReport> {
  const { EmbeddedPostgresError, openReadModelDb, readModelSchema, rebuild } = await import('@stageflow/readmodels');
  const schema = options.schema ?? readModelSchema(config.namespace);
  const infra = await openLog(config);
  try {
    let target;
    try {
      target = await openReadModelDb({ databaseUrl: config.databaseUrl, embeddedDir: embeddedReadModelDir(config), schema });
    } catch (err) {
      if (err instanceof EmbeddedPostgresError) throw new UsageError(err.message);
      throw err;
    }
    try {
      const result = await rebuild(target.db, infra.log, { filter: `${config.namespace}.evt.run.>`, signatures: infra.runs.signatures });
      return {
        database: target.kind,
        schema,
        messages: result.messages,
        events: result.events,
        batches: result.batches,
        checkpoint: result.checkpoint,
        ms: Math.round(result.ms),
        events_per_second: result.ms > 0 ? Math.round((result.events / result.ms) * 1000) : 0,
      };
    } finally {
      await target.close();
    }
  } finally {
    await infra.close();
  }
}

export function formatRebuild(report: RebuildReport): string {
  return (
    `rebuilt the read models (${report.database}, schema ${report.schema}) from ${report.events} events ` +
    `in ${report.messages} decisions: ${report.ms} ms, ${report.events_per_second} events/s`
  );
}

export function registerProjections(program: Command, out: Output, setExit: (code: number) => void): void {
  program
    .command('projections')
    .description('read models (Postgres) projected from the event log')
    .command('rebuild')
    .description('recreate every read-model table from the event log')
    .option('--schema <name>', 'schema holding the tables (default: the namespace\'s, stageflow for sf)')
    .option('--json', 'print the result as JSON')
    .action(async (flags: { schema?: string; json?: boolean }) => {
      const report = await rebuildProjections(loadConfig(), flags.schema !== undefined ? { schema: flags.schema } : {});
      out.out(flags.json ? JSON.stringify(report, null, 2) : formatRebuild(report));
      setExit(0);
    });
}
