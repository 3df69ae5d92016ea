/**
 * Request-reply on core NATS with a queue group: one replica answers each request. Handler errors
 * are answered as `{accepted: false, code: "internal", message}` rather than left unanswered.
 */
import { headers, RequestError, type NatsConnection, type Msg } from '@nats-io/nats-core';
import type { BusRequest, RequestBus } from '../types';
import { toEventLogError } from './errors';

export class NatsRequestBus implements RequestBus {
  constructor(private readonly nc: NatsConnection) {}

  async serve(subject: string, queue: string, handler: (request: BusRequest) => Promise<unknown>): Promise<{ stop(): Promise<void> }> {
    const inFlight = new Set<Promise<void>>();
    const sub = this.nc.subscribe(subject, {
      queue,
      callback: (err, msg) => {
        if (err) return;
        const work = this.answer(msg, handler).finally(() => inFlight.delete(work));
        inFlight.add(work);
      },
    });
    await this.nc.flush();
    return {
      stop: async () => {
        await sub.drain();
        await Promise.allSettled([...inFlight]);
      },
    };
  }

  async request(subject: string, data: unknown, options: { readonly msgId: string; readonly timeoutMs: number }): Promise<{ readonly served: true; readonly reply: unknown } | { readonly served: false }> {
    const h = headers();
    h.set('Nats-Msg-Id', options.msgId);
    try {
      const reply = await this.nc.request(subject, JSON.stringify(data), { timeout: options.timeoutMs, headers: h });
      return { served: true, reply: reply.json<unknown>() };
    } catch (err) {
      if (err instanceof RequestError && err.isNoResponders()) return { served: false };
      throw toEventLogError(err, `request ${subject}`);
    }
  }

  private async answer(msg: Msg, handler: (request: BusRequest) => Promise<unknown>): Promise<void> {
    const raw = msg.string();
    let data: unknown;
    try {
      data = JSON.parse(raw);
    } catch {
      data = undefined;
    }
    let reply: unknown;
    try {
      reply = await handler({ subject: msg.subject, data, raw, ...(msg.headers?.get('Nats-Msg-Id') ? { msgId: msg.headers.get('Nats-Msg-Id') } : {}) });
    } catch (err) {
      reply = { accepted: false, code: 'internal', message: err instanceof Error ? err.message : String(err) };
    }
    if (msg.reply) msg.respond(JSON.stringify(reply));
  }
}
