/**
 * Cluster mode end to end: every service its own process against real NATS and Postgres. A
 * pipeline is published, a run is started BY REFERENCE from a plain NATS client with a checkout
 * cloned from a bare git repository over file://, its confirm gate is answered from another
 * directory through the API, and the same request replayed after the broker's duplicate window
 * (set to 1 s here) returns the same run. `sf run --server` runs a local pipeline inline.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { connectJetStream } from '@stageflow/eventlog';
import type { RunEvent, RunRequestCommand, RunRequestRejected, RunRequestReply } from '@stageflow/domain';
import { assertBuilt, deployment, ROOT, type Deployment, type ServiceProcess } from './support/cluster';

jest.setTimeout(110_000);

const FIXTURES = path.join(ROOT, 'e2e/fixtures/cluster');
const PIPELINE = path.join(FIXTURES, 'release.pipeline.yaml');
const AGENT = `script:${path.join(FIXTURES, 'agent.script.yaml')}`;
const TOKEN = 'e2e-token';
const WINDOW_MS = 1000;

describe('cluster mode e2e', () => {
  let d: Deployment;
  let api: ServiceProcess;
  let apiUrl: string;
  let nc: NatsConnection;
  let bareRepo: string;

  /** An `sf` process on a machine with no access to the log: only the API URL and a token. */
  const remoteSf = (args: string[], cwd: string) => d.sf(args, { cwd, env: { NATS_URL: '', DATABASE_URL: '', SF_API_TOKEN: TOKEN, STAGEFLOW_HOME: path.join(cwd, '.stageflow') }, timeoutMs: 90_000 });
  const elsewhere = () => fs.mkdtempSync(path.join(os.tmpdir(), 'sf-elsewhere-'));
  const startApi = async () => {
    api = await d.start('api', ['--port', '0']);
    const started = await api.waitForLog(/"msg":"service started"/);
    apiUrl = JSON.parse(started.slice(started.indexOf('{'))).url;
  };
  const request = async (command: RunRequestCommand, key: string): Promise<RunRequestReply> => {
    const h = headers();
    h.set('Nats-Msg-Id', key);
    return (await nc.request(`${d.namespace}.cmd.run.request`, JSON.stringify(command), { timeout: 15_000, headers: h })).json<RunRequestReply>();
  };
  /** Reads from the log with the deployment's duplicate window (a connection re-applies its own). */
  const readLog = async <T>(subject: string) => {
    const js = await connectJetStream({ servers: String(d.env.NATS_URL), namespace: d.namespace, duplicateWindowMs: WINDOW_MS });
    try {
      return (await js.log.readSubject<T>(subject)).messages.map((m) => m.data);
    } finally {
      await js.close();
    }
  };
  const runEvents = async (runId: string) => (await readLog<{ events: RunEvent[] }>(`${d.namespace}.evt.run.${runId}`)).flatMap((m) => m.events);
  const waitForEvent = async (runId: string, type: RunEvent['type']) => {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if ((await runEvents(runId)).some((e) => e.type === type)) return;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`run ${runId}: no ${type} within 60 s`);
  };

  beforeAll(async () => {
    assertBuilt();
    d = deployment({ SF_DUPLICATE_WINDOW_MS: String(WINDOW_MS) });
    const seed = path.join(d.dir, 'seed');
    bareRepo = path.join(d.dir, 'release.git');
    const git = (args: string[], cwd = seed) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, stdio: 'pipe' });
    fs.mkdirSync(seed);
    git(['init', '--quiet']);
    fs.writeFileSync(path.join(seed, 'README.md'), '# Release repository\n\nseeded over file://\n');
    git(['add', '.']);
    git(['commit', '--quiet', '-m', 'seed']);
    git(['clone', '--quiet', '--bare', seed, bareRepo], d.dir);
    // One at a time: on a loaded machine five cold starts at once outlast the harness's start timeout.
    for (const name of ['scheduler', 'recovery', 'verifier']) await d.start(name);
    await d.start('agent-runner', ['--agent', AGENT]);
    await startApi();
    nc = await connect({ servers: String(d.env.NATS_URL) });
  });
  afterAll(async () => {
    await nc?.close();
    await d?.stop();
  });

  it('publishes, runs by reference from a plain NATS client in a git clone, answers the gate from another directory, and the key outlives the duplicate window', async () => {
    const published = await d.sf(['pipelines', 'publish', PIPELINE, '--json']);
    expect(published.stderr).toBe('');
    expect(JSON.parse(published.stdout)).toMatchObject({ id: 'release', version: '1', created: true, digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    const again = await remoteSf(['pipelines', 'publish', PIPELINE, '--server', apiUrl, '--json'], elsewhere());
    expect(JSON.parse(again.stdout)).toEqual({ ...JSON.parse(published.stdout), created: false });
    const listed = await remoteSf(['pipelines', 'list', '--server', apiUrl, '--json'], elsewhere());
    expect(JSON.parse(listed.stdout).pipelines).toEqual([expect.objectContaining({ id: 'release', latest_version: '1', versions: 1 })]);

    const key = `release-r1-${d.namespace}`;
    const command: RunRequestCommand = { pipeline: { ref: { id: 'release' } }, input: { release: 'r1' }, checkout: { git: `file://${bareRepo}`, ref: 'main' }, requested_by: 'deploy-bot' };
    const firstAt = Date.now();
    const reply = await request(command, key);
    expect(reply).toMatchObject({ accepted: true, duplicate: false });
    if (!reply.accepted) throw new Error(reply.message);
    await waitForEvent(reply.run_id, 'OperatorQuestionAsked');
    const shown = await remoteSf(['runs', 'show', '--server', apiUrl, '--run', reply.run_id, '--json'], elsewhere());
    expect(shown.code).toBe(2);
    expect(JSON.parse(shown.stdout)).toMatchObject({ run_id: reply.run_id, status: 'waiting', stages: [{ id: 'ship', status: 'waiting' }] });

    const answered = await remoteSf(['runs', 'answer', '--server', apiUrl, '--run', reply.run_id, '--stage', 'ship', '--decision', 'accept', '--json'], elsewhere());
    expect(answered.stderr).toBe('');
    expect(answered.code).toBe(0);
    const summary = JSON.parse(answered.stdout);
    expect(summary).toMatchObject({ run_id: reply.run_id, pipeline: 'release', status: 'succeeded', stages: [{ id: 'ship', status: 'succeeded' }] });
    expect(summary.stages[0].attempts[0].checks.map((c: { id: string; status: string }) => [c.id, c.status])).toEqual([
      ['works-in-the-clone', 'passed'],
      ['operator-confirmed', 'passed'],
    ]);

    // The replay reaches a restarted API after the window has passed: no broker dedupe, no memory.
    await api.kill();
    await startApi();
    await new Promise((r) => setTimeout(r, Math.max(0, firstAt + WINDOW_MS + 500 - Date.now())));
    const jsm = await jetstreamManager(nc);
    expect((await jsm.streams.info(`${d.namespace.toUpperCase()}_EVENTS`)).config.duplicate_window).toBe(WINDOW_MS * 1_000_000);
    expect(await request(command, key)).toEqual({ accepted: true, run_id: reply.run_id, duplicate: true });
    const idem = await readLog<{ key: string; run_id: string }>(`${d.namespace}.evt.idem.${createHash('sha256').update(key).digest('hex')}`);
    expect(idem).toEqual([{ key, run_id: reply.run_id }]);
    expect((await runEvents(reply.run_id)).filter((e) => e.type === 'RunRequested')).toHaveLength(1);
  });

  it('refuses an unknown pipeline reference and a {path} checkout with typed rejections that are recorded', async () => {
    const key = `unknown-${d.namespace}`;
    expect(await request({ pipeline: { ref: { id: 'release', version: '9' } } }, key)).toMatchObject({ accepted: false, code: 'pipeline.unknown' });
    expect(await request({ pipeline: { ref: { id: 'release' } }, input: { release: 'r' }, checkout: { path: '/srv/repo' } }, `path-${d.namespace}`)).toMatchObject({
      accepted: false,
      code: 'request.checkout_path_refused',
    });
    const rejected = await readLog<RunRequestRejected>(`${d.namespace}.evt.request.rejected`);
    expect(rejected).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'pipeline.unknown', idempotencyKey: key })]));
  });

  it('sf run --server sends a local pipeline inline, follows it live, and exits like the embedded default', async () => {
    const here = elsewhere();
    const waiting = await remoteSf(['run', '--server', apiUrl, '--pipeline', PIPELINE, '--input', '{"release":"r2"}', '--git', `file://${bareRepo}`, '--ref', 'main'], here);
    expect(waiting.code).toBe(2);
    expect(waiting.stdout).toMatch(/• run (\S+) \(release\) requested/);
    expect(waiting.stdout).toMatch(/⏸ ship asks the operator \(confirm\): Ship the release\?/);
    expect(waiting.stdout).toMatch(/ship\s+waiting/);
    const runId = /• run (\S+) \(release\) requested/.exec(waiting.stdout)![1];

    const answered = await remoteSf(['runs', 'answer', '--server', apiUrl, '--run', runId, '--stage', 'ship', '--decision', 'accept'], elsewhere());
    expect(answered.code).toBe(0);
    expect(answered.stdout).toMatch(/✔ ship succeeded/);
    expect(answered.stdout).toMatch(new RegExp(`run ${runId} \\(release\\): succeeded`));
    const verified = await remoteSf(['runs', 'verify', '--server', apiUrl, '--run', runId, '--stage', 'ship', '--json'], elsewhere());
    expect(JSON.parse(verified.stdout)).toMatchObject({ run_id: runId, stage_id: 'ship', status: 'succeeded' });

    const detached = await remoteSf(['run', '--server', apiUrl, '--pipeline', PIPELINE, '--input', '{"release":"r3"}', '--detach', '--json'], here);
    expect(detached.code).toBe(0);
    const { run_id: detachedId } = JSON.parse(detached.stdout);
    const cancelled = await remoteSf(['runs', 'cancel', '--server', apiUrl, '--run', detachedId, '--reason', 'not today', '--json'], elsewhere());
    expect(cancelled.code).toBe(1);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ run_id: detachedId, status: 'stopped' });
  });
});
