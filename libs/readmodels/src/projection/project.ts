/**
 * Applying a batch of stored run messages (each one decision, `{ events: [...] }`) to the read
 * model. Guarantees:
 * - one transaction: the rows, the blobs, the archive and the checkpoint commit together or not at all;
 * - messages with seq ≤ the checkpoint are skipped, so redelivery changes nothing;
 * - every write is an upsert of rows derived from the run's fold (see rows.ts), so even a replay
 *   past the checkpoint leaves the tables as they were;
 * - the result does not depend on how the messages were cut into batches;
 * - the archive keeps one row per event, keyed by (message seq, position in the decision).
 */
import type { RunEvent } from '@stageflow/domain';
import type { StoredMessage } from '@stageflow/eventlog';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../schema';
import type { Blob } from './blobs';
import { DEFAULT_PROJECTOR, lockCheckpoint, writeCheckpoint } from './checkpoint';
import { changedRows } from './diff';
import { decisionEvents, runIdOfSubject, type EventAdmission } from './decode';
import { emptyFold, foldMessage, type RunFold } from './fold';
import { deriveRows } from './rows';
import { archiveTable, blobsTable, foldsTable, RUN_TABLES, tables } from './tables';
import { toWriteRows, upsert, type WriteRow } from './write';

export interface ProjectOptions {
  /** Projector (checkpoint) name. Default `readmodels`. */
  readonly name?: string;
  /**
   * Advance the checkpoint to at least this sequence even without messages: the caller read
   * everything its filter matches up to here (sequences of other subjects need no projection).
   */
  readonly throughSeq?: number;
  /** Folds kept between batches by a single writer (rebuild); dropped whenever someone else wrote. */
  readonly cache?: FoldCache;
  /** Checks every verdict's and operator decision's signature, as every other reader does. */
  readonly signatures: EventAdmission;
}

export interface ProjectResult {
  /** Messages applied (above the checkpoint). */
  readonly applied: number;
  /** Events in the applied messages. */
  readonly events: number;
  /** Messages skipped as already applied. */
  readonly skipped: number;
  /** The checkpoint after the batch. */
  readonly checkpoint: number;
}

export class FoldCache {
  readonly folds = new Map<string, RunFold>();
  checkpoint = -1;
  constructor(readonly maxRuns = 20_000) {}

  remember(fold: RunFold): void {
    this.folds.delete(fold.run.runId);
    this.folds.set(fold.run.runId, fold);
    if (this.folds.size > this.maxRuns) this.folds.delete(this.folds.keys().next().value as string);
  }

  clear(): void {
    this.folds.clear();
    this.checkpoint = -1;
  }
}

interface Decoded {
  readonly seq: number;
  readonly message: StoredMessage;
  readonly events: readonly RunEvent[];
}

export async function project(
  db: Kysely<Database>,
  messages: readonly StoredMessage[],
  options: ProjectOptions,
): Promise<ProjectResult> {
  const name = options.name ?? DEFAULT_PROJECTOR;
  const cache = options.cache;
  try {
    const { result, folds } = await db.transaction().execute((trx) => applyBatch(trx, name, messages, options));
    if (cache) {
      folds.forEach((fold) => cache.remember(fold));
      cache.checkpoint = result.checkpoint;
    }
    return result;
  } catch (err) {
    cache?.clear();
    throw err;
  }
}

