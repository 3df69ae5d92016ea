import Database from 'better-sqlite3';
import { subjectMatches } from '../subjects';

/**
 * The embedded log's storage. Every table is shared by every process that opens the file:
 * messages and their ids (kept forever), durable subscription positions, queues and jobs.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS messages (
  seq INTEGER PRIMARY KEY,
  subject TEXT NOT NULL,
  data TEXT NOT NULL,
  time TEXT NOT NULL,
  msg_id TEXT
);
CREATE INDEX IF NOT EXISTS messages_subject ON messages (subject, seq);
CREATE UNIQUE INDEX IF NOT EXISTS messages_msg_id ON messages (msg_id) WHERE msg_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS durables (
  name TEXT PRIMARY KEY,
  filter TEXT NOT NULL,
  acked_seq INTEGER NOT NULL DEFAULT 0,
  pending_seq INTEGER NOT NULL DEFAULT 0,
  deliveries INTEGER NOT NULL DEFAULT 0,
  visible_at INTEGER NOT NULL DEFAULT 0,
  lease_until INTEGER NOT NULL DEFAULT 0,
  lease_token TEXT
);
CREATE TABLE IF NOT EXISTS queues (
  name TEXT PRIMARY KEY,
  ack_wait_ms INTEGER NOT NULL,
  max_deliver INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
  queue TEXT NOT NULL,
  id TEXT NOT NULL,
  data TEXT,
  state TEXT NOT NULL DEFAULT 'ready',
  deliveries INTEGER NOT NULL DEFAULT 0,
  visible_at INTEGER NOT NULL DEFAULT 0,
  lease_until INTEGER NOT NULL DEFAULT 0,
  lease_token TEXT,
  PRIMARY KEY (queue, id)
);
CREATE INDEX IF NOT EXISTS jobs_ready ON jobs (queue, state, visible_at);
`;

/** How long a writer waits for another process's transaction before failing with SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 10_000;

/**
 * Opens (creating if needed) the database in WAL mode. synchronous=NORMAL: a committed append
 * survives a crash of the process; like JetStream's default, not necessarily a power loss.
 */
export function openDatabase(file: string): Database.Database {
  const db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.transaction(() => db.exec(SCHEMA)).immediate();
  db.function('subject_matches', { deterministic: true }, (filter, subject) => (subjectMatches(filter, subject) ? 1 : 0));
  return db;
}
