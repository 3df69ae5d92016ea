import type { DeadLetter, Job, JobHandler } from './types';

/** One delivery of a job, as an implementation hands it over; runJob turns it into a Job. */
export interface Delivery<T> {
  readonly id: string;
  readonly queue: string;
  readonly data: T;
  readonly deliveryCount: number;
  readonly maxDeliver: number;
  ack(): Promise<void>;
  nak(delayMs: number): Promise<void>;
  working(): Promise<void>;
  /** Records the dead letter, makes sure the job is never delivered again, and notifies listeners. */
  deadLetter(reason: string): Promise<void>;
}

/**
 * Runs the handler on one delivery. The job settles once: the first ack / nak / term wins and later
 * calls do nothing. Unsettled on return: acked. Thrown: nak'd with `retryDelayMs`, or dead-lettered
 * when this was the last allowed delivery. A nak on the last allowed delivery dead-letters too,
 * because the job would never be delivered again.
 */
export async function runJob<T>(delivery: Delivery<T>, handler: JobHandler<T>, retryDelayMs: number): Promise<void> {
  const last = delivery.deliveryCount >= delivery.maxDeliver;
  let settled = false;
  const settle = (action: () => Promise<void>) => async () => {
    if (settled) return;
    settled = true;
    await action();
  };
  const nak = (delayMs: number, reason: string) =>
    last ? delivery.deadLetter(`${reason} on delivery ${delivery.deliveryCount} of ${delivery.maxDeliver}`) : delivery.nak(delayMs);
  const job: Job<T> = {
    id: delivery.id,
    queue: delivery.queue,
    data: delivery.data,
    deliveryCount: delivery.deliveryCount,
    ack: settle(() => delivery.ack()),
    nak: (delayMs = 0) => settle(() => nak(delayMs, 'nak'))(),
    term: (reason) => settle(() => delivery.deadLetter(reason))(),
    working: async () => {
      if (!settled) await delivery.working();
    },
  };
  try {
    await handler(job);
    await job.ack();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    await settle(() => nak(retryDelayMs, `handler failed: ${message}`))().catch(() => undefined);
  }
}

/** The listeners registered with onDeadLetter. A listener that throws does not undo the dead letter. */
export class DeadLetterListeners {
  private readonly listeners: ((letter: DeadLetter) => Promise<void>)[] = [];

  add(listener: (letter: DeadLetter) => Promise<void>): void {
    this.listeners.push(listener);
  }

  async notify(letter: DeadLetter): Promise<void> {
    await Promise.all(this.listeners.map((listener) => listener(letter).catch(() => undefined)));
  }
}
