import type Database from 'better-sqlite3';
import { assertAppendable, assertFilter, assertSubject, type Subjects } from '../subjects';
import {
  WrongExpectedSequenceError,
  type AppendOptions,
  type AppendResult,
  type MessageHandler,
  type StoredMessage,
  type SubjectRead,
  type SubscribeOptions,
  type Subscription,
} from '../types';
import { guarded } from './errors';
import { EmbeddedSubscriptions } from './subscription';
import type { Wakeup } from './wakeup';

interface MessageRow {
  seq: number;
  subject: string;
  data: string;
  time: string;
  msg_id: string | null;
}

export function toStored<T>(row: MessageRow): StoredMessage<T> {
  const message = { seq: row.seq, subject: row.subject, data: JSON.parse(row.data) as T, time: row.time };
  return row.msg_id === null ? message : { ...message, msgId: row.msg_id };
}

const NO_LIMIT = -1;

/** The event log in one SQLite file; appends from any number of processes are serialized by SQLite. */
export class EmbeddedEventLog {
  private readonly byMsgId: Database.Statement;
  private readonly lastOnSubject: Database.Statement;
  private readonly insert: Database.Statement;
  private readonly readExact: Database.Statement;
  private readonly readMatching: Database.Statement;
  private readonly last: Database.Statement;
  private readonly subscriptions: EmbeddedSubscriptions;
  /**
   * One IMMEDIATE transaction: the write lock is taken before the checks, so no other process can
   * append between the msg id / expected sequence checks and the insert.
   */
  readonly appendInTransaction: (subject: string, data: unknown, options: AppendOptions) => AppendResult;

  constructor(
    private readonly db: Database.Database,
    private readonly subjects: Subjects,
    private readonly wakeup: Wakeup,
    pollIntervalMs: number,
  ) {
    this.byMsgId = db.prepare('SELECT seq FROM messages WHERE msg_id = ?');
    this.lastOnSubject = db.prepare('SELECT coalesce(max(seq), 0) AS seq FROM messages WHERE subject = ?');
    this.insert = db.prepare('INSERT INTO messages (subject, data, time, msg_id) VALUES (?, ?, ?, ?)');
    this.readExact = db.prepare('SELECT * FROM messages WHERE subject = ? AND seq > ? ORDER BY seq LIMIT ?');
    this.readMatching = db.prepare('SELECT * FROM messages WHERE seq > ? AND subject_matches(?, subject) ORDER BY seq LIMIT ?');
    this.last = db.prepare('SELECT coalesce(max(seq), 0) AS seq FROM messages');
    this.subscriptions = new EmbeddedSubscriptions(db, this, subjects, wakeup, pollIntervalMs);
    const appendTx = db.transaction((subject: string, data: unknown, options: AppendOptions): AppendResult => {
      if (options.msgId !== undefined) {
        const existing = this.byMsgId.get(options.msgId) as { seq: number } | undefined;
        if (existing) return { seq: existing.seq, duplicate: true };
      }
      if (options.expectedLastSubjectSequence !== undefined) {
        const actual = (this.lastOnSubject.get(subject) as { seq: number }).seq;
        if (actual !== options.expectedLastSubjectSequence) {
          throw new WrongExpectedSequenceError(subject, options.expectedLastSubjectSequence, actual);
        }
      }
      const json = JSON.stringify(data ?? null);
      const result = this.insert.run(subject, json, new Date().toISOString(), options.msgId ?? null);
      return { seq: Number(result.lastInsertRowid), duplicate: false };
    });
    this.appendInTransaction = (subject, data, options) => appendTx.immediate(subject, data, options);
  }

  async append(subject: string, data: unknown, options: AppendOptions = {}): Promise<AppendResult> {
    assertAppendable(this.subjects, subject);
    const result = guarded(() => this.appendInTransaction(subject, data, options));
    if (!result.duplicate) this.wakeup.notify();
    return result;
  }

  async readSubject<T = unknown>(subject: string, afterSeq = 0): Promise<SubjectRead<T>> {
    assertSubject(subject);
    return guarded(() =>
      this.db.transaction(() => ({
        messages: (this.readExact.all(subject, afterSeq, NO_LIMIT) as MessageRow[]).map((row) => toStored<T>(row)),
        lastSubjectSequence: (this.lastOnSubject.get(subject) as { seq: number }).seq,
      }))(),
    );
  }

  /** The messages matching `filter` with seq > afterSeq, in order, at most `limit`. */
  readNow<T>(filter: string, afterSeq: number, limit: number): StoredMessage<T>[] {
    const max = Number.isFinite(limit) ? limit : NO_LIMIT;
    const rows = /[*>]/.test(filter)
      ? this.readMatching.all(afterSeq, filter, max)
      : this.readExact.all(filter, afterSeq, max);
    return (rows as MessageRow[]).map((row) => toStored<T>(row));
  }

  async read<T = unknown>(filter: string, afterSeq = 0, limit = Infinity): Promise<readonly StoredMessage<T>[]> {
    assertFilter(filter);
    return guarded(() => this.readNow<T>(filter, afterSeq, limit));
  }

  lastSequenceNow(): number {
    return (this.last.get() as { seq: number }).seq;
  }

  async lastSequence(): Promise<number> {
    return guarded(() => this.lastSequenceNow());
  }

  async subscribe(durable: string, filter: string, handler: MessageHandler, options: SubscribeOptions = {}): Promise<Subscription> {
    return this.subscriptions.subscribe(durable, filter, handler, options);
  }

  /** Stops every subscription without waiting for handlers in flight (their messages are redelivered). */
  async close(): Promise<void> {
    this.subscriptions.abandon();
  }
}
