/**
 * Least privilege end to end: a private nats-server runs the configuration the topology table
 * renders (as infra/nats/nats.conf is), `sf setup` runs as admin, each of the five services and
 * the CLI connect as their own user, and examples/hello and a three-stage pipeline succeed. Then
 * every user tries what it must not do (delete or purge a stream, create, delete or pull another
 * service's consumer, read another namespace, request a run as a worker, listen to other
 * subjects): the server refuses each. A verdict the agent-runner's (or the admin's) rights can
 * append is refused by every reader: the run does not pass, and the read models agree.
 */
import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import type { RunEvent } from '@stageflow/domain';
import { connectJetStream, inboxPrefixOf, NATS_USERS, topology, type NatsUser } from '@stageflow/eventlog';
import { assertBuilt, deployment, ROOT, type Deployment, type ServiceProcess } from './support/cluster';
import { startPrivateNats, type PrivateNats } from './support/private-nats';

jest.setTimeout(180_000);

const HELLO = path.join(ROOT, 'examples/hello/hello.pipeline.yaml');
const FIXTURES = path.join(ROOT, 'e2e/fixtures/permissions');
const AGENT = `script:${path.join(FIXTURES, 'agent.script.yaml')}`;
const SERVICES: readonly [NatsUser, string[]][] = [['scheduler', []], ['recovery', []], ['verifier', []], ['agent-runner', ['--agent', AGENT]], ['api', []]];
const WORKERS = NATS_USERS.filter((u) => u !== 'admin');

interface RunSummary {
  readonly run_id: string;
  readonly status: string;
  readonly stages: readonly { readonly id: string; readonly status: string }[];
}

