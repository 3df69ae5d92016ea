/**
 * Listing runs, newest first, with keyset pagination on (started_at, run_id). The cursor is
 * opaque; a page never repeats or skips a run that existed when the first page was read.
 */
import type { RunStatus } from '@stageflow/domain';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema';
import { isoOrNull } from './blobs';

export interface ListRunsQuery {
  readonly status?: RunStatus | readonly RunStatus[];
  readonly pipeline?: string;
  /** Only runs started at or after this instant. */
  readonly since?: string | Date;
  /** Page size, 1..500. Default 50. */
  readonly limit?: number;
  /** `next_cursor` of the previous page. */
  readonly cursor?: string;
}

export interface RunListItem {
  readonly run_id: string;
  readonly pipeline: string;
  readonly status: RunStatus;
  readonly reason?: string;
  readonly labels: { readonly [key: string]: string };
  readonly started_at: string;
  readonly finished_at: string | null;
}

export interface RunPage {
  readonly runs: readonly RunListItem[];
  /** Present when more runs may follow. */
  readonly next_cursor?: string;
}

export class InvalidCursorError extends Error {
  constructor(readonly cursor: string) {
    super(`invalid runs cursor ${JSON.stringify(cursor.slice(0, 80))}: pass next_cursor from a previous page unchanged`);
    this.name = 'InvalidCursorError';
  }
}

interface CursorKey {
  /** started_at exactly as PostgreSQL prints it (microseconds and offset kept). */
  readonly at: string;
  readonly runId: string;
}

const TIMESTAMP = /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d{1,6})?([+-]\d\d(:\d\d(:\d\d)?)?|Z)?$/;

const encodeCursor = (key: CursorKey): string => Buffer.from(JSON.stringify([key.at, key.runId]), 'utf8').toString('base64url');

function decodeCursor(cursor: string): CursorKey {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && typeof parsed[1] === 'string') {
      if (TIMESTAMP.test(parsed[0])) {
        return { at: parsed[0], runId: parsed[1] };
      }
    }
  } catch {
    // fall through
  }
  throw new InvalidCursorError(cursor);
}

export async function listRuns(db: Kysely<Database>, query: ListRunsQuery = {}): Promise<RunPage> {
  const limit = Math.min(500, Math.max(1, Math.floor(query.limit ?? 50)));
  let q = db
    .selectFrom('runs')
    .select(['run_id', 'pipeline', 'status', 'reason', 'labels', 'started_at', 'finished_at'])
    .select(sql<string>`started_at::text`.as('started_key'));
  if (query.status !== undefined) {
    const statuses: readonly string[] = typeof query.status === 'string' ? [query.status] : query.status;
    if (statuses.length === 0) return { runs: [] };
    q = q.where('status', 'in', statuses);
  }
  if (query.pipeline !== undefined) q = q.where('pipeline', '=', query.pipeline);
  if (query.since !== undefined) {
    const since = query.since instanceof Date ? query.since.toISOString() : query.since;
    q = q.where(sql<boolean>`started_at >= ${since}::timestamptz`);
  }
  if (query.cursor !== undefined) {
    const key = decodeCursor(query.cursor);
    q = q.where(sql<boolean>`(started_at, run_id) < (${key.at}::timestamptz, ${key.runId})`);
  }
  const rows = await q.orderBy('started_at', 'desc').orderBy('run_id', 'desc').limit(limit + 1).execute();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    runs: page.map((r) => ({
      run_id: r.run_id,
      pipeline: r.pipeline,
      status: r.status as RunStatus,
      ...(r.reason ? { reason: r.reason } : {}),
      labels: r.labels,
      started_at: r.started_at.toISOString(),
      finished_at: isoOrNull(r.finished_at),
    })),
    ...(rows.length > limit && last ? { next_cursor: encodeCursor({ at: last.started_key, runId: last.run_id }) } : {}),
  };
}
