import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { runLoops, type Loops, type Source } from '../loops';
import { assertName, assertSubscribable, type Subjects } from '../subjects';
import { DEFAULT_SUBSCRIPTION_MAX_DELIVER, type MessageHandler, type StoredMessage, type SubscribeOptions, type Subscription } from '../types';
import { guarded } from './errors';
import type { EmbeddedEventLog } from './log';
import type { Wakeup } from './wakeup';

interface DurableRow {
  acked_seq: number;
  pending_seq: number;
  deliveries: number;
  visible_at: number;
  lease_until: number;
}

interface Lease {
  readonly message: StoredMessage;
  readonly token: string;
  readonly deliveries: number;
}

export const DEFAULT_RETRY_DELAY_MS = 1000;
export const DEFAULT_SUBSCRIPTION_ACK_WAIT_MS = 30_000;

/**
 * Durable subscriptions over the `durables` table. A durable holds at most one leased message at
 * a time (whoever leases it, in whichever process), which gives in-order, one-at-a-time delivery;
 * `acked_seq` only moves on acknowledgement, so the position survives restarts. A message is
 * delivered at most `maxDeliver` times: past that it is skipped, so it cannot hold the durable.
 */
export class EmbeddedSubscriptions {
  private readonly running = new Set<Loops>();
  private readonly keepAlives = new Set<NodeJS.Timeout>();
  private readonly upsert: Database.Statement;
  private readonly get: Database.Statement;
  private readonly skipTo: Database.Statement;
  private readonly lease: Database.Statement;
  private readonly ack: Database.Statement;
  private readonly nak: Database.Statement;
  private readonly extend: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly log: EmbeddedEventLog,
    private readonly subjects: Subjects,
    private readonly wakeup: Wakeup,
    private readonly pollIntervalMs: number,
  ) {
    this.upsert = db.prepare('INSERT INTO durables (name, filter) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET filter = excluded.filter');
    this.get = db.prepare('SELECT * FROM durables WHERE name = ?');
    this.skipTo = db.prepare('UPDATE durables SET acked_seq = ? WHERE name = ? AND pending_seq = 0 AND acked_seq < ?');
    this.lease = db.prepare(
      'UPDATE durables SET pending_seq = ?, deliveries = ?, lease_until = ?, lease_token = ?, visible_at = 0 WHERE name = ?',
    );
    this.ack = db.prepare(
      'UPDATE durables SET acked_seq = pending_seq, pending_seq = 0, deliveries = 0, lease_until = 0, lease_token = NULL WHERE name = ? AND lease_token = ?',
    );
    this.nak = db.prepare('UPDATE durables SET lease_until = 0, lease_token = NULL, visible_at = ? WHERE name = ? AND lease_token = ?');
    this.extend = db.prepare('UPDATE durables SET lease_until = ? WHERE name = ? AND lease_token = ?');
  }

  async subscribe(durable: string, filter: string, handler: MessageHandler, options: SubscribeOptions): Promise<Subscription> {
    assertName('durable', durable);
    assertSubscribable(this.subjects, filter);
    guarded(() => this.upsert.run(durable, filter));
    const ackWaitMs = options.ackWaitMs ?? DEFAULT_SUBSCRIPTION_ACK_WAIT_MS;
    const retryDelayMs = options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
    const maxDeliver = options.maxDeliver ?? DEFAULT_SUBSCRIPTION_MAX_DELIVER;
    const claim = this.db.transaction((): Lease | undefined => this.claim(durable, filter, ackWaitMs, maxDeliver));
    let stopped = false;
    const source: Source<Lease> = {
      next: async () => {
        const lease = guarded(() => claim.immediate());
        if (lease || stopped) return lease;
        await this.wakeup.wait(this.pollIntervalMs);
        return undefined;
      },
      interrupt: () => {
        stopped = true;
        this.wakeup.notify();
      },
    };
    const loops = runLoops(1, source, (lease) => this.deliver(durable, lease, handler, ackWaitMs, retryDelayMs, maxDeliver));
    this.running.add(loops);
    return {
      stop: async () => {
        this.running.delete(loops);
        await loops.stop();
      },
    };
  }

  /**
   * Leases the durable's next message: the redelivery of an un-acked one, else the next match. A
   * pending message already delivered `maxDeliver` times (its last holder died) is passed over.
   */
  private claim(durable: string, filter: string, ackWaitMs: number, maxDeliver: number): Lease | undefined {
    const row = this.get.get(durable) as DurableRow;
    const now = Date.now();
    if (row.lease_until > now || row.visible_at > now) return undefined;
    const spent = row.pending_seq > 0 && row.deliveries >= maxDeliver;
    const [message] = row.pending_seq > 0 && !spent ? this.log.readNow(filter, row.pending_seq - 1, 1) : this.log.readNow(filter, spent ? row.pending_seq : row.acked_seq, 1);
    if (!message) {
      const last = this.log.lastSequenceNow();
      this.skipTo.run(last, durable, last);
      return undefined;
    }
    const deliveries = message.seq === row.pending_seq ? row.deliveries + 1 : 1;
    const token = randomUUID();
    this.lease.run(message.seq, deliveries, now + ackWaitMs, token, durable);
    return { message, token, deliveries };
  }

  private async deliver(durable: string, lease: Lease, handler: MessageHandler, ackWaitMs: number, retryDelayMs: number, maxDeliver: number): Promise<void> {
    const extend = setInterval(() => guardedQuietly(() => this.extend.run(Date.now() + ackWaitMs, durable, lease.token)), ackWaitMs / 3);
    this.keepAlives.add(extend);
    try {
      await handler(lease.message, { deliveryCount: lease.deliveries, maxDeliver });
      guardedQuietly(() => this.ack.run(durable, lease.token));
    } catch {
      guardedQuietly(() => this.nak.run(Date.now() + retryDelayMs, durable, lease.token));
    } finally {
      clearInterval(extend);
      this.keepAlives.delete(extend);
    }
  }

  /** Stops fetching everywhere; handlers in flight finish on their own and their settle is dropped. */
  abandon(): void {
    for (const loops of this.running) void loops.stop();
    this.running.clear();
    for (const timer of this.keepAlives) clearInterval(timer);
    this.keepAlives.clear();
  }
}

/** A settle that fails (the instance was closed) leaves the message to be redelivered after its lease. */
function guardedQuietly(call: () => unknown): void {
  try {
    call();
  } catch {
    // The lease expires and the message is delivered again.
  }
}