async function applyBatch(
  trx: Transaction<Database>,
  name: string,
  messages: readonly StoredMessage[],
  options: ProjectOptions,
): Promise<{ result: ProjectResult; folds: RunFold[] }> {
  // Batches are short, wide statements: JIT compilation would cost more than it saves.
  await sql`set local jit = off`.execute(trx);
  const checkpoint = await lockCheckpoint(trx, name);
  const cache = options.cache;
  if (cache && cache.checkpoint !== checkpoint) cache.clear();

  const seen = new Set<number>();
  const fresh: Decoded[] = [];
  const undecodable: { seq: number; subject: string; run_id: string; reason: string }[] = [];
  for (const message of messages) {
    const seq = Number(message.seq);
    if (seq <= checkpoint || seen.has(seq)) continue;
    seen.add(seq);
    try {
      fresh.push({ seq, message, events: decisionEvents(message, options.signatures) });
    } catch (error) {
      // Recorded, then passed: one message nobody can read never holds back every run's read model.
      undecodable.push({ seq, subject: message.subject, run_id: runIdOfSubject(message.subject), reason: error instanceof Error ? error.message : String(error) });
    }
  }
  if (undecodable.length) await trx.insertInto('undecodable_messages').values(undecodable).onConflict((c) => c.column('seq').doNothing()).execute();
  fresh.sort((a, b) => a.seq - b.seq);
  const last = Math.max(checkpoint, fresh.length ? fresh[fresh.length - 1].seq : 0, ...undecodable.map((u) => u.seq), options.throughSeq ?? 0);
  const skipped = messages.length - fresh.length - undecodable.length;
  if (fresh.length === 0) {
    if (last > checkpoint) await writeCheckpoint(trx, name, last);
    return { result: { applied: 0, events: 0, skipped, checkpoint: last }, folds: [] };
  }

  const byRun = new Map<string, Decoded[]>();
  // A message belongs to the run of its subject, as for every other reader of the log.
  for (const d of fresh) {
    const runId = runIdOfSubject(d.message.subject);
    const list = byRun.get(runId);
    if (list) list.push(d);
    else byRun.set(runId, [d]);
  }
  const previous = await loadFolds(trx, [...byRun.keys()], cache);

  const blobs = new Map<string, Blob>();
  const cells: { [T in (typeof RUN_TABLES)[number]]: WriteRow[] } = {
    runs: [], stages: [], attempts: [], checks: [], operator_interactions: [], recovery_decisions: [], envelopes: [],
  };
  const folds: RunFold[] = [];
  for (const [runId, decisions] of byRun) {
    const prev = previous.get(runId) ?? emptyFold();
    let next = prev;
    for (const d of decisions) next = foldMessage(next, d.seq, d.events);
    if (next === prev) continue;
    folds.push(next.run.runId ? next : { ...next, run: { ...next.run, runId } });
    const changed = changedRows(deriveRows(prev), deriveRows(next));
    for (const table of RUN_TABLES) cells[table].push(...toWriteRows(tables[table], changed[table], blobs));
  }

  const archive = toWriteRows(
    archiveTable,
    fresh.flatMap(({ seq, message, events }) =>
      events.map((event, position) => ({
        seq,
        position,
        subject: message.subject,
        type: event.type,
        run_id: event.runId,
        at: event.at,
        body: event,
      })),
    ),
    blobs,
  );
  const foldCells = folds.map((f): WriteRow => ({ run_id: f.run.runId, last_seq: f.lastSeq, state: JSON.stringify(f) }));

  await upsert(trx, blobsTable, [...blobs.values()].map((b) => ({ ...b })), 'nothing');
  await upsert(trx, archiveTable, archive, 'nothing');
  for (const table of RUN_TABLES) await upsert(trx, tables[table], cells[table], 'update');
  await upsert(trx, foldsTable, foldCells, 'update');
  await writeCheckpoint(trx, name, last);
  const events = fresh.reduce((n, d) => n + d.events.length, 0);
  return { result: { applied: fresh.length, events, skipped, checkpoint: last }, folds };
}

async function loadFolds(trx: Transaction<Database>, runIds: string[], cache?: FoldCache): Promise<Map<string, RunFold>> {
  const out = new Map<string, RunFold>();
  const missing = runIds.filter((id) => {
    const cached = cache?.folds.get(id);
    if (cached) out.set(id, cached);
    return !cached;
  });
  if (missing.length === 0) return out;
  const rows = await trx.selectFrom('run_folds').select(['run_id', 'state']).where('run_id', 'in', missing).execute();
  for (const row of rows) out.set(row.run_id, JSON.parse(row.state) as RunFold);
  return out;
}
