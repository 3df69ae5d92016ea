/**
 * The run summary (`GET /api/runs/:runId`) read from the tables. For the same events it equals
 * `summarizeRun(foldRun(events), options)` of @stageflow/domain, field for field, provided event
 * times are in `Date#toISOString` form (timestamps are stored as timestamptz).
 */
import {
  securityNotices,
  type SignatureRefusal,
} from '@stageflow/domain';
import type {
  AttemptSummary,
  CheckStatus,
  Disposition,
  RunStatus,
  RunSummary,
  SkipReason,
  StageEnvelope,
  StageStatus,
  StageSummary,
} from '@stageflow/domain';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema';
import { iso, isoOrNull, withBlobsResolved } from './blobs';

export interface SummaryOptions {
  /** Adds each stage's accepted envelope (or its last emitted one, or null) as `envelope`. */
  readonly includeEnvelopes?: boolean;
}

export async function getRunSummary(
  db: Kysely<Database>,
  runId: string,
  options: SummaryOptions = {},
): Promise<RunSummary | undefined> {
  const run = await db.selectFrom('runs').selectAll().where('run_id', '=', runId).executeTakeFirst();
  if (!run) return undefined;
  const [stages, attempts, checks, envelopes, refusals] = await Promise.all([
    db.selectFrom('stages').selectAll().where('run_id', '=', runId).execute(),
    db.selectFrom('attempts').selectAll().where('run_id', '=', runId).orderBy('stage_id').orderBy('ordinal').execute(),
    db
      .selectFrom('checks')
      .select(['stage_id', 'attempt', 'check_id', 'type', 'phase', 'status'])
      .where('run_id', '=', runId)
      .orderBy('stage_id')
      .orderBy('attempt')
      .orderBy('ordinal')
      .execute(),
    options.includeEnvelopes ? envelopesOf(db, runId) : Promise.resolve(new Map<string, StageEnvelope>()),
    refusalsOf(db, runId),
  ]);
  const stageRows = new Map(stages.map((s) => [s.stage_id, s]));
  const checksOf = groupBy(checks, (c) => `${c.stage_id}\u0000${c.attempt}`);
  const attemptsOf = groupBy(attempts, (a) => a.stage_id);

  const stageSummaries = run.stage_order.map((stageId): StageSummary => {
    const s = stageRows.get(stageId);
    const status = (s?.status ?? 'pending') as StageStatus;
    const waitingFor = status === 'waiting' ? 'answer' : s?.pending_recovery_attempt != null ? 'recovery_decision' : undefined;
    return {
      id: stageId,
      status,
      attempts: (attemptsOf.get(stageId) ?? []).map(
        (a): AttemptSummary => ({
          n: a.n,
          reason: a.reason,
          disposition: a.disposition as Disposition,
          failure: a.failure,
          checks: (checksOf.get(`${stageId}\u0000${a.n}`) ?? []).map((c) => ({
            id: c.check_id,
            type: c.type,
            phase: 'after' as const,
            status: c.status as CheckStatus,
          })),
          started_at: iso(a.started_at),
          finished_at: isoOrNull(a.finished_at),
        }),
      ),
      ...(s?.skip_reason ? { skip_reason: s.skip_reason as SkipReason } : {}),
      ...(s?.skip_detail ? { skip_detail: s.skip_detail } : {}),
      ...(s?.failure ? { failure: s.failure } : {}),
      ...(waitingFor ? { waiting_for: waitingFor } : {}),
      ...(options.includeEnvelopes ? { envelope: envelopes.get(stageId) ?? null } : {}),
    };
  });

  return {
    run_id: run.run_id,
    pipeline: run.pipeline,
    status: run.status as RunStatus,
    ...(run.reason ? { reason: run.reason } : {}),
    started_at: iso(run.started_at),
    finished_at: isoOrNull(run.finished_at),
    labels: run.labels,
    stages: stageSummaries,
    ...(refusals.length ? { security: securityNotices({ refusals }) } : {}),
  };
}

/**
 * The run's refused verdicts and operator decisions, as its fold recorded them. The fold is text
 * (jsonb refuses the escaped U+0000 it may hold), read only when it has any.
 */
async function refusalsOf(db: Kysely<Database>, runId: string): Promise<SignatureRefusal[]> {
  const row = await db
    .selectFrom('run_folds')
    .select(sql<string | null>`case when strpos(state, '"refusals":') > 0 then state end`.as('state'))
    .where('run_id', '=', runId)
    .executeTakeFirst();
  if (!row?.state) return [];
  return (JSON.parse(row.state) as { run: { refusals?: SignatureRefusal[] } }).run.refusals ?? [];
}

/** stageId → accepted envelope, else the envelope of its latest attempt that left one. */
async function envelopesOf(db: Kysely<Database>, runId: string): Promise<Map<string, StageEnvelope>> {
  const rows = await db
    .selectFrom('envelopes')
    .select(['stage_id', 'envelope'])
    .where('run_id', '=', runId)
    .orderBy('stage_id')
    .orderBy('accepted', 'desc')
    .orderBy('attempt', 'desc')
    .execute();
  const first = new Map<string, unknown>();
  for (const row of rows) if (!first.has(row.stage_id)) first.set(row.stage_id, row.envelope);
  const resolved = await withBlobsResolved<StageEnvelope>(db, [...first.values()]);
  return new Map([...first.keys()].map((k, i) => [k, resolved[i]]));
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}