describe('least privilege on a private nats-server', () => {
  const namespace = `perm${randomBytes(3).toString('hex')}`;
  const other = `other${randomBytes(3).toString('hex')}`;
  const EVENTS = `${namespace.toUpperCase()}_EVENTS`;
  const WORK = `${namespace.toUpperCase()}_WORK`;
  const table = topology();
  let nats: PrivateNats;
  let d: Deployment;
  const urls = new Map<string, string>();
  const services: ServiceProcess[] = [];
  /** What the services logged about refusals and failures, for a failing assertion's message. */
  const serviceTrouble = () => services.flatMap((s) => s.logs().split('\n').filter((l) => /violation|"level":"(error|warn)"/i.test(l)).map((l) => `${s.name}: ${l.slice(0, 400)}`));

  const asClient = (args: string[]) => d.sf(args, { env: nats.credentials('runs-client'), timeoutMs: 120_000 });
  const connectAs = (user: NatsUser): Promise<NatsConnection> => connect({ servers: nats.url, user, pass: nats.passwords[user], inboxPrefix: inboxPrefixOf(user) });

  beforeAll(async () => {
    assertBuilt();
    nats = await startPrivateNats(namespace);
    // The deployment's own environment is the admin's: `sf setup` runs with it before any service starts.
    d = deployment({ NATS_URL: nats.url, SF_NAMESPACE: namespace, ...nats.credentials('admin') });
    for (const [name, args] of SERVICES) {
      const service = await d.start(name, ['--port', '0', ...args], nats.credentials(name));
      services.push(service);
      const started = await service.waitForLog(/"msg":"service started"/);
      urls.set(name, JSON.parse(started.slice(started.indexOf('{'))).url);
    }
  });
  afterAll(async () => {
    await d?.stop();
    await nats?.stop();
  });

  it('every service is ready with its own user: no subscription of its was refused', async () => {
    for (const [name] of SERVICES) {
      const res = await fetch(`${urls.get(name)}/readyz`);
      const body = (await res.json()) as { ready: boolean; denied_subscriptions?: string[] };
      expect([name, res.status, body.denied_subscriptions]).toEqual([name, 200, undefined]);
    }
  });

  it('runs examples/hello and a three-stage pipeline as runs-client, and reads them back', async () => {
    const [hello, chain] = await Promise.all([
      asClient(['run', '--pipeline', HELLO, '--input', '{"name":"least privilege"}', '--json']),
      asClient(['run', '--pipeline', path.join(FIXTURES, 'chain.pipeline.yaml'), '--json']),
    ]).catch((err: Error) => {
      throw new Error(`${err.message}\nservices:\n${serviceTrouble().join('\n')}`);
    });
    for (const result of [hello, chain]) {
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(result.code).toBe(0);
    }
    const helloRun = JSON.parse(hello.stdout) as RunSummary;
    expect(helloRun).toMatchObject({ status: 'succeeded', stages: [{ id: 'greet', status: 'succeeded' }] });
    const chainRun = JSON.parse(chain.stdout) as RunSummary;
    expect(chainRun.status).toBe('succeeded');
    expect(chainRun.stages.map((s) => [s.id, s.status])).toEqual([
      ['plan', 'succeeded'],
      ['build', 'succeeded'],
      ['review', 'succeeded'],
    ]);

    // build's bundle.txt went through the object store (written by the agent-runner, read by the verifier).
    const admin = await connectAs('admin');
    try {
      const objects = await (await jetstreamManager(admin, { checkAPI: false })).streams.info(`OBJ_${namespace}_blobs`);
      expect(objects.state.messages).toBeGreaterThan(0);
    } finally {
      await admin.close();
    }

    // Reading what the run stored (evidence, transcripts: blobs) needs no more than runs-client's rights.
    for (const args of [['verify', '--stage', 'build'], ['transcript', '--stage', 'build', '--attempt', '1']]) {
      const read = await asClient(['runs', ...args, '--run', chainRun.run_id, '--json']);
      expect([args[0], read.code, read.stderr]).toEqual([args[0], 0, '']);
    }
    const shown = await asClient(['runs', 'show', '--run', chainRun.run_id, '--json']);
    expect([shown.code, JSON.parse(shown.stdout).status]).toEqual([0, 'succeeded']);
    const listed = await asClient(['runs', 'list', '--json']);
    expect([listed.code, listed.stderr]).toEqual([0, '']);
    expect(JSON.parse(listed.stdout).runs.map((r: { run_id: string }) => r.run_id).sort()).toEqual([helloRun.run_id, chainRun.run_id].sort());

    // runs-client may not write to the log (here: publish a pipeline): refused by the server, reported in one line.
    const published = await asClient(['pipelines', 'publish', HELLO]);
    expect(published.code).toBe(1);
    expect(published.stderr).toMatch(/^sf: .*Permissions Violation/im);
    expect(published.stderr).not.toMatch(/\n\s+at /);
  });

  it('a verdict forged with the agent-runner\'s rights, and one appended as admin, are refused by every reader and absent from the read models', async () => {
    const ran = await asClient(['run', '--pipeline', path.join(FIXTURES, 'unproven.pipeline.yaml'), '--json']);
    const before = JSON.parse(ran.stdout) as RunSummary;
    expect(before.status).not.toBe('succeeded');
    const subject = `${namespace}.evt.run.${before.run_id}`;

    // The genuine, signed verdict (failed), turned into a pass: once with the agent-runner's
    // credentials (its signature no longer matches), once unsigned with the admin's.
    const forge = async (user: NatsUser, keepSignature: boolean) => {
      const js = await connectJetStream({ servers: nats.url, namespace, user, pass: nats.passwords[user] });
      try {
        const events = (await js.log.readSubject<{ events: RunEvent[] }>(subject)).messages.flatMap((m) => m.data.events);
        const verdict = events.find((e) => e.type === 'AttemptVerified');
        if (verdict?.type !== 'AttemptVerified') throw new Error(`run ${before.run_id} has no verdict to forge: ${JSON.stringify(events).slice(0, 3000)}`);
        const { signature, ...content } = verdict;
        const passed = { ...content, at: new Date().toISOString(), disposition: 'passed', failure: null, checks: verdict.checks.map((c) => ({ ...c, status: 'passed' })) };
        await js.log.append(subject, { events: [keepSignature ? { ...passed, signature } : passed] });
      } finally {
        await js.close();
      }
    };
    await forge('agent-runner', true);
    await forge('admin', false);

    const shown = await asClient(['runs', 'show', '--run', before.run_id, '--json']);
    const after = JSON.parse(shown.stdout) as RunSummary & { security?: { refused: string }[] };
    expect(after.status).toBe(before.status);
    expect(after.stages.map((s) => s.status)).toEqual(before.stages.map((s) => s.status));
    expect(after.security?.map((n) => n.refused)).toEqual(['AttemptVerified', 'AttemptVerified']);

    // The API's read models (projected from the same log) list the run with the same status.
    const deadline = Date.now() + 30_000;
    let listed: { run_id: string; status: string } | undefined;
    do {
      const res = await fetch(`${urls.get('api')}/api/runs?limit=500`, { headers: { authorization: 'Bearer e2e-token' } });
      listed = ((await res.json()) as { runs: { run_id: string; status: string }[] }).runs.find((r) => r.run_id === before.run_id);
      if (listed) break;
      await new Promise((r) => setTimeout(r, 500));
    } while (Date.now() < deadline);
    expect(listed?.status).toBe(before.status);
  });

  it('a subscription the server refuses is kept on the connection, where /readyz reads it', async () => {
    const js = await connectJetStream({ servers: nats.url, namespace, user: 'scheduler', pass: nats.passwords.scheduler });
    try {
      const subject = `${namespace}.cmd.run.request`;
      await js.bus!.serve(subject, `${namespace}-api`, async () => ({}));
      const deadline = Date.now() + 10_000;
      while (!js.deniedSubscriptions!().includes(subject) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(js.deniedSubscriptions!()).toEqual([subject]);
    } finally {
      await js.close();
    }
  });

  /** Every publish (JetStream API call, append, command) the user must not make. */
  function forbiddenPublishes(user: NatsUser): string[] {
    const forbidden = [
      `$JS.API.INFO`,
      `$JS.API.STREAM.CREATE.${namespace.toUpperCase()}_EXTRA`,
      ...[EVENTS, WORK, `${namespace.toUpperCase()}_BLOBS`, `OBJ_${namespace}_blobs`].flatMap((s) => [`$JS.API.STREAM.DELETE.${s}`, `$JS.API.STREAM.PURGE.${s}`, `$JS.API.STREAM.UPDATE.${s}`]),
      `$JS.API.STREAM.MSG.DELETE.${EVENTS}`,
      // Another namespace: its streams, its subjects.
      `$JS.API.STREAM.INFO.${other.toUpperCase()}_EVENTS`,
      `$JS.API.DIRECT.GET.${other.toUpperCase()}_EVENTS`,
      `$JS.API.CONSUMER.CREATE.${other.toUpperCase()}_EVENTS.reader.${other}.evt.>`,
      `${other}.evt.run.r1`,
      `${other}.cmd.run.request`,
    ];
    for (const { durable, owner } of table.subscriptions) {
      forbidden.push(
        `$JS.API.CONSUMER.DELETE.${EVENTS}.${durable}`,
        `$JS.API.CONSUMER.CREATE.${EVENTS}.${durable}.${namespace}.evt.run.>`,
        `$JS.API.CONSUMER.DURABLE.CREATE.${EVENTS}.${durable}`,
      );
      if (owner !== user) forbidden.push(`$JS.API.CONSUMER.MSG.NEXT.${EVENTS}.${durable}`, `$JS.ACK.${EVENTS}.${durable}.1.1.1.1.1`);
    }
    for (const { queue, producers, consumer } of table.queues) {
      forbidden.push(`$JS.API.CONSUMER.DELETE.${WORK}.${queue}`, `$JS.API.CONSUMER.CREATE.${WORK}.${queue}.${namespace}.work.${queue}`);
      if (consumer !== user) forbidden.push(`$JS.API.CONSUMER.MSG.NEXT.${WORK}.${queue}`);
      if (!producers.includes(user)) forbidden.push(`${namespace}.work.${queue}`);
    }
    if (user !== 'runs-client') forbidden.push(`${namespace}.cmd.run.request`);
    if (user === 'runs-client') forbidden.push(`${namespace}.evt.run.forged`, `${namespace}.blob.forged`);
    return forbidden;
  }

  it.each(WORKERS)('the server refuses every forbidden action of %s', async (user) => {
    const nc = await connectAs(user);
    try {
      const outcomes: [string, string][] = [];
      for (const subject of forbiddenPublishes(user)) {
        const outcome = await nc.request(subject, '{}', { timeout: 5000 }).then(
          (reply) => `answered: ${reply.string().slice(0, 120)}`,
          (err: Error) => (/permissions violation/i.test(err.message) ? 'refused' : `failed otherwise: ${err.message}`),
        );
        outcomes.push([subject, outcome]);
      }
      expect(outcomes.filter(([, outcome]) => outcome !== 'refused')).toEqual([]);

      // Listening: another service's replies, the event subjects, the run requests (except the API).
      const listens = [`_INBOX.>`, `${inboxPrefixOf(user === 'scheduler' ? 'api' : 'scheduler')}.>`, `${namespace}.evt.>`, `${namespace}.work.>`, `${other}.evt.>`];
      if (user !== 'api') listens.push(`${namespace}.cmd.run.request`);
      const refusedListens = await Promise.all(
        listens.map(async (subject) => {
          const sub = nc.subscribe(subject);
          await nc.flush();
          let timer: NodeJS.Timeout | undefined;
          const closed = await Promise.race([sub.closed, new Promise((resolve) => (timer = setTimeout(() => resolve('still open'), 3000)))]);
          clearTimeout(timer);
          return [subject, closed instanceof Error && /permissions violation/i.test(closed.message) ? 'refused' : String(closed)];
        }),
      );
      expect(refusedListens.filter(([, outcome]) => outcome !== 'refused')).toEqual([]);
    } finally {
      await nc.close();
    }
  });
});
