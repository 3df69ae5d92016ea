/**
 * The event log, work queues and blob store: one interface, two implementations (JetStream and
 * embedded), one contract test suite (`contract.ts`) that both must pass.
 */

export interface AppendOptions {
  /**
   * Optimistic concurrency: the append succeeds only when the last sequence stored on this exact
   * subject equals this value (0 means the subject holds nothing yet). On mismatch the append
   * writes nothing and rejects with WrongExpectedSequenceError. Omitted: no check.
   */
  readonly expectedLastSubjectSequence?: number;
  /**
   * Idempotency key. A second append with the same id (within the implementation's dedupe
   * horizon; the embedded log keeps ids forever, JetStream for its duplicate window) writes nothing
   * and resolves with the first append's sequence and `duplicate: true`.
   */
  readonly msgId?: string;
}

export interface AppendResult {
  readonly seq: number;
  readonly duplicate: boolean;
}

export interface StoredMessage<T = unknown> {
  /** Stream sequence: strictly increasing across the whole log, starting at 1. */
  readonly seq: number;
  readonly subject: string;
  readonly data: T;
  /** ISO-8601 time the log stored it. */
  readonly time: string;
  readonly msgId?: string;
}

export interface SubjectRead<T = unknown> {
  readonly messages: readonly StoredMessage<T>[];
  /** Last sequence stored on the subject (0 if none): the value to pass as expectedLastSubjectSequence. */
  readonly lastSubjectSequence: number;
}

/** Where one delivery of a subscription's message stands. */
export interface EventDelivery {
  /** 1 on first delivery. */
  readonly deliveryCount: number;
  /** Deliveries the subscription allows; past the last one a message is not delivered again. */
  readonly maxDeliver: number;
}

/**
 * Handler of a durable subscription: resolve to acknowledge, throw to have it redelivered. On
 * its last delivery (`deliveryCount >= maxDeliver`) a handler that cannot process the message
 * must record it and resolve: a throw then leaves it to the broker, which delivers it no more.
 */
export type MessageHandler = (message: StoredMessage, delivery: EventDelivery) => Promise<void>;

export interface SubscribeOptions {
  /** Delay before a message whose handler threw is delivered again. Default 1000 ms. */
  readonly retryDelayMs?: number;
  /**
   * Messages a subscription may hand to handlers at once (across every subscriber of the
   * durable). Default 1: strictly one at a time, in order. Above 1, order between messages is not
   * kept: only for handlers that decide from the current state rather than from message order.
   * The embedded log delivers one at a time whatever this says.
   */
  readonly concurrency?: number;
  /**
   * A delivery whose handler has not settled within this time is delivered again (the subscriber
   * died). A live handler keeps its delivery for as long as it runs. Default 30 000 ms.
   */
  readonly ackWaitMs?: number;
  /**
   * Deliveries allowed per message where the subscription sets up its own consumer (the
   * embedded log; JetStream with provisioning). A bound JetStream consumer keeps its own
   * (`sf setup`, from the topology table). Default DEFAULT_SUBSCRIPTION_MAX_DELIVER.
   */
  readonly maxDeliver?: number;
}

/** Deliveries per message of a subscription that names none; nothing is redelivered forever. */
export const DEFAULT_SUBSCRIPTION_MAX_DELIVER = 10;

export interface Subscription {
  /** Stops fetching, waits for the handler in flight to finish, leaves the durable position stored. */
  stop(): Promise<void>;
}

export interface EventLog {
  append(subject: string, data: unknown, options?: AppendOptions): Promise<AppendResult>;
  /** Every message stored on one exact subject, in order, with seq > afterSeq. */
  readSubject<T = unknown>(subject: string, afterSeq?: number): Promise<SubjectRead<T>>;
  /**
   * Messages matching a filter (NATS wildcards `*` and `>`), in sequence order, with seq > afterSeq,
   * at most `limit` of them.
   */
  read<T = unknown>(filter: string, afterSeq?: number, limit?: number): Promise<readonly StoredMessage<T>[]>;
  /** Last sequence of the whole log (0 if empty). */
  lastSequence(): Promise<number>;
  /**
   * A durable subscription: delivery is at least once, in sequence order, one message at a time;
   * the position survives process restarts and is shared by every subscriber using the same
   * durable name (so replicas split nothing: the position advances once per acknowledged message).
   * New durables start at the beginning of the log.
   */
  subscribe(durable: string, filter: string, handler: MessageHandler, options?: SubscribeOptions): Promise<Subscription>;
  close(): Promise<void>;
}

export interface QueueOptions {
  /** A delivery not acknowledged, nak'd, or extended with working() within this time is redelivered. */
  readonly ackWaitMs: number;
  /** Deliveries after which a failing job is dead-lettered instead of redelivered. */
  readonly maxDeliver: number;
  /** Delays between redeliveries after missed ack waits (fewer entries than maxDeliver); the embedded log ignores them. */
  readonly backoffMs?: readonly number[];
}

