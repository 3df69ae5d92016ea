import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { EventLogError } from '../errors';
import { DeadLetterListeners, runJob, type Delivery } from '../jobs';
import { runLoops, type Loops, type Source } from '../loops';
import { assertName, type Subjects } from '../subjects';
import type { ConsumeOptions, Consumer, DeadLetter, JobHandler, QueueOptions } from '../types';
import { guarded } from './errors';
import type { EmbeddedEventLog } from './log';
import { DEFAULT_RETRY_DELAY_MS } from './subscription';
import type { Wakeup } from './wakeup';

interface QueueRow {
  ack_wait_ms: number;
  max_deliver: number;
}

interface JobRow {
  id: string;
  data: string;
  deliveries: number;
}

/**
 * Work queues over the `jobs` table. Leasing is one UPDATE … RETURNING statement, so two consumers
 * (in any processes) never lease the same job; a lease that expires without ack / nak / working()
 * makes the job deliverable again. Job ids are kept after completion, so enqueue dedupes forever.
 */
export class EmbeddedWorkQueues {
  private readonly listeners = new DeadLetterListeners();
  private readonly running = new Set<Loops>();
  private readonly declareQueue: Database.Statement;
  private readonly queue: Database.Statement;
  private readonly insert: Database.Statement;
  private readonly claimable: Database.Statement;
  private readonly lease: Database.Statement;
  private readonly lost: Database.Statement;
  private readonly ack: Database.Statement;
  private readonly nak: Database.Statement;
  private readonly extend: Database.Statement;
  private readonly kill: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly log: EmbeddedEventLog,
    private readonly subjects: Subjects,
    private readonly wakeup: Wakeup,
    private readonly pollIntervalMs: number,
  ) {
    this.declareQueue = db.prepare(
      'INSERT INTO queues (name, ack_wait_ms, max_deliver) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET ack_wait_ms = excluded.ack_wait_ms, max_deliver = excluded.max_deliver',
    );
    this.queue = db.prepare('SELECT * FROM queues WHERE name = ?');
    this.insert = db.prepare('INSERT INTO jobs (queue, id, data) VALUES (?, ?, ?) ON CONFLICT DO NOTHING');
    this.claimable = db.prepare(
      "SELECT 1 FROM jobs WHERE queue = ? AND state = 'ready' AND visible_at <= ? AND lease_until <= ? LIMIT 1",
    );
    this.lease = db.prepare(`UPDATE jobs SET deliveries = deliveries + 1, lease_until = ?, lease_token = ?
      WHERE rowid = (SELECT rowid FROM jobs WHERE queue = ? AND state = 'ready' AND visible_at <= ? AND lease_until <= ? AND deliveries < ?
                     ORDER BY rowid LIMIT 1)
      RETURNING id, data, deliveries`);
    this.lost = db.prepare(`UPDATE jobs SET state = 'dead', lease_token = NULL
      WHERE queue = ? AND state = 'ready' AND lease_until > 0 AND lease_until <= ? AND deliveries >= ?
      RETURNING id, data, deliveries`);
    this.ack = db.prepare("UPDATE jobs SET state = 'done', data = NULL, lease_token = NULL WHERE queue = ? AND id = ? AND state = 'ready'");
    this.nak = db.prepare('UPDATE jobs SET lease_until = 0, lease_token = NULL, visible_at = ? WHERE queue = ? AND id = ? AND lease_token = ?');
    this.extend = db.prepare('UPDATE jobs SET lease_until = ? WHERE queue = ? AND id = ? AND lease_token = ?');
    this.kill = db.prepare(`UPDATE jobs SET state = 'dead', lease_token = NULL WHERE queue = ? AND id = ? AND state = 'ready'
      RETURNING id, data, deliveries`);
  }

  async declare(queue: string, options: QueueOptions): Promise<void> {
    assertName('queue', queue);
    guarded(() => this.declareQueue.run(queue, options.ackWaitMs, options.maxDeliver));
  }

  async enqueue(queue: string, data: unknown, msgId: string): Promise<{ readonly duplicate: boolean }> {
    assertName('queue', queue);
    const { changes } = guarded(() => this.insert.run(queue, msgId, JSON.stringify(data ?? null)));
    if (changes > 0) this.wakeup.notify();
    return { duplicate: changes === 0 };
  }

  async consume<T = unknown>(queue: string, handler: JobHandler<T>, options: ConsumeOptions = {}): Promise<Consumer> {
    assertName('queue', queue);
    const config = guarded(() => this.queue.get(queue)) as QueueRow | undefined;
    if (!config) throw new EventLogError(`queue "${queue}" is not declared`, false);
    const retryDelayMs = options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
    const claim = this.db.transaction(() => this.claim<T>(queue, config));
    let stopped = false;
    const source: Source<Delivery<T>> = {
      next: async () => {
        const { delivery, dead } = guarded((): { delivery?: Delivery<T>; dead?: DeadLetter[] } =>
          this.claimable.get(queue, Date.now(), Date.now()) ? claim.immediate() : {},
        );
        if (dead) await Promise.all(dead.map((letter) => this.listeners.notify(letter)));
        if (delivery || stopped) return delivery;
        await this.wakeup.wait(this.pollIntervalMs);
        return undefined;
      },
      interrupt: () => {
        stopped = true;
        this.wakeup.notify();
      },
    };
    const loops = runLoops(options.concurrency ?? 1, source, (delivery) => runJob(delivery, handler, retryDelayMs));
    this.running.add(loops);
    return {
      stop: async () => {
        this.running.delete(loops);
        await loops.stop();
      },
    };
  }

  /**
   * Dead-letters jobs whose last allowed delivery expired unsettled, then leases the oldest
   * deliverable job. Runs in one IMMEDIATE transaction.
   */
  private claim<T>(queue: string, config: QueueRow): { delivery?: Delivery<T>; dead?: DeadLetter[] } {
    const now = Date.now();
    const dead = (this.lost.all(queue, now, config.max_deliver) as JobRow[]).map((row) =>
      this.record(queue, row, `ack wait expired on delivery ${row.deliveries} of ${config.max_deliver}`),
    );
    const token = randomUUID();
    const row = this.lease.get(now + config.ack_wait_ms, token, queue, now, now, config.max_deliver) as JobRow | undefined;
    return { delivery: row && this.delivery<T>(queue, row, token, config), dead };
  }

  private delivery<T>(queue: string, row: JobRow, token: string, config: QueueRow): Delivery<T> {
    return {
      id: row.id,
      queue,
      data: JSON.parse(row.data) as T,
      deliveryCount: row.deliveries,
      maxDeliver: config.max_deliver,
      ack: async () => void guarded(() => this.ack.run(queue, row.id)),
      nak: async (delayMs) => void guarded(() => this.nak.run(Date.now() + delayMs, queue, row.id, token)),
      working: async () => void guarded(() => this.extend.run(Date.now() + config.ack_wait_ms, queue, row.id, token)),
      deadLetter: async (reason) => {
        const letter = guarded(() =>
          this.db
            .transaction(() => {
              const killed = this.kill.get(queue, row.id) as JobRow | undefined;
              return killed && this.record(queue, killed, reason);
            })
            .immediate(),
        );
        if (letter) await this.listeners.notify(letter);
      },
    };
  }

  /** Appends the dead letter to the log, inside the caller's transaction. */
  private record(queue: string, row: JobRow, reason: string): DeadLetter {
    const letter: DeadLetter = {
      queue,
      jobId: row.id,
      data: JSON.parse(row.data) as unknown,
      deliveries: row.deliveries,
      reason,
      time: new Date().toISOString(),
    };
    this.log.appendInTransaction(this.subjects.dead(queue), letter, {});
    return letter;
  }

  onDeadLetter(listener: (letter: DeadLetter) => Promise<void>): void {
    this.listeners.add(listener);
  }

  async deadLetters(queue: string): Promise<readonly DeadLetter[]> {
    assertName('queue', queue);
    const read = await this.log.readSubject<DeadLetter>(this.subjects.dead(queue));
    return read.messages.map((message) => message.data);
  }

  /** Stops every consumer without waiting for jobs in flight (their leases expire and they are redelivered). */
  async close(): Promise<void> {
    for (const loops of this.running) void loops.stop();
    this.running.clear();
  }
}
