/**
 * `sf projections rebuild`: empties every projected table and replays the whole log. The
 * truncation and the checkpoint reset commit together; the replay then commits batch by batch,
 * so an interrupted rebuild resumes like any projector from its checkpoint.
 */
import type { EventLog } from '@stageflow/eventlog';
import { sql, type Kysely } from 'kysely';
import { PROJECTED_TABLES, type Database } from '../schema';
import { DEFAULT_PROJECTOR } from './checkpoint';
import { FoldCache, project } from './project';

export interface RebuildOptions {
  readonly name?: string;
  readonly filter?: string;
  /** Events per transaction. Default 2000. */
  readonly batchSize?: number;
  readonly onProgress?: (progress: { events: number; checkpoint: number }) => void;
}

export interface RebuildResult {
  readonly events: number;
  readonly batches: number;
  readonly checkpoint: number;
  readonly ms: number;
}

export async function rebuild(db: Kysely<Database>, log: EventLog, options: RebuildOptions = {}): Promise<RebuildResult> {
  const started = performance.now();
  const name = options.name ?? DEFAULT_PROJECTOR;
  const filter = options.filter ?? 'sf.evt.run.>';
  const batchSize = options.batchSize ?? 2000;
  await db.transaction().execute(async (trx) => {
    await sql`truncate table ${sql.join(PROJECTED_TABLES.map((t) => sql.table(t)))}`.execute(trx);
    await trx.deleteFrom('projector_checkpoints').where('name', '=', name).execute();
  });
  const cache = new FoldCache();
  let events = 0;
  let batches = 0;
  let checkpoint = 0;
  for (;;) {
    const end = await log.lastSequence();
    const messages = await log.read(filter, checkpoint, batchSize);
    const done = messages.length < batchSize;
    const result = await project(db, messages, { name, cache, throughSeq: done ? end : undefined });
    events += result.applied;
    batches += 1;
    checkpoint = result.checkpoint;
    options.onProgress?.({ events, checkpoint });
    if (done) break;
  }
  return { events, batches, checkpoint, ms: performance.now() - started };
}