export interface Job<T = unknown> {
  /** The message id given at enqueue time. */
  readonly id: string;
  readonly queue: string;
  readonly data: T;
  /** 1 on first delivery. */
  readonly deliveryCount: number;
  /** Done: the job is never delivered again. */
  ack(): Promise<void>;
  /** Redeliver after `delayMs` (default 0), counting a delivery. */
  nak(delayMs?: number): Promise<void>;
  /** Poison: never delivered again, recorded as a dead letter with the reason. */
  term(reason: string): Promise<void>;
  /** Still working: resets the ack-wait timer. */
  working(): Promise<void>;
}

/**
 * Handler of a work-queue consumer. It should settle the job itself (ack / nak / term). If it
 * returns without settling, the job is acked; if it throws, the job is nak'd with the queue's
 * retry delay, or dead-lettered when this was its last allowed delivery.
 */
export type JobHandler<T = unknown> = (job: Job<T>) => Promise<void>;

export interface ConsumeOptions {
  /** Jobs handled at once by this consumer. Default 1. */
  readonly concurrency?: number;
  /** Delay before a job whose handler threw is redelivered. Default 1000 ms. */
  readonly retryDelayMs?: number;
}

export interface DeadLetter {
  readonly queue: string;
  readonly jobId: string;
  readonly data: unknown;
  readonly deliveries: number;
  readonly reason: string;
  readonly time: string;
}

export interface Consumer {
  /** Stops fetching, waits for jobs in flight, leaves unfinished jobs to be redelivered. */
  stop(): Promise<void>;
}

export interface WorkQueues {
  /** Declares a queue (idempotent). Every replica must declare it with the same options. */
  declare(queue: string, options: QueueOptions): Promise<void>;
  /** Adds a job; a second enqueue with the same msgId (within the dedupe horizon) adds nothing. */
  enqueue(queue: string, data: unknown, msgId: string): Promise<{ readonly duplicate: boolean }>;
  /** One shared consumer per queue: any number of replicas may consume; each job goes to one of them at a time. */
  consume<T = unknown>(queue: string, handler: JobHandler<T>, options?: ConsumeOptions): Promise<Consumer>;
  /** Optional hook run when a job is dead-lettered (after it is recorded). */
  onDeadLetter(listener: (letter: DeadLetter) => Promise<void>): void;
  deadLetters(queue: string): Promise<readonly DeadLetter[]>;
  close(): Promise<void>;
}

/** Content-addressed blobs (sealed attempt snapshots, large evidence). */
export interface BlobStore {
  /** Stores the bytes; returns their digest `sha256:<hex>`. Storing the same bytes twice stores one copy. */
  put(bytes: Uint8Array): Promise<string>;
  /**
   * Stores the bytes `source` yields (consumed once, in order) without holding them all in memory;
   * returns the digest put would return for the same bytes. When the source throws, nothing is
   * stored and its error is rethrown as is.
   */
  putStream(source: AsyncIterable<Uint8Array>): Promise<string>;
  /** The bytes of a digest, or undefined if none is stored. */
  get(digest: string): Promise<Uint8Array | undefined>;
  has(digest: string): Promise<boolean>;
  close(): Promise<void>;
}

/** One opened log: what `connectJetStream` and `openEmbedded` return. */
/**
 * Request-reply commands on the message bus (core NATS, a queue group: each request reaches one
 * replica). Present only on a deployment with a broker; the embedded log has none.
 */
export interface RequestBus {
  /**
   * Serves `subject` in queue group `queue`: the handler's result is the JSON reply. A request
   * that arrives while no replica serves the subject fails at the requester at once ("no
   * responders"), so nothing is lost silently; the requester retries with the same msg id.
   */
  serve(subject: string, queue: string, handler: (request: BusRequest) => Promise<unknown>): Promise<{ stop(): Promise<void> }>;
  /**
   * Sends a JSON request with `msgId` as `Nats-Msg-Id` and returns the parsed reply, or
   * `{ served: false }` at once when no replica serves the subject.
   */
  request(subject: string, data: unknown, options: { readonly msgId: string; readonly timeoutMs: number }): Promise<{ readonly served: true; readonly reply: unknown } | { readonly served: false }>;
}

export interface BusRequest {
  readonly subject: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  readonly data: unknown;
  readonly raw: string;
  /** `Nats-Msg-Id`, the idempotency key, when given. */
  readonly msgId?: string;
}

export interface EventLogInstance {
  readonly log: EventLog;
  readonly queues: WorkQueues;
  readonly blobs: BlobStore;
  readonly bus?: RequestBus;
  /**
   * Subscriptions the broker refused (a permission violation arrives after the subscribe call
   * returned); a process with any is not ready. The embedded log never refuses one.
   */
  deniedSubscriptions?(): readonly string[];
  /**
   * Stops every subscription and consumer without waiting for handlers in flight (their messages
   * are redelivered after their ack wait) and releases the connection or file.
   */
  close(): Promise<void>;
}

export class WrongExpectedSequenceError extends Error {
  /** A conflict is resolved by reloading state and deciding again. */
  readonly retryable = true;
  constructor(
    readonly subject: string,
    readonly expected: number,
    readonly actual: number,
  ) {
    super(`wrong last sequence on ${subject}: expected ${expected}, found ${actual}`);
    this.name = 'WrongExpectedSequenceError';
  }
}
