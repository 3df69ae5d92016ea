/**
 * The one table of what each Stageflow process does on the bus: the durable consumers and work
 * queues (with their delivery settings), who appends to which subject, who requests or serves
 * which command. `sf setup` creates the streams and consumers from it, infra/nats/nats.conf is
 * rendered from it (jetstream/permissions.ts), and nothing else declares a consumer's delivery
 * settings. Subjects are written with `{ns}` for the namespace.
 */

/** The NATS users: one per service, `runs-client` for the `sf` CLI and other teams, `admin` for `sf setup`. */
export const NATS_USERS = ['scheduler', 'agent-runner', 'verifier', 'recovery', 'api', 'runs-client', 'admin'] as const;
export type NatsUser = (typeof NATS_USERS)[number];

export interface Delivery {
  /** A delivery neither settled nor extended with working() within this time is redelivered. */
  readonly ackWaitMs: number;
  /** Deliveries before a message is given up on (dead-lettered); never unlimited. */
  readonly maxDeliver: number;
  /** Redelivery delays after a missed ack wait (nats-server 2.9 `backoff`); fewer entries than maxDeliver. */
  readonly backoffMs?: readonly number[];
  /** Deliveries in flight at once across every replica; -1: unlimited. */
  readonly maxAckPending: number;
}

/** A durable subscription to the events stream, position shared by every replica of its owner. */
export interface DurableSubscription {
  readonly durable: string;
  readonly filter: string;
  readonly owner: NatsUser;
  readonly delivery: Delivery;
}

/** A work queue: a durable consumer on the work stream named after the queue. */
export interface WorkQueue {
  readonly queue: string;
  readonly producers: readonly NatsUser[];
  readonly consumer: NatsUser;
  readonly delivery: Delivery;
}

export interface UserRights {
  /** Subjects the user appends to (events stream: `{ns}.evt.…`, `{ns}.dead.…`). */
  readonly appends: readonly string[];
  /** Reads the events stream (direct get, stream info, its own ephemeral reader consumers). */
  readonly readsEvents: boolean;
  readonly blobs: 'none' | 'read' | 'write';
  /** Core NATS request subjects the user may send. */
  readonly requests: readonly string[];
  /** Core NATS request subjects the user answers (queue group), replying to the requester. */
  readonly serves: readonly string[];
}

export interface Topology {
  readonly subscriptions: readonly DurableSubscription[];
  readonly queues: readonly WorkQueue[];
  readonly users: Readonly<Record<Exclude<NatsUser, 'admin'>, UserRights>>;
}

/** Run decisions (RunStore) and the dead events of the user's own durables. */
const runWriter = (...durables: string[]) => ['{ns}.evt.run.*', ...durables.map((d) => `{ns}.dead.events.${d}`)];

/**
 * The table. Delivery settings read `SF_ACK_WAIT_MS` / `SF_MAX_DELIVER` (work queues),
 * `SF_EVENT_CONCURRENCY` (events in flight per durable) and `SF_EVENT_MAX_DELIVER` (deliveries
 * of one event before its subscriber dead-letters it, default 10) when `sf setup` runs.
 */
export function topology(env: NodeJS.ProcessEnv = process.env): Topology {
  const jobs: Delivery = { ackWaitMs: Number(env.SF_ACK_WAIT_MS) || 30_000, maxDeliver: Number(env.SF_MAX_DELIVER) || 5, maxAckPending: -1 };
  const events: Delivery = { ackWaitMs: 30_000, maxDeliver: positive(env.SF_EVENT_MAX_DELIVER) ?? 10, maxAckPending: Math.max(1, Number(env.SF_EVENT_CONCURRENCY) || 8) };
  return {
    subscriptions: [
      { durable: 'scheduler', filter: '{ns}.evt.run.>', owner: 'scheduler', delivery: events },
      { durable: 'recovery', filter: '{ns}.evt.run.>', owner: 'recovery', delivery: events },
      { durable: 'verifier-dispatch', filter: '{ns}.evt.run.>', owner: 'verifier', delivery: events },
    ],
    queues: [
      { queue: 'agent', producers: ['scheduler'], consumer: 'agent-runner', delivery: jobs },
      { queue: 'verify', producers: ['verifier'], consumer: 'verifier', delivery: jobs },
    ],
    users: {
      scheduler: { appends: runWriter('scheduler'), readsEvents: true, blobs: 'none', requests: [], serves: [] },
      'agent-runner': { appends: [...runWriter(), '{ns}.dead.agent'], readsEvents: true, blobs: 'write', requests: [], serves: [] },
      verifier: { appends: [...runWriter('verifier-dispatch'), '{ns}.dead.verify'], readsEvents: true, blobs: 'write', requests: [], serves: [] },
      recovery: { appends: runWriter('recovery'), readsEvents: true, blobs: 'none', requests: [], serves: [] },
      // Run requests, decisions and their idempotency records, published pipelines; the projector runs here.
      api: {
        appends: ['{ns}.evt.run.*', '{ns}.evt.idem.*', '{ns}.evt.request.rejected', '{ns}.evt.pipeline.*'],
        readsEvents: true,
        blobs: 'read',
        requests: [],
        serves: ['{ns}.cmd.run.request'],
      },
      'runs-client': { appends: [], readsEvents: true, blobs: 'read', requests: ['{ns}.cmd.run.request'], serves: [] },
    },
  };
}

function positive(text: string | undefined): number | undefined {
  const value = Number(text);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}

/** The subscription or queue with this name, for the code that binds to it. */
export function subscriptionNamed(table: Topology, durable: string): DurableSubscription | undefined {
  return table.subscriptions.find((s) => s.durable === durable);
}

export function queueNamed(table: Topology, queue: string): WorkQueue | undefined {
  return table.queues.find((q) => q.queue === queue);
}

export const withNamespace = (subject: string, namespace: string) => subject.replace(/\{ns\}/g, namespace);
