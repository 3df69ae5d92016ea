import { JetStreamApiCodes, JetStreamApiError, type JetStreamClient, type JetStreamManager, type JetStreamPublishOptions } from '@nats-io/jetstream';
import { assertAppendable, assertFilter, assertSubject, intersect, type Subjects } from '../subjects';
import {
  WrongExpectedSequenceError,
  type AppendOptions,
  type AppendResult,
  type EventLog,
  type MessageHandler,
  type StoredMessage,
  type SubjectRead,
  type SubscribeOptions,
  type Subscription,
} from '../types';
import { natsCall, toEventLogError } from './errors';
import { encode, fromStoredMsg } from './messages';
import { readRange } from './read';
import { JetStreamSubscriptions } from './subscription';

/**
 * The event log on the events stream. An append with `msgId` sets `Nats-Msg-Id` (the stream
 * rejects a repeat within its duplicate window and acks it as a duplicate of the first); with
 * `expectedLastSubjectSequence` it sets `Nats-Expected-Last-Subject-Sequence` (the stream stores
 * it only when the subject's last sequence matches). The server checks the msg id first.
 * A read filter spanning several subject spaces (`<ns>.*.run.>`) is read as one filter per space
 * (a consumer filter must lie inside one stream subject on nats-server 2.9) and merged by sequence.
 */
/** Passes a read makes to reach the stream's last sequence (see read()). */
const MAX_READ_PASSES = 4;

/** Up to this many new messages on one subject are read with direct gets rather than a consumer. */
const SMALL_READ = 16;

export class JetStreamEventLog implements EventLog {
  private readonly subscriptions: JetStreamSubscriptions;

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly stream: string,
    private readonly subjects: Subjects,
    provision = false,
  ) {
    this.subscriptions = new JetStreamSubscriptions(js, jsm, stream, subjects, provision);
  }

  async append(subject: string, data: unknown, options: AppendOptions = {}): Promise<AppendResult> {
    assertAppendable(this.subjects, subject);
    const publish: Partial<JetStreamPublishOptions> = {};
    if (options.msgId !== undefined) publish.msgID = options.msgId;
    if (options.expectedLastSubjectSequence !== undefined) publish.expect = { lastSubjectSequence: options.expectedLastSubjectSequence };
    try {
      const ack = await this.js.publish(subject, encode(data), publish);
      return { seq: ack.seq, duplicate: ack.duplicate };
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamWrongLastSequence) {
        const actual = await this.lastSubjectSequence(subject);
        throw new WrongExpectedSequenceError(subject, options.expectedLastSubjectSequence ?? 0, actual);
      }
      throw toEventLogError(err, `append to ${subject}`);
    }
  }

  private async lastSubjectSequence(subject: string): Promise<number> {
    const last = await natsCall(`last sequence of ${subject}`, () => this.jsm.streams.getMessage(this.stream, { last_by_subj: subject }));
    return last?.seq ?? 0;
  }

  /**
   * Cheapest first: one request tells whether the subject holds anything past `afterSeq` (a
   * reader that is up to date pays only that); a few new messages are fetched one by one with
   * `next_by_subj`; more than SMALL_READ go through an ephemeral consumer.
   */
  async readSubject<T = unknown>(subject: string, afterSeq = 0): Promise<SubjectRead<T>> {
    assertSubject(subject);
    const last = await this.lastSubjectSequence(subject);
    if (last <= afterSeq) return { messages: [], lastSubjectSequence: last };
    const messages = (await this.readFew<T>(subject, afterSeq, last)) ?? (await this.read<T>(subject, afterSeq));
    return { messages, lastSubjectSequence: Math.max(last, messages.at(-1)?.seq ?? 0) };
  }

  /** The messages of `subject` in (afterSeq, last], or undefined when there are more than SMALL_READ. */
  private async readFew<T>(subject: string, afterSeq: number, last: number): Promise<StoredMessage<T>[] | undefined> {
    const messages: StoredMessage<T>[] = [];
    let seq = afterSeq;
    while (seq < last) {
      if (messages.length >= SMALL_READ) return undefined;
      const next = await natsCall(`read ${subject}`, () => this.jsm.direct.getMessage(this.stream, { seq: seq + 1, next_by_subj: subject }));
      if (!next || next.seq > last) break;
      messages.push(fromStoredMsg<T>(next));
      seq = next.seq;
    }
    return messages;
  }

  /**
   * Everything matching `filter` up to the stream's last sequence when the read began. A reader
   * consumer can report its pending count a little short for messages stored just before it was
   * created (seen on a busy nats-server 2.9), so a read that ends below that last sequence reads
   * on from where it stopped until a pass brings nothing new.
   */
  async read<T = unknown>(filter: string, afterSeq = 0, limit = Infinity): Promise<readonly StoredMessage<T>[]> {
    assertFilter(filter);
    const parts = this.subjects.appendable.flatMap((space) => intersect(filter, space) ?? []);
    const streamLast = await this.lastSequence();
    const messages: StoredMessage<T>[] = [];
    let from = afterSeq;
    for (let pass = 0; pass < MAX_READ_PASSES && messages.length < limit && from < streamLast; pass++) {
      const reads = await natsCall(`read ${filter}`, () =>
        Promise.all(parts.map((part) => readRange<T>(this.js, this.jsm, this.stream, part, from, limit - messages.length))),
      );
      const found = reads.flat().sort((a, b) => a.seq - b.seq).slice(0, limit - messages.length);
      if (found.length === 0) break;
      messages.push(...found);
      from = found[found.length - 1].seq;
    }
    return messages;
  }

  async lastSequence(): Promise<number> {
    const info = await natsCall('stream info', () => this.jsm.streams.info(this.stream));
    return info.state.last_seq;
  }

  async subscribe(durable: string, filter: string, handler: MessageHandler, options: SubscribeOptions = {}): Promise<Subscription> {
    return this.subscriptions.subscribe(durable, filter, handler, options);
  }

  /** Stops every subscription without waiting for handlers in flight (their messages are redelivered). */
  async close(): Promise<void> {
    this.subscriptions.abandon();
  }
}
