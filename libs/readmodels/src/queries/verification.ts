/**
 * A stage's verification record (`GET /api/runs/:runId/stages/:stageId/verification`): every
 * attempt in start order with its disposition and every check with its full evidence (blob
 * references resolved to their strings).
 */
import type { CheckStatus, Disposition, StageStatus } from '@stageflow/domain';
import type { Kysely } from 'kysely';
import type { Database } from '../schema';
import { iso, isoOrNull, withBlobsResolved } from './blobs';

export interface CheckRecord {
  readonly id: string;
  readonly type: string;
  readonly phase: 'after';
  readonly status: CheckStatus;
  readonly message?: string;
  readonly evidence: { readonly [key: string]: unknown };
  readonly started_at: string;
  readonly finished_at: string;
}

export interface AttemptVerification {
  readonly n: number;
  readonly reason: string;
  readonly phase: string;
  readonly disposition: Disposition;
  readonly failure: string | null;
  readonly failure_kind?: string;
  readonly started_at: string;
  readonly finished_at: string | null;
  readonly deadline_at: string;
  readonly checks: readonly CheckRecord[];
}

export interface StageVerification {
  readonly run_id: string;
  readonly stage_id: string;
  readonly status: StageStatus;
  readonly failure?: string;
  readonly attempts: readonly AttemptVerification[];
}

export async function getStageVerification(
  db: Kysely<Database>,
  runId: string,
  stageId: string,
): Promise<StageVerification | undefined> {
  const stage = await db
    .selectFrom('stages')
    .select(['status', 'failure'])
    .where('run_id', '=', runId)
    .where('stage_id', '=', stageId)
    .executeTakeFirst();
  if (!stage) return undefined;
  const [attempts, checks] = await Promise.all([
    db.selectFrom('attempts').selectAll().where('run_id', '=', runId).where('stage_id', '=', stageId).orderBy('ordinal').execute(),
    db
      .selectFrom('checks')
      .selectAll()
      .where('run_id', '=', runId)
      .where('stage_id', '=', stageId)
      .orderBy('attempt')
      .orderBy('ordinal')
      .execute(),
  ]);
  const evidence = await withBlobsResolved<{ [key: string]: unknown }>(db, checks.map((c) => c.evidence));
  const byAttempt = new Map<number, CheckRecord[]>();
  checks.forEach((c, i) => {
    const record: CheckRecord = {
      id: c.check_id,
      type: c.type,
      phase: 'after',
      status: c.status as CheckStatus,
      ...(c.message !== null ? { message: c.message } : {}),
      evidence: evidence[i],
      started_at: iso(c.started_at),
      finished_at: iso(c.finished_at),
    };
    const list = byAttempt.get(c.attempt);
    if (list) list.push(record);
    else byAttempt.set(c.attempt, [record]);
  });
  return {
    run_id: runId,
    stage_id: stageId,
    status: stage.status as StageStatus,
    ...(stage.failure ? { failure: stage.failure } : {}),
    attempts: attempts.map((a) => ({
      n: a.n,
      reason: a.reason,
      phase: a.phase,
      disposition: a.disposition as Disposition,
      failure: a.failure,
      ...(a.failure_kind ? { failure_kind: a.failure_kind } : {}),
      started_at: iso(a.started_at),
      finished_at: isoOrNull(a.finished_at),
      deadline_at: iso(a.deadline_at),
      checks: byAttempt.get(a.n) ?? [],
    })),
  };
}
