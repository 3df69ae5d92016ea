/**
 * `sf projections rebuild`: empties every projected table and replays the whole log. The
 * truncation and the checkpoint reset commit together; the replay then commits batch by batch,
 * so an interrupted rebuild resumes like any projector from its checkpoint.
 */
import type { EventLog } from '@stageflow/eventlog';
import { sql, type Kysely } from 'kysely';
import { PROJECTED_TABLES, type Database } from '../schema';
import { DEFAULT_PROJECTOR } from './checkpoint';
import type { EventAdmission } from './decode';
import { FoldCache, project } from './project';

export interface RebuildOptions {
  readonly name?: string;
  readonly filter?: string;
  /** Messages (decisions) per transaction. Default 2000. */
  readonly batchSize?: number;
  readonly onProgress?: (progress: { messages: number; events: number; checkpoint: number }) => void;
  readonly signatures: EventAdmission;
}

export interface RebuildResult {
  /** Log messages (decisions) replayed. */
  readonly messages: number;
  /** Events in those messages. */
  readonly events: number;
  readonly batches: number;
  readonly checkpoint: number;
  readonly ms: number;
}

export async function rebuild(db: Kysely<Database>, log: EventLog, options: RebuildOptions): Promise<RebuildResult> {
  const started = performance.now();
  const name = options.name ?? DEFAULT_PROJECTOR;
  const filter = options.filter ?? 'sf.evt.run.>';
  const batchSize = options.batchSize ?? 2000;
  await db.transaction().execute(async (trx) => {
    await sql`truncate table ${sql.join(PROJECTED_TABLES.map((t) => sql.table(t)))}`.execute(trx);
    await trx.deleteFrom('projector_checkpoints').where('name', '=', name).execute();
  });
  const cache = new FoldCache();
  let messages = 0;
  let events = 0;
  let batches = 0;
  let checkpoint = 0;
  for (;;) {
    const end = await log.lastSequence();
    const read = await log.read(filter, checkpoint, batchSize);
    const done = read.length < batchSize;
    const result = await project(db, read, { name, cache, throughSeq: done ? end : undefined, signatures: options.signatures });
    messages += result.applied;
    events += result.events;
    batches += 1;
    checkpoint = result.checkpoint;
    options.onProgress?.({ messages, events, checkpoint });
    if (done) break;
  }
  return { messages, events, batches, checkpoint, ms: performance.now() - started };
}
