/**
 * Run requests from another service: a plain NATS client (no Stageflow code) publishes a JSON
 * RunRequestCommand on `<ns>.cmd.run.request` with `Nats-Msg-Id` as its idempotency key, gets the
 * run id in the reply, and follows the run's events on `<ns>.evt.run.<runId>`. Invalid requests
 * get a typed rejection reply and a RunRequestRejected event, never silence.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { headers, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { RunEvent, RunRequestRejected } from '@stageflow/domain';
import { connectJetStream } from '@stageflow/eventlog';
import { assertBuilt, deployment, ROOT, type Deployment } from './support/cluster';
import { natsRunEvents } from './support/events';

jest.setTimeout(90_000);

const FIXTURES = path.join(ROOT, 'e2e/fixtures/scheduler');
const AGENT = `script:${path.join(FIXTURES, 'agent.script.yaml')}`;
const PIPELINE = {
  inline: { entry: 'bus.pipeline.yaml', files: { 'bus.pipeline.yaml': fs.readFileSync(path.join(FIXTURES, 'bus.pipeline.yaml'), 'utf8') } },
};

type Reply = { accepted: true; run_id: string; duplicate: boolean } | { accepted: false; code: string; message: string };

/** Polls the run's events until `done` holds for them (the run's subject is the only contract used). */
async function eventsUntil(d: Deployment, runId: string, done: (events: RunEvent[]) => boolean, timeoutMs = 60_000): Promise<RunEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await natsRunEvents(d, runId);
    if (done(events)) return events;
    if (Date.now() > deadline) throw new Error(`run ${runId}: condition not met within ${timeoutMs} ms; events: ${events.map((e) => e.type).join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const ended = (events: RunEvent[]) => events.some((e) => e.type === 'RunSucceeded' || e.type === 'RunFailed' || e.type === 'RunCancelled');

describe('run requests on the bus e2e', () => {
  let d: Deployment;
  let nc: NatsConnection;

  beforeAll(async () => {
    assertBuilt();
    d = deployment();
    // One at a time: on a busy machine five cold starts at once can each outlast the start timeout.
    const api = await d.start('api', ['--port', '0']);
    for (const [name, args] of [['scheduler', []], ['recovery', []], ['verifier', []], ['agent-runner', ['--agent', AGENT]]] as const) await d.start(name, [...args]);
    await api.waitForLog(/"msg":"serving run requests"/);
    nc = await connect({ servers: String(d.env.NATS_URL) });
  });
  afterAll(async () => {
    await nc?.close();
    await d?.stop();
  });

  /** Exactly what a service in any language does: JSON body, Nats-Msg-Id header, request-reply. */
  async function request(body: unknown, key?: string): Promise<Reply> {
    const h = headers();
    if (key) h.set('Nats-Msg-Id', key);
    const payload = typeof body === 'string' ? body : JSON.stringify(body);
    const reply = await nc.request(`${d.namespace}.cmd.run.request`, payload, { headers: h, timeout: 20_000 });
    return reply.json<Reply>();
  }

  async function rejections(): Promise<RunRequestRejected[]> {
    const js = await connectJetStream({ servers: String(d.env.NATS_URL), namespace: d.namespace });
    try {
      return (await js.log.readSubject<RunRequestRejected>(`${d.namespace}.evt.request.rejected`)).messages.map((m) => m.data);
    } finally {
      await js.close();
    }
  }

  it('the same Nats-Msg-Id twice makes one run: the second reply names it as a duplicate', async () => {
    const key = `order-${randomUUID()}`;
    const body = { pipeline: PIPELINE, input: { name: 'Ada' }, labels: { team: 'billing' }, requested_by: 'billing-service' };
    const first = await request(body, key);
    expect(first).toEqual({ accepted: true, run_id: expect.stringMatching(/^run_/), duplicate: false });
    const second = await request(body, key);
    expect(second).toEqual({ accepted: true, run_id: (first as { run_id: string }).run_id, duplicate: true });

    const runId = (first as { run_id: string }).run_id;
    const events = await eventsUntil(d, runId, ended);
    expect(events.filter((e) => e.type === 'RunRequested')).toEqual([
      expect.objectContaining({ idempotencyKey: key, requestedBy: 'billing-service', input: { name: 'Ada' }, labels: { team: 'billing' } }),
    ]);
    expect(events.filter((e) => e.type === 'StageAttemptStarted')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'RunSucceeded' });

    // The key is recorded in the log, not only in the broker's dedupe window: still the same run
    // after the run ended.
    expect(await request(body, key)).toEqual({ accepted: true, run_id: runId, duplicate: true });
  });

  it('the same key sent concurrently still makes exactly one run', async () => {
    const key = `race-${randomUUID()}`;
    const body = { pipeline: PIPELINE, input: { name: 'Grace' } };
    const replies = await Promise.all([request(body, key), request(body, key), request(body, key)]);
    const ids = new Set(replies.map((r) => (r.accepted ? r.run_id : r.code)));
    expect(ids.size).toBe(1);
    expect(replies.filter((r) => r.accepted && !r.duplicate)).toHaveLength(1);
    const events = await eventsUntil(d, [...ids][0], ended);
    expect(events.filter((e) => e.type === 'RunRequested')).toHaveLength(1);
  });

  it.each([
    ['a body that is not JSON', 'not json', 'request.invalid'],
    ['a pipeline that is neither inline nor a reference', { pipeline: 42 }, 'request.invalid'],
    ['an input that does not match the entry stage schema', { pipeline: PIPELINE, input: { name: 7 } }, 'request.input_invalid'],
    ['a {path} checkout against a cluster', { pipeline: PIPELINE, input: { name: 'Ada' }, checkout: { path: '/srv/repo' } }, 'request.checkout_path_refused'],
  ])('%s gets a typed rejection reply and a RunRequestRejected event', async (_name, body, code) => {
    const key = `bad-${randomUUID()}`;
    const reply = await request(body, key);
    expect(reply).toEqual({ accepted: false, code, message: expect.any(String) });
    expect((await rejections()).filter((r) => r.idempotencyKey === key)).toEqual([
      expect.objectContaining({ type: 'RunRequestRejected', code, message: (reply as { message: string }).message }),
    ]);
  });
});
