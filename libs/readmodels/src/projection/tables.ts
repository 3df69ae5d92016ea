/**
 * How each projected table is written: its natural key, its columns, and which columns are
 * JSON (with the size above which their strings move to `evidence_blobs`).
 */
import type { Database } from '../schema';

/** A row as derived from a fold: JSON columns hold plain values until written. */
export type Row = { readonly [column: string]: unknown };

export interface TableSpec {
  readonly name: keyof Database;
  readonly key: readonly string[];
  readonly columns: readonly string[];
  /** JSON column → string size (bytes) above which a string is stored as a blob reference. */
  readonly json: { readonly [column: string]: number };
}

/** Strings longer than this (UTF-8 bytes) in evidence and archived bodies are stored once, by digest. */
export const BLOB_THRESHOLD = 4096;
/** Only strings PostgreSQL jsonb cannot hold (U+0000) leave these columns. */
const INLINE = Number.POSITIVE_INFINITY;

export const tables = {
  runs: {
    name: 'runs',
    key: ['run_id'],
    columns: ['run_id', 'pipeline', 'status', 'reason', 'labels', 'idempotency_key', 'stage_order', 'started_at', 'finished_at', 'updated_seq'],
    json: { labels: INLINE, stage_order: INLINE },
  },
  stages: {
    name: 'stages',
    key: ['run_id', 'stage_id'],
    columns: [
      'run_id', 'stage_id', 'status', 'skip_reason', 'skip_detail', 'failure_kind', 'failure', 'attempt_count',
      'pending_recovery_attempt', 'started_at', 'finished_at',
    ],
    json: {},
  },
  attempts: {
    name: 'attempts',
    key: ['run_id', 'stage_id', 'n'],
    columns: [
      'run_id', 'stage_id', 'n', 'ordinal', 'reason', 'phase', 'disposition', 'failure', 'failure_kind', 'guidance',
      'rejections', 'reminders', 'started_at', 'finished_at', 'deadline_at',
    ],
    json: {},
  },
  checks: {
    name: 'checks',
    key: ['run_id', 'stage_id', 'attempt', 'ordinal'],
    columns: [
      'run_id', 'stage_id', 'attempt', 'ordinal', 'check_id', 'type', 'phase', 'status', 'message', 'evidence',
      'started_at', 'finished_at',
    ],
    json: { evidence: BLOB_THRESHOLD },
  },
  operator_interactions: {
    name: 'operator_interactions',
    key: ['run_id', 'stage_id', 'exchange_id'],
    columns: [
      'run_id', 'stage_id', 'exchange_id', 'attempt', 'kind', 'question', 'question_detail', 'answer', 'decision',
      'asked_at', 'answered_at', 'answered_by',
    ],
    json: { question_detail: INLINE, answer: INLINE },
  },
  recovery_decisions: {
    name: 'recovery_decisions',
    key: ['run_id', 'stage_id', 'attempt'],
    columns: ['run_id', 'stage_id', 'attempt', 'opened_at', 'decision', 'guidance', 'decided_by', 'decided_at'],
    json: {},
  },
  envelopes: {
    name: 'envelopes',
    key: ['run_id', 'stage_id', 'attempt'],
    columns: ['run_id', 'stage_id', 'attempt', 'envelope', 'accepted'],
    json: { envelope: INLINE },
  },
} as const satisfies { readonly [name: string]: TableSpec };

export type RunTableName = keyof typeof tables;
export const RUN_TABLES = Object.keys(tables) as RunTableName[];

export const archiveTable: TableSpec = {
  name: 'event_archive',
  key: ['seq', 'position'],
  columns: ['seq', 'position', 'subject', 'type', 'run_id', 'at', 'body'],
  json: { body: BLOB_THRESHOLD },
};

export const foldsTable: TableSpec = {
  name: 'run_folds',
  key: ['run_id'],
  columns: ['run_id', 'last_seq', 'state'],
  json: {},
};

export const blobsTable: TableSpec = {
  name: 'evidence_blobs',
  key: ['digest'],
  columns: ['digest', 'encoding', 'size', 'content'],
  json: {},
};
