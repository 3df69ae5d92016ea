/**
 * One poison run among twenty good ones, on the five services (cluster) and on the embedded
 * default: the twenty succeed, the poison run ends `error` with its reason, nothing hangs.
 *
 * How the poison is made: a RunRequested appended straight to the run's subject (as anything with
 * append rights to it could; the API and `sf run` would refuse the pipeline) whose only stage has
 * no `io`. Every service folds it without trouble, but the scheduler's input check throws a
 * TypeError on each delivery: a retryable-looking failure that never passes. After the
 * subscription's max_deliver the scheduler dead-letters the message and the run ends `error`.
 * The good runs are requested after the poison, so on the embedded default (one message at a
 * time per subscriber) they queue behind it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { headers, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { connectJetStream, openEmbedded, type EventLog } from '@stageflow/eventlog';
import type { InlinePipelineBundle, RunEvent, RunRequestReply } from '@stageflow/domain';
import { assertBuilt, deployment, ROOT, type Deployment } from './support/cluster';
import { natsRunEvents } from './support/events';
import { embedded, type Embedded } from './support/embedded';

jest.setTimeout(300_000);

const FIXTURES = path.join(ROOT, 'e2e/fixtures/scheduler');
const PIPELINE = path.join(FIXTURES, 'bus.pipeline.yaml');
const AGENT = `script:${path.join(FIXTURES, 'agent.script.yaml')}`;
const GOOD_RUNS = 20;
const POISON_RUN = 'run_poison0001';

/** The poison: a run whose stage has no io (see the file comment). */
function poisonRequest(runId: string): { events: unknown[] } {
  const stage = { id: 'p_stage', system_prompt: 'Never runs.', model: 'script/scheduler', verify: [], gate_kinds: [], entry: true, route: [], replay_safe: true };
  const requested = { v: 1, type: 'RunRequested', runId, at: new Date().toISOString(), pipeline: { id: 'poison', stages: [stage] }, input: {}, checkout: { kind: 'fresh' }, labels: {}, requestedBy: 'e2e-poison' };
  return { events: [requested] };
}

async function appendPoison(log: EventLog, namespace: string): Promise<void> {
  await log.append(`${namespace}.evt.run.${POISON_RUN}`, poisonRequest(POISON_RUN), { expectedLastSubjectSequence: 0 });
}

function summaryOf(result: { code: number; stdout: string; stderr: string }): unknown {
  if (!result.stdout.trim()) throw new Error(`sf runs show printed nothing (exit ${result.code}): ${result.stderr.slice(-2000)}`);
  return JSON.parse(result.stdout);
}

