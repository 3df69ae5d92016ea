/**
 * A stage's envelope (`GET /api/runs/:runId/stages/:stageId/envelope`, `sf envelope get`): the
 * one the stage succeeded with, else the one its latest attempt left; undefined when none did.
 */
import type { StageEnvelope } from '@stageflow/domain';
import type { Kysely } from 'kysely';
import type { Database } from '../schema';
import { withBlobsResolved } from './blobs';

export interface EnvelopeRecord {
  readonly run_id: string;
  readonly stage_id: string;
  readonly attempt: number;
  /** True when this is the envelope the stage succeeded with (verified). */
  readonly accepted: boolean;
  readonly envelope: StageEnvelope;
}

export async function getEnvelope(db: Kysely<Database>, runId: string, stageId: string): Promise<EnvelopeRecord | undefined> {
  const row = await db
    .selectFrom('envelopes')
    .selectAll()
    .where('run_id', '=', runId)
    .where('stage_id', '=', stageId)
    .orderBy('accepted', 'desc')
    .orderBy('attempt', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  const [envelope] = await withBlobsResolved<StageEnvelope>(db, [row.envelope]);
  return { run_id: row.run_id, stage_id: row.stage_id, attempt: row.attempt, accepted: row.accepted, envelope };
}
