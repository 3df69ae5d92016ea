import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { subjectsFor } from '../subjects';
import type { EventLogInstance } from '../types';
import { EmbeddedBlobStore } from './blobs';
import { EmbeddedEventLog } from './log';
import { EmbeddedWorkQueues } from './queues';
import { openDatabase } from './schema';
import { Wakeup } from './wakeup';

export interface EmbeddedOptions {
  /** Directory of the log: `eventlog.sqlite` (plus its WAL files) and `blobs/`. Created if missing. */
  readonly dir: string;
  /** Subject namespace, as for JetStream: appends go to `<ns>.evt.>`; dead letters to `<ns>.dead.<queue>`. Default `sf`. */
  readonly namespace?: string;
  /** How often delivery loops look for other processes' writes. Default 25 ms. */
  readonly pollIntervalMs?: number;
}

/**
 * Opens the embedded event log. Any number of instances, in any number of processes, may open the
 * same directory at once: every write is a SQLite transaction and every delivery a lease in the file.
 */
export function openEmbedded(options: EmbeddedOptions): EventLogInstance {
  mkdirSync(options.dir, { recursive: true });
  const subjects = subjectsFor(options.namespace ?? 'sf');
  const pollIntervalMs = options.pollIntervalMs ?? 25;
  const db = openDatabase(join(options.dir, 'eventlog.sqlite'));
  const wakeup = new Wakeup();
  const log = new EmbeddedEventLog(db, subjects, wakeup, pollIntervalMs);
  const queues = new EmbeddedWorkQueues(db, log, subjects, wakeup, pollIntervalMs);
  const blobs = new EmbeddedBlobStore(join(options.dir, 'blobs'));
  let closed = false;
  return {
    log,
    queues,
    blobs,
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([log.close(), queues.close(), blobs.close()]);
      wakeup.notify();
      db.close();
    },
  };
}