describe('a poison run among twenty good ones: five services', () => {
  let d: Deployment;
  let nc: NatsConnection;

  const request = async (command: unknown, key: string): Promise<RunRequestReply> => {
    const h = headers();
    h.set('Nats-Msg-Id', key);
    const body = typeof command === 'string' ? command : JSON.stringify(command);
    return (await nc.request(`${d.namespace}.cmd.run.request`, body, { timeout: 20_000, headers: h })).json<RunRequestReply>();
  };
  /** The run's terminal event, polling the log. */
  const ending = async (runId: string, deadlineAt: number): Promise<RunEvent> => {
    for (;;) {
      const end = (await natsRunEvents(d, runId)).find((e) => e.type === 'RunSucceeded' || e.type === 'RunFailed' || e.type === 'RunErrored' || e.type === 'RunCancelled');
      if (end) return end;
      if (Date.now() > deadlineAt) throw new Error(`run ${runId} did not end in time`);
      await new Promise((r) => setTimeout(r, 500));
    }
  };

  beforeAll(async () => {
    assertBuilt();
    d = deployment();
    // One at a time: on a busy machine five cold starts at once can each outlast the start timeout.
    await d.start('api', ['--port', '0']);
    for (const [name, args] of [['scheduler', []], ['recovery', []], ['verifier', []], ['agent-runner', ['--agent', AGENT]]] as const) await d.start(name, [...args]);
    nc = await connect({ servers: String(d.env.NATS_URL) });
  });
  afterAll(async () => {
    await nc?.close();
    await d?.stop();
  });

  it('the twenty succeed, the poison run ends error with its reason, and the message is dead-lettered', async () => {
    const js = await connectJetStream({ servers: String(d.env.NATS_URL), namespace: d.namespace });
    try {
      await appendPoison(js.log, d.namespace);
    } finally {
      await js.close();
    }
    const bundle: InlinePipelineBundle = { entry: path.basename(PIPELINE), files: { [path.basename(PIPELINE)]: fs.readFileSync(PIPELINE, 'utf8') } };
    const replies = await Promise.all(Array.from({ length: GOOD_RUNS }, (_, i) => request({ pipeline: { inline: bundle }, input: { name: `n${i}` } }, `poison-e2e-${i}`)));
    const goodIds = replies.map((reply) => {
      if (!reply.accepted) throw new Error(`request refused: ${reply.code} ${reply.message}`);
      return reply.run_id;
    });
    const deadlineAt = Date.now() + 180_000;
    const endings = await Promise.all(goodIds.map((id) => ending(id, deadlineAt)));
    expect(endings.map((e) => e.type)).toEqual(Array(GOOD_RUNS).fill('RunSucceeded'));
    const poisonEnd = await ending(POISON_RUN, deadlineAt);
    expect(poisonEnd).toMatchObject({ type: 'RunErrored', reason: expect.stringMatching(/^scheduler could not process .*evt\.run\.run_poison0001 seq \d+: failed on delivery 10 of 10: TypeError/) });

    const reader = await connectJetStream({ servers: String(d.env.NATS_URL), namespace: d.namespace });
    try {
      const dead = (await reader.log.read<{ subject: string; deliveries: number }>(`${d.namespace}.dead.events.scheduler`)).map((m) => m.data);
      expect(dead).toEqual([expect.objectContaining({ subject: `${d.namespace}.evt.run.${POISON_RUN}`, deliveries: 10 })]);
    } finally {
      await reader.close();
    }

    const shown = await d.sf(['runs', 'show', '--run', POISON_RUN, '--json']);
    expect(shown.code).toBe(1);
    expect(summaryOf(shown)).toMatchObject({ run_id: POISON_RUN, status: 'error', reason: expect.stringContaining('TypeError') });
  });

  it('refuses a bus request whose input nests 8,000 levels deep with its code', async () => {
    const bundle: InlinePipelineBundle = { entry: path.basename(PIPELINE), files: { [path.basename(PIPELINE)]: fs.readFileSync(PIPELINE, 'utf8') } };
    // Written as text: JSON.stringify itself overflows the stack on such a value.
    const deep = `${'{"a":'.repeat(8000)}1${'}'.repeat(8000)}`;
    const body = `{"pipeline":${JSON.stringify({ inline: bundle })},"input":{"name":"deep","more":${deep}}}`;
    expect(await request(body, 'poison-e2e-deep')).toMatchObject({ accepted: false, code: 'input.too_deep' });
  });
});

describe('a poison run among twenty good ones: the embedded default', () => {
  let e: Embedded;
  beforeAll(() => {
    assertBuilt();
    // Read models are not what this is about; without them each `sf run` starts faster.
    e = embedded({ SF_READ_MODELS: 'off' });
  });
  afterAll(async () => e?.cleanup());

  it('every later run in the state directory still finishes; the poison run ends error', async () => {
    const log = openEmbedded({ dir: path.join(e.dir, 'home', 'log') });
    try {
      await appendPoison(log.log, 'sf');
    } finally {
      await log.close();
    }
    const run = async (i: number) => {
      const result = await e.sf(['run', '--pipeline', PIPELINE, '--agent', AGENT, '--input', JSON.stringify({ name: `n${i}` }), '--json'], 180_000);
      if (!result.stdout.trim()) throw new Error(`sf run ${i} printed nothing (exit ${result.code}): ${result.stderr.slice(-2000)}`);
      return { code: result.code, status: (JSON.parse(result.stdout) as { status: string }).status };
    };
    // Four lanes of five `sf run` processes, sharing one state directory.
    const lanes = await Promise.all(
      Array.from({ length: 4 }, async (_, lane) => {
        const results: { code: number; status: string }[] = [];
        for (let k = 0; k < GOOD_RUNS / 4; k++) results.push(await run(lane * 5 + k));
        return results;
      }),
    );
    expect(lanes.flat()).toEqual(Array(GOOD_RUNS).fill({ code: 0, status: 'succeeded' }));

    const shown = await e.sf(['runs', 'show', '--run', POISON_RUN, '--json']);
    expect(shown.code).toBe(1);
    expect(summaryOf(shown)).toMatchObject({ run_id: POISON_RUN, status: 'error', reason: expect.stringMatching(/^scheduler could not process sf\.evt\.run\.run_poison0001 seq 1: failed on delivery 10 of 10: TypeError/) });
  });
});
