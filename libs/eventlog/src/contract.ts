import { digestOf } from './digest';
import { EventLogError } from './errors';
import { sleep } from './loops';
import { WrongExpectedSequenceError, type DeadLetter, type EventLogInstance, type Job, type StoredMessage } from './types';

/** One isolated storage (a directory, a NATS namespace) that can be opened any number of times. */
export interface ContractStorage {
  /** The subject namespace the instances use (`<ns>.evt.>` etc.). */
  readonly namespace: string;
  /** Opens an instance on this storage; opening again after close() is a process restart. */
  open(): Promise<EventLogInstance>;
  /** Removes the storage. */
  destroy(): Promise<void>;
}

export type ContractFactory = () => Promise<ContractStorage>;

const TEST_TIMEOUT_MS = 20_000;
const ACK_WAIT_MS = 500;

/** Resolves once `predicate` holds, polling; rejects after `timeoutMs`. */
async function until(predicate: () => boolean | Promise<boolean>, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

function never(): Promise<void> {
  return new Promise(() => undefined);
}

/**
 * The guarantees of types.ts, as jest tests, for one implementation. Every test opens fresh storage.
 */
export function describeEventLogContract(name: string, factory: ContractFactory): void {
  describe(`${name}: event log contract`, () => {
    let storage: ContractStorage;
    let opened: EventLogInstance[];
    let ns: string;

    const open = async (): Promise<EventLogInstance> => {
      const instance = await storage.open();
      opened.push(instance);
      return instance;
    };

    beforeEach(async () => {
      storage = await factory();
      ns = storage.namespace;
      opened = [];
    });

    afterEach(async () => {
      await Promise.all(opened.map((instance) => instance.close()));
      await storage.destroy();
    });

    describe('append and read', () => {
      it('assigns strictly increasing sequences across subjects and reads them back in order', async () => {
        const { log } = await open();
        expect(await log.lastSequence()).toBe(0);
        const seqs: number[] = [];
        for (let i = 0; i < 20; i++) seqs.push((await log.append(`${ns}.evt.run.r${i % 3}`, { i })).seq);
        expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        const all = await log.read(`${ns}.evt.>`);
        expect(all.map((m) => m.data)).toEqual(Array.from({ length: 20 }, (_, i) => ({ i })));
        expect(all.every((m) => !Number.isNaN(Date.parse(m.time)))).toBe(true);
        expect(await log.lastSequence()).toBe(20);
      });

      it('reports 0 for an empty subject and accepts expected sequence 0 once', async () => {
        const { log } = await open();
        const subject = `${ns}.evt.run.empty`;
        expect(await log.readSubject(subject)).toEqual({ messages: [], lastSubjectSequence: 0 });
        const first = await log.append(subject, { n: 1 }, { expectedLastSubjectSequence: 0 });
        expect(first).toEqual({ seq: 1, duplicate: false });
        await expect(log.append(subject, { n: 2 }, { expectedLastSubjectSequence: 0 })).rejects.toMatchObject({
          name: 'WrongExpectedSequenceError',
          subject,
          expected: 0,
          actual: 1,
          retryable: true,
        });
        expect(await log.lastSequence()).toBe(1);
      });

      it('rejects a stale expected sequence without writing, and accepts the current one', async () => {
        const { log } = await open();
        const subject = `${ns}.evt.run.a`;
        await log.append(subject, 'a1');
        await log.append(`${ns}.evt.run.b`, 'b1');
        const a2 = await log.append(subject, 'a2', { expectedLastSubjectSequence: 1 });
        expect(a2.seq).toBe(3);
        const stale = log.append(subject, 'a3', { expectedLastSubjectSequence: 1 });
        await expect(stale).rejects.toBeInstanceOf(WrongExpectedSequenceError);
        await expect(stale).rejects.toMatchObject({ expected: 1, actual: 3 });
        const read = await log.readSubject(subject);
        expect(read.messages.map((m) => m.data)).toEqual(['a1', 'a2']);
        expect(read.lastSubjectSequence).toBe(3);
        expect((await log.append(subject, 'a3', { expectedLastSubjectSequence: read.lastSubjectSequence })).seq).toBe(4);
      });

      it('collapses a repeated msg id: same sequence, duplicate true, one message stored', async () => {
        const { log } = await open();
        const subject = `${ns}.evt.request.demo`;
        const first = await log.append(subject, { run: 1 }, { msgId: 'req-1' });
        const again = await log.append(subject, { run: 1 }, { msgId: 'req-1' });
        expect(first).toEqual({ seq: 1, duplicate: false });
        expect(again).toEqual({ seq: 1, duplicate: true });
        const retried = await log.append(subject, { run: 1 }, { msgId: 'req-1', expectedLastSubjectSequence: 0 });
        expect(retried).toEqual({ seq: 1, duplicate: true });
        const read = await log.readSubject(subject);
        expect(read.messages).toHaveLength(1);
        expect(read.messages[0]).toMatchObject({ seq: 1, subject, data: { run: 1 }, msgId: 'req-1' });
      });

      it('reads one subject or a wildcard filter after a sequence, with a limit', async () => {
        const { log } = await open();
        await log.append(`${ns}.evt.run.a`, 1);
        await log.append(`${ns}.evt.stage.a.s1`, 2);
        await log.append(`${ns}.evt.run.b`, 3);
        await log.append(`${ns}.dead.run.demo`, 4);
        await log.append(`${ns}.evt.run.a`, 5);
        await log.append(`${ns}.evt.stage.b.s2`, 6);
        const data = (messages: readonly StoredMessage[]) => messages.map((m) => m.data);
        expect(data((await log.readSubject(`${ns}.evt.run.a`)).messages)).toEqual([1, 5]);
        expect(data((await log.readSubject(`${ns}.evt.run.a`, 1)).messages)).toEqual([5]);
        expect((await log.readSubject(`${ns}.evt.run.a`, 5)).lastSubjectSequence).toBe(5);
        expect(data(await log.read(`${ns}.evt.run.*`))).toEqual([1, 3, 5]);
        expect(data(await log.read(`${ns}.evt.>`, 2))).toEqual([3, 5, 6]);
        expect(data(await log.read(`${ns}.evt.stage.*.s1`))).toEqual([2]);
        expect(data(await log.read(`${ns}.*.run.>`))).toEqual([1, 3, 4, 5]);
        expect(data(await log.read(`${ns}.evt.>`, 0, 2))).toEqual([1, 2]);
        expect(await log.read(`${ns}.evt.>`, 6)).toEqual([]);
      });

      it('reads thousands of messages', async () => {
        const { log } = await open();
        await Promise.all(Array.from({ length: 2500 }, (_, i) => log.append(`${ns}.evt.bulk.${i % 2}`, i)));
        expect(await log.read(`${ns}.evt.bulk.*`)).toHaveLength(2500);
        const one = await log.readSubject(`${ns}.evt.bulk.0`);
        expect(one.messages).toHaveLength(1250);
        expect(one.lastSubjectSequence).toBe(one.messages[1249].seq);
      });

      it('keeps the log across a restart', async () => {
        const first = await open();
        await first.log.append(`${ns}.evt.run.a`, { kept: true }, { msgId: 'keep-1' });
        await first.close();
        const second = await open();
        const read = await second.log.readSubject(`${ns}.evt.run.a`);
        expect(read.messages.map((m) => m.data)).toEqual([{ kept: true }]);
        expect(await second.log.append(`${ns}.evt.run.a`, { kept: true }, { msgId: 'keep-1' })).toEqual({ seq: 1, duplicate: true });
      });

      it('rejects bad subjects and filters with a non-retryable error', async () => {
        const { log } = await open();
        for (const subject of [`${ns}.evt.*`, `${ns}.evt..x`, `${ns}.evt.a b`, 'elsewhere.evt.x', `${ns}.work.q`]) {
          await expect(log.append(subject, 1)).rejects.toMatchObject({ retryable: false });
        }
        await expect(log.append(`${ns}.evt.*`, 1)).rejects.toBeInstanceOf(EventLogError);
        await expect(log.read(`${ns}.evt.>.x`)).rejects.toMatchObject({ retryable: false });
        await expect(log.readSubject(`${ns}.evt.*`)).rejects.toMatchObject({ retryable: false });
      });
    });

    describe('durable subscriptions', () => {
      it('delivers in order and redelivers when the handler throws', async () => {
        const { log } = await open();
        for (let i = 1; i <= 3; i++) await log.append(`${ns}.evt.run.a`, i);
        const seen: number[] = [];
        let failed = false;
        const sub = await log.subscribe(
          'ordered',
          `${ns}.evt.>`,
          async (message) => {
            seen.push(message.seq);
            if (message.seq === 2 && !failed) {
              failed = true;
              throw new Error('transient');
            }
          },
          { retryDelayMs: 100, ackWaitMs: ACK_WAIT_MS },
        );
        await until(() => seen.length >= 4);
        await sub.stop();
        expect(seen).toEqual([1, 2, 2, 3]);
      }, TEST_TIMEOUT_MS);

      it('counts deliveries and gives up on a message after maxDeliver, then goes on', async () => {
        const { log } = await open();
        for (let i = 1; i <= 2; i++) await log.append(`${ns}.evt.run.a`, i);
        const seen: string[] = [];
        const sub = await log.subscribe(
          'bounded',
          `${ns}.evt.>`,
          async (message, delivery) => {
            seen.push(`${message.seq}:${delivery.deliveryCount}/${delivery.maxDeliver}`);
            if (message.seq === 1) throw new Error('poison');
          },
          { retryDelayMs: 50, ackWaitMs: ACK_WAIT_MS, maxDeliver: 3 },
        );
        await until(() => seen.includes('2:1/3'));
        await sub.stop();
        expect(seen).toEqual(['1:1/3', '1:2/3', '1:3/3', '2:1/3']);
      }, TEST_TIMEOUT_MS);

      it('resumes after a restart without redelivering acknowledged messages', async () => {
        const first = await open();
        for (let i = 1; i <= 3; i++) await first.log.append(`${ns}.evt.run.a`, i);
        const seen: number[] = [];
        const handler = async (message: StoredMessage) => void seen.push(message.seq);
        const sub = await first.log.subscribe('resume', `${ns}.evt.>`, handler, { ackWaitMs: ACK_WAIT_MS });
        await until(() => seen.length === 3);
        await sub.stop();
        await first.close();
        const second = await open();
        await second.log.append(`${ns}.evt.run.a`, 4);
        await second.log.append(`${ns}.evt.other.b`, 5);
        const again = await second.log.subscribe('resume', `${ns}.evt.run.*`, handler, { ackWaitMs: ACK_WAIT_MS });
        await until(() => seen.length >= 4);
        await sleep(300);
        await again.stop();
        expect(seen).toEqual([1, 2, 3, 4]);
      }, TEST_TIMEOUT_MS);

      it('redelivers the message a crashed subscriber never acknowledged', async () => {
        const first = await open();
        for (let i = 1; i <= 3; i++) await first.log.append(`${ns}.evt.run.a`, i);
        const seen: number[] = [];
        await first.log.subscribe(
          'crash',
          `${ns}.evt.>`,
          async (message) => {
            seen.push(message.seq);
            if (message.seq === 2) await never();
          },
          { ackWaitMs: ACK_WAIT_MS },
        );
        await until(() => seen.length === 2);
        await first.close();
        const second = await open();
        const after: number[] = [];
        const sub = await second.log.subscribe('crash', `${ns}.evt.>`, async (message) => void after.push(message.seq), {
          ackWaitMs: ACK_WAIT_MS,
        });
        await until(() => after.length >= 2);
        await sleep(200);
        await sub.stop();
        expect(after).toEqual([2, 3]);
      }, TEST_TIMEOUT_MS);

      it('rejects a subscription filter that spans subject spaces', async () => {
        const { log } = await open();
        const handler = async () => undefined;
        await expect(log.subscribe('spanning', `${ns}.*.run.>`, handler)).rejects.toMatchObject({ retryable: false });
        await expect(log.subscribe('bad name', `${ns}.evt.>`, handler)).rejects.toMatchObject({ retryable: false });
      });

      it('shares one position between subscribers of the same durable', async () => {
        const a = await open();
        const b = await open();
        for (let i = 1; i <= 20; i++) await a.log.append(`${ns}.evt.run.a`, i);
        const seen: number[] = [];
        const handler = async (message: StoredMessage) => {
          seen.push(message.seq);
          await sleep(2);
        };
        const subs = await Promise.all([a, b].map((i) => i.log.subscribe('shared', `${ns}.evt.>`, handler, { ackWaitMs: 2000 })));
        await until(() => seen.length >= 20);
        await sleep(200);
        await Promise.all(subs.map((s) => s.stop()));
        expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      }, TEST_TIMEOUT_MS);
    });

    describe('work queues', () => {
      it('hands each job to exactly one of two consumers', async () => {
        const a = await open();
        const b = await open();
        await a.queues.declare('split', { ackWaitMs: 5000, maxDeliver: 3 });
        await b.queues.declare('split', { ackWaitMs: 5000, maxDeliver: 3 });
        for (let i = 0; i < 50; i++) await a.queues.enqueue('split', { i }, `job-${i}`);
        const handled = new Map<string, string[]>();
        const handler = (who: string) => async (job: Job) => {
          handled.set(job.id, [...(handled.get(job.id) ?? []), who]);
          await sleep(5);
          await job.ack();
        };
        const consumers = [
          await a.queues.consume('split', handler('a'), { concurrency: 2 }),
          await b.queues.consume('split', handler('b'), { concurrency: 2 }),
        ];
        await until(() => handled.size === 50);
        await sleep(300);
        await Promise.all(consumers.map((c) => c.stop()));
        expect([...handled.values()].every((who) => who.length === 1)).toBe(true);
        expect(handled.size).toBe(50);
      }, TEST_TIMEOUT_MS);

      it('redelivers a nak(delay) job after its delay, not before', async () => {
        const { queues } = await open();
        await queues.declare('delayed', { ackWaitMs: 5000, maxDeliver: 3 });
        await queues.enqueue('delayed', 'x', 'd-1');
        const at: { count: number; time: number }[] = [];
        const consumer = await queues.consume('delayed', async (job) => {
          at.push({ count: job.deliveryCount, time: Date.now() });
          if (job.deliveryCount === 1) await job.nak(600);
        });
        await until(() => at.length === 2);
        await consumer.stop();
        expect(at.map((d) => d.count)).toEqual([1, 2]);
        expect(at[1].time - at[0].time).toBeGreaterThanOrEqual(550);
      }, TEST_TIMEOUT_MS);

      it('does not redeliver a job kept alive with working() past its ack wait', async () => {
        const { queues } = await open();
        await queues.declare('long', { ackWaitMs: ACK_WAIT_MS, maxDeliver: 3 });
        await queues.enqueue('long', 'x', 'l-1');
        const deliveries: number[] = [];
        const consumer = await queues.consume(
          'long',
          async (job) => {
            deliveries.push(job.deliveryCount);
            for (let i = 0; i < 6; i++) {
              await sleep(ACK_WAIT_MS / 2);
              await job.working();
            }
            await job.ack();
          },
          { concurrency: 2 },
        );
        await sleep(ACK_WAIT_MS * 3 + 800);
        await consumer.stop();
        expect(deliveries).toEqual([1]);
      }, TEST_TIMEOUT_MS);

      it('redelivers a job whose consumer crashed, after the ack wait', async () => {
        const first = await open();
        await first.queues.declare('crashy', { ackWaitMs: ACK_WAIT_MS, maxDeliver: 3 });
        await first.queues.enqueue('crashy', { n: 1 }, 'c-1');
        let firstAt = 0;
        await first.queues.consume('crashy', async () => {
          firstAt = Date.now();
          await never();
        });
        await until(() => firstAt > 0);
        await first.close();
        const second = await open();
        const redelivered: { count: number; time: number; data: unknown }[] = [];
        const consumer = await second.queues.consume('crashy', async (job) => {
          redelivered.push({ count: job.deliveryCount, time: Date.now(), data: job.data });
        });
        await until(() => redelivered.length === 1);
        await sleep(ACK_WAIT_MS + 200);
        await consumer.stop();
        expect(redelivered).toHaveLength(1);
        expect(redelivered[0]).toMatchObject({ count: 2, data: { n: 1 } });
        expect(redelivered[0].time - firstAt).toBeGreaterThanOrEqual(ACK_WAIT_MS - 50);
      }, TEST_TIMEOUT_MS);

      it('dead-letters a job whose consumer died during its last allowed delivery, and tells listeners', async () => {
        const first = await open();
        await first.queues.declare('lastcrash', { ackWaitMs: ACK_WAIT_MS, maxDeliver: 1 });
        await first.queues.enqueue('lastcrash', { n: 7 }, 'lc-1');
        let taken = false;
        await first.queues.consume('lastcrash', async () => {
          taken = true;
          await never();
        });
        await until(() => taken);
        await first.close();
        const second = await open();
        const heard: DeadLetter[] = [];
        second.queues.onDeadLetter(async (letter) => void heard.push(letter));
        const handled: unknown[] = [];
        const consumer = await second.queues.consume('lastcrash', async (job) => void handled.push(job.data));
        let letters: readonly DeadLetter[] = [];
        // The record is appended before listeners hear of it: wait for both.
        await until(async () => (letters = await second.queues.deadLetters('lastcrash')).length > 0 && heard.length > 0);
        await consumer.stop();
        expect(letters).toEqual([expect.objectContaining({ queue: 'lastcrash', jobId: 'lc-1', data: { n: 7 }, deliveries: 1 })]);
        expect(heard).toHaveLength(1);
        expect(handled).toEqual([]);
      }, TEST_TIMEOUT_MS);

      it('dead-letters a job that fails on its last allowed delivery, records it and tells listeners', async () => {
        const { queues } = await open();
        const heard: DeadLetter[] = [];
        queues.onDeadLetter(async (letter) => void heard.push(letter));
        await queues.declare('poison', { ackWaitMs: 5000, maxDeliver: 2 });
        await queues.enqueue('poison', { bad: true }, 'p-1');
        const deliveries: number[] = [];
        const consumer = await queues.consume(
          'poison',
          async (job) => {
            deliveries.push(job.deliveryCount);
            throw new Error('always fails');
          },
          { retryDelayMs: 50 },
        );
        await until(() => heard.length === 1);
        await sleep(300);
        await consumer.stop();
        expect(deliveries).toEqual([1, 2]);
        const letters = await queues.deadLetters('poison');
        expect(letters).toHaveLength(1);
        expect(letters[0]).toMatchObject({ queue: 'poison', jobId: 'p-1', data: { bad: true }, deliveries: 2 });
        expect(letters[0].reason).toContain('always fails');
        expect(heard[0]).toEqual(letters[0]);
      }, TEST_TIMEOUT_MS);

      it('dead-letters at once on term() with the reason', async () => {
        const { queues } = await open();
        const heard: DeadLetter[] = [];
        queues.onDeadLetter(async (letter) => void heard.push(letter));
        await queues.declare('terminal', { ackWaitMs: ACK_WAIT_MS, maxDeliver: 5 });
        await queues.enqueue('terminal', 'x', 't-1');
        const deliveries: number[] = [];
        const consumer = await queues.consume('terminal', async (job) => {
          deliveries.push(job.deliveryCount);
          await job.term('malformed input');
        });
        await until(() => heard.length === 1);
        await sleep(ACK_WAIT_MS + 300);
        await consumer.stop();
        expect(deliveries).toEqual([1]);
        expect(await queues.deadLetters('terminal')).toEqual([expect.objectContaining({ jobId: 't-1', reason: 'malformed input', deliveries: 1 })]);
        expect(await queues.deadLetters('other')).toEqual([]);
      }, TEST_TIMEOUT_MS);

      it('adds nothing for a repeated msg id', async () => {
        const { queues } = await open();
        await queues.declare('dedupe', { ackWaitMs: 5000, maxDeliver: 3 });
        expect(await queues.enqueue('dedupe', 'x', 'same')).toEqual({ duplicate: false });
        expect(await queues.enqueue('dedupe', 'x', 'same')).toEqual({ duplicate: true });
        const ids: string[] = [];
        const consumer = await queues.consume('dedupe', async (job) => void ids.push(job.id));
        await until(() => ids.length === 1);
        await sleep(300);
        await consumer.stop();
        expect(ids).toEqual(['same']);
      }, TEST_TIMEOUT_MS);

      it('acks a job whose handler returns without settling it', async () => {
        const { queues } = await open();
        await queues.declare('implicit', { ackWaitMs: ACK_WAIT_MS, maxDeliver: 3 });
        await queues.enqueue('implicit', 'x', 'i-1');
        const deliveries: number[] = [];
        const consumer = await queues.consume('implicit', async (job) => void deliveries.push(job.deliveryCount));
        await sleep(ACK_WAIT_MS * 2 + 300);
        await consumer.stop();
        expect(deliveries).toEqual([1]);
      }, TEST_TIMEOUT_MS);
    });

    describe('blobs', () => {
      it('stores content-addressed bytes once and reads them back', async () => {
        const { blobs } = await open();
        const bytes = new TextEncoder().encode('sealed snapshot');
        const digest = await blobs.put(bytes);
        expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
        expect(await blobs.put(bytes)).toBe(digest);
        expect(await blobs.has(digest)).toBe(true);
        expect(Buffer.from((await blobs.get(digest)) ?? [])).toEqual(Buffer.from(bytes));
        const missing = `sha256:${'0'.repeat(64)}`;
        expect(await blobs.has(missing)).toBe(false);
        expect(await blobs.get(missing)).toBeUndefined();
        await expect(blobs.get('md5:abc')).rejects.toMatchObject({ retryable: false });
        expect(await blobs.put(new Uint8Array())).toMatch(/^sha256:/);
      });

      it('stores a large blob (2 MiB, past any single-message limit) once and reads it back whole', async () => {
        const { blobs } = await open();
        const bytes = new Uint8Array(2 * 1024 * 1024).map((_, i) => (i * 31) % 251);
        const digest = await blobs.put(bytes);
        expect(await blobs.put(bytes)).toBe(digest);
        expect(await blobs.has(digest)).toBe(true);
        expect(Buffer.from((await blobs.get(digest)) ?? []).equals(Buffer.from(bytes))).toBe(true);
      });

      async function* chunksOf(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
        for (let start = 0; start < bytes.length; start += size) yield bytes.subarray(start, start + size);
      }

      it.each([
        ['small', 1000, 64],
        ['large', 3 * 1024 * 1024 + 7, 256 * 1024],
        ['empty', 0, 1],
      ])('streams blob (%s) in chunks: same digest as put, stored once, read back whole', async (_name, length, chunk) => {
        const { blobs } = await open();
        const bytes = new Uint8Array(length).map((_, i) => (i * 17 + length) % 253);
        const digest = await blobs.putStream(chunksOf(bytes, chunk));
        expect(digest).toBe(digestOf(bytes));
        expect(await blobs.putStream(chunksOf(bytes, chunk))).toBe(digest);
        expect(await blobs.put(bytes)).toBe(digest);
        expect(Buffer.from((await blobs.get(digest)) ?? []).equals(Buffer.from(bytes))).toBe(true);
      });

      it('stores nothing when the streamed source throws, and rethrows its error as is', async () => {
        const { blobs } = await open();
        const stop = new Error('source refused');
        const yielded = new TextEncoder().encode(`partial ${Date.now()} ${Math.random()}`);
        async function* failing(): AsyncGenerator<Uint8Array> {
          yield yielded;
          throw stop;
        }
        await expect(blobs.putStream(failing())).rejects.toBe(stop);
        expect(await blobs.has(digestOf(yielded))).toBe(false);
      });
    });
  });
}
