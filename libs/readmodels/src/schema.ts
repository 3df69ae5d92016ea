/**
 * The read-model tables as Kysely sees them. Every table is a projection of the event log:
 * `sf projections rebuild` recreates all of them from the log, so none holds anything the log
 * does not. Timestamps are `timestamptz`: written as ISO strings, read back as `Date`.
 */
import type { ColumnType } from 'kysely';

/** A `timestamptz` column: ISO string in, `Date` out. */
export type Timestamp = ColumnType<Date, string, string>;
export type NullableTimestamp = ColumnType<Date | null, string | null, string | null>;

/** Any JSON value as stored in a `jsonb` column (large strings replaced by `{"$blob": digest}`). */
export type Json = JsonValue;
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
type JsonColumn<T = Json> = ColumnType<T, string, string>;

export interface RunsTable {
  run_id: string;
  pipeline: string;
  /** runStatus() of the folded run: running | waiting | succeeded | failed | stopped | error. */
  status: string;
  reason: string | null;
  labels: JsonColumn<{ [key: string]: string }>;
  idempotency_key: string | null;
  /** Stage ids in pipeline (YAML) order. */
  stage_order: JsonColumn<string[]>;
  started_at: Timestamp;
  finished_at: NullableTimestamp;
  /** Stream sequence of the last event that changed this run's projected rows. */
  updated_seq: ColumnType<string, number, number>;
}

export interface StagesTable {
  run_id: string;
  stage_id: string;
  status: string;
  skip_reason: string | null;
  skip_detail: string | null;
  failure_kind: string | null;
  failure: string | null;
  attempt_count: number;
  /** Set while a manual recovery decision is pending on this stage. */
  pending_recovery_attempt: number | null;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
}

export interface AttemptsTable {
  run_id: string;
  stage_id: string;
  n: number;
  /** Position of the attempt in its stage, in start order. */
  ordinal: number;
  reason: string;
  phase: string;
  disposition: string;
  failure: string | null;
  failure_kind: string | null;
  guidance: string | null;
  rejections: number;
  reminders: number;
  started_at: Timestamp;
  finished_at: NullableTimestamp;
  deadline_at: Timestamp;
}

export interface ChecksTable {
  run_id: string;
  stage_id: string;
  attempt: number;
  check_id: string;
  /** Position of the check in the attempt's verification; with run, stage and attempt, the key (check ids need not be unique). */
  ordinal: number;
  type: string;
  phase: string;
  status: string;
  message: string | null;
  evidence: JsonColumn;
  started_at: Timestamp;
  finished_at: Timestamp;
}

export interface EvidenceBlobsTable {
  /** `sha256:<hex>` of the UTF-8 bytes of the string. */
  digest: string;
  /** 'utf8': `content` is the string; 'json': `content` is JSON.stringify(string) (strings holding U+0000). */
  encoding: string;
  size: number;
  content: string;
}

export interface OperatorInteractionsTable {
  run_id: string;
  stage_id: string;
  exchange_id: string;
  attempt: number;
  kind: string;
  question: string;
  question_detail: JsonColumn;
  answer: JsonColumn | null;
  decision: string | null;
  asked_at: Timestamp;
  answered_at: NullableTimestamp;
  answered_by: string | null;
}

export interface RecoveryDecisionsTable {
  run_id: string;
  stage_id: string;
  /** The attempt whose verification failure opened the decision. */
  attempt: number;
  opened_at: Timestamp;
  decision: string | null;
  guidance: string | null;
  decided_by: string | null;
  decided_at: NullableTimestamp;
}

export interface EnvelopesTable {
  run_id: string;
  stage_id: string;
  attempt: number;
  envelope: JsonColumn;
  /** The envelope the stage succeeded with (at most one row per stage). */
  accepted: boolean;
}

export interface EventArchiveTable {
  /** Stream sequence of the message (one decision) the event was appended in. */
  seq: ColumnType<string, number, number>;
  /** The event's position within its decision, from 0. */
  position: number;
  subject: string;
  type: string;
  run_id: string;
  at: Timestamp;
  body: JsonColumn;
}

export interface RunFoldsTable {
  run_id: string;
  /** Highest stream sequence folded into `state`. */
  last_seq: ColumnType<string, number, number>;
  /** JSON of the projector's fold of the run (text: it may hold escaped U+0000). */
  state: string;
}

export interface ProjectorCheckpointsTable {
  name: string;
  last_seq: ColumnType<string, number, number>;
  updated_at: ColumnType<Date, string | undefined, string>;
}

/** A message on a run subject the projector could not read as a decision: recorded, then passed. */
export interface UndecodableMessagesTable {
  seq: ColumnType<string, number, number>;
  subject: string;
  run_id: string;
  reason: string;
}

export interface Database {
  runs: RunsTable;
  stages: StagesTable;
  attempts: AttemptsTable;
  checks: ChecksTable;
  evidence_blobs: EvidenceBlobsTable;
  operator_interactions: OperatorInteractionsTable;
  recovery_decisions: RecoveryDecisionsTable;
  envelopes: EnvelopesTable;
  event_archive: EventArchiveTable;
  run_folds: RunFoldsTable;
  undecodable_messages: UndecodableMessagesTable;
  projector_checkpoints: ProjectorCheckpointsTable;
}

/** Tables the projector writes; `rebuild` truncates exactly these. */
export const PROJECTED_TABLES = [
  'runs',
  'stages',
  'attempts',
  'checks',
  'evidence_blobs',
  'operator_interactions',
  'recovery_decisions',
  'envelopes',
  'event_archive',
  'run_folds',
  'undecodable_messages',
] as const satisfies readonly (keyof Database)[];
