/**
 * The operator REST surface end to end: every service its own process against real NATS and
 * Postgres, runs requested, decided and read over HTTP with a plain client — the recovery scenarios of recovery.e2e.spec.ts, plus auth, the error codes
 * (400 with the rule, 404, 409 with the reason, 413), idempotency keys, /metrics and /readyz.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunSummary } from '@stageflow/domain';
import type { VerificationReport } from '@stageflow/runtime';
import { assertBuilt, deployment, type Deployment } from './support/cluster';
import { natsRunEvents } from './support/events';
import { attempts, eventsOfType, RECOVERY_AGENT, recoveryPipeline, stageOf, statuses, type Behaviour } from './fixtures/recovery/scenarios';

jest.setTimeout(120_000);

interface Reply<T = unknown> {
  readonly status: number;
  readonly body: T;
  readonly text: string;
}

describe('operator REST e2e (cluster, script agent)', () => {
  let d: Deployment;
  let api: string;
  const runs: Partial<Record<string, Promise<RunSummary>>> = {};

  const http = async <T = Record<string, unknown>>(method: string, route: string, options: { body?: unknown; raw?: string; token?: string | null; headers?: Record<string, string> } = {}): Promise<Reply<T>> => {
    const token = options.token === undefined ? 'e2e-token' : options.token;
    const response = await fetch(`${api}${route}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(method === 'POST' ? { 'content-type': 'application/json' } : {}), ...options.headers },
      ...(options.raw !== undefined ? { body: options.raw } : options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: response.status, body: body as T, text };
  };
  /** Polls GET /api/runs/:id until the run is no longer running. */
  const settled = async (runId: string): Promise<RunSummary> => {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const { body } = await http<RunSummary>('GET', `/api/runs/${runId}`);
      if (body.status !== 'running' || Date.now() > deadline) return body;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  /** POST /api/runs with the pipeline inline, then waits until the run stops running. */
  const start = async (policy: 'repair' | 'manual', behaviour: Behaviour, status: RunSummary['status']): Promise<RunSummary> => {
    const file = recoveryPipeline(d.dir, policy, behaviour);
    const files = { [path.basename(file)]: fs.readFileSync(file, 'utf8') };
    const accepted = await http<{ run_id: string }>('POST', '/api/runs', { body: { pipeline: { inline: { entry: path.basename(file), files } } } });
    if (accepted.status !== 202) throw new Error(`POST /api/runs: ${accepted.status} ${accepted.text}`);
    const summary = await settled(accepted.body.run_id);
    if (summary.status !== status) throw new Error(`run ${policy}/${behaviour} is ${summary.status}, expected ${status}: ${JSON.stringify(summary)}`);
    return summary;
  };
  const started = (name: string) => runs[name]!;

  beforeAll(async () => {
    assertBuilt();
    d = deployment();
    // One at a time: on a loaded machine parallel starts overrun the harness's start timeout.
    const apiProcess = await d.start('api', ['--port', '0']);
    for (const [name, args] of [['scheduler', []], ['recovery', []], ['verifier', []], ['agent-runner', ['--agent', RECOVERY_AGENT]]] as const) await d.start(name, [...args]);
    api = JSON.parse(await apiProcess.waitForLog(/"msg":"service started"/)).url;
    for (const [name, policy, behaviour, status] of [
      ['repairFixes', 'repair', 'fixes', 'succeeded'],
      ['repairBroken', 'repair', 'broken', 'failed'],
      ['flaky', 'repair', 'flaky', 'failed'],
      ['manualFixes', 'manual', 'fixes', 'waiting'],
      ['manualBroken', 'manual', 'broken', 'waiting'],
    ] as const) {
      runs[name] = start(policy, behaviour, status);
      runs[name]!.catch(() => undefined);
    }
  });
  afterAll(async () => d?.stop());

  it('refuses a request without a valid bearer token (401)', async () => {
    expect((await http('GET', '/api/runs', { token: null })).status).toBe(401);
    expect(await http('GET', '/api/runs/x', { token: 'wrong' })).toMatchObject({ status: 401, body: { error: 'unauthorized' } });
    expect((await http('POST', '/mcp', { token: null, body: {} })).status).toBe(401);
  });

  it('serves /metrics in the Prometheus text format with the projector lag, and /readyz reports the lag', async () => {
    const metrics = await http('GET', '/metrics', { token: null });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/^# TYPE stageflow_projector_lag_events gauge$/m);
    expect(metrics.text).toMatch(/^stageflow_projector_lag_events \d+$/m);
    expect(metrics.text).toMatch(/^stageflow_projector_events_total \d+$/m);
    const ready = await http('GET', '/readyz', { token: null });
    expect(ready.body).toMatchObject({ ready: true, projector_lag: expect.any(Number) });
  });

  it('names the rule broken (400), the unknown run or stage (404), and refuses a body over 1 MiB (413)', async () => {
    const { run_id: runId } = await started('manualFixes');
    expect(await http('GET', '/api/runs/run_nope')).toMatchObject({ status: 404, body: { error: 'run.not_found' } });
    expect(await http('GET', `/api/runs/${runId}/stages/nope/verification`)).toMatchObject({ status: 404, body: { error: 'stage.not_found' } });
    expect(await http('POST', `/api/runs/${runId}/stages/nope/recovery`, { body: { guidance: 'x' } })).toMatchObject({ status: 404, body: { error: 'stage.not_found' } });
    expect(await http('POST', `/api/runs/${runId}/stages/fixes/recovery`, { body: {} })).toMatchObject({ status: 400, body: { error: 'recovery.guidance_required' } });
    expect(await http('POST', `/api/runs/${runId}/stages/fixes/recovery`, { body: { guidance: 'x', extra: 1 } })).toMatchObject({
      status: 400,
      body: { error: 'request.unknown_field', message: expect.stringMatching(/extra/) },
    });
    expect(await http('POST', `/api/runs/${runId}/stages/fixes/recovery`, { body: { guidance: 'x'.repeat(4001) } })).toMatchObject({ status: 400, body: { error: 'recovery.guidance_invalid' } });
    expect(await http('POST', `/api/runs/${runId}/stages/fixes/feedback-decision`, { body: { decision: 'maybe' } })).toMatchObject({ status: 400, body: { error: 'feedback.decision_invalid' } });
    expect(await http('POST', `/api/runs/${runId}/stages/fixes/recovery`, { headers: { 'idempotency-key': 'has space' }, body: { guidance: 'x' } })).toMatchObject({
      status: 400,
      body: { error: 'idempotency.key_invalid' },
    });
    const large = await http('POST', `/api/runs/${runId}/stages/fixes/recovery`, { raw: JSON.stringify({ guidance: 'x'.repeat(1024 * 1024 + 1) }) });
    expect(large).toMatchObject({ status: 413, body: { error: 'request.too_large' } });
    // Nothing above was a decision: the stage still awaits one.
    expect(stageOf((await http<RunSummary>('GET', `/api/runs/${runId}`)).body, 'fixes').waiting_for).toBe('recovery_decision');
  });

  it('a feedback-loop decision on a stage that is no loop source is refused with the reason (409)', async () => {
    const { run_id: runId } = await started('manualFixes');
    expect(await http('POST', `/api/runs/${runId}/stages/fixes/feedback-decision`, { body: { decision: 'continue' } })).toMatchObject({
      status: 409,
      body: { error: 'feedback.no_loop', message: 'stage fixes is not a feedback loop source' },
    });
  });

  it('the CLI against the API: runs list --server reads the read models; feedback-decide --server gets the same refusal', async () => {
    const { run_id: runId } = await started('manualFixes');
    const env = { SF_API_TOKEN: 'e2e-token', NATS_URL: '', DATABASE_URL: '' };
    let listed: { runs: { run_id: string; status: string }[] } = { runs: [] };
    for (let i = 0; i < 50 && !listed.runs.some((r) => r.run_id === runId); i++) {
      const list = await d.sf(['runs', 'list', '--server', api, '--status', 'waiting', '--json'], { env });
      expect(list.code).toBe(0);
      listed = JSON.parse(list.stdout);
      if (!listed.runs.some((r) => r.run_id === runId)) await new Promise((r) => setTimeout(r, 200));
    }
    expect(listed.runs).toContainEqual(expect.objectContaining({ run_id: runId, status: 'waiting' }));
    const decided = await d.sf(['runs', 'feedback-decide', '--server', api, '--run', runId, '--stage', 'fixes', '--decision', 'continue'], { env });
    expect(decided.code).toBe(1);
    expect(decided.stderr).toMatch(/stage fixes is not a feedback loop source/);
  });

  it('reads a repair: the failed attempt and the passing repair, each with its checks and evidence', async () => {
    const { run_id: runId } = await started('repairFixes');
    const { status, body } = await http<VerificationReport>('GET', `/api/runs/${runId}/stages/fixes/verification`);
    expect(status).toBe(200);
    expect(body.attempts.map((a) => [a.n, a.reason, a.disposition])).toEqual([
      [1, 'initial', 'failed'],
      [2, 'repair', 'passed'],
    ]);
    const failed = body.attempts[0]!.checks.find((c) => c.id === 'report-says-fixed');
    expect(failed).toMatchObject({ status: 'failed', evidence: expect.any(Object) });
    expect(((await http<RunSummary>('GET', `/api/runs/${runId}`)).body).status).toBe('succeeded');
  });

  it('reads an exhausted repair: stage and run failed, successor skipped', async () => {
    const { run_id: runId } = await started('repairBroken');
    const summary = (await http<RunSummary>('GET', `/api/runs/${runId}`)).body;
    expect(summary.status).toBe('failed');
    expect(attempts(summary, 'broken')).toEqual([
      [1, 'initial', 'failed'],
      [2, 'repair', 'failed'],
    ]);
    expect(statuses(summary)).toEqual([
      ['broken', 'failed'],
      ['publish', 'skipped'],
    ]);
  });

  it('an agent failure is not repaired (one attempt); POST retry starts a fresh attempt that passes', async () => {
    const { run_id: runId } = await started('flaky');
    expect(attempts((await http<RunSummary>('GET', `/api/runs/${runId}`)).body, 'flaky')).toEqual([[1, 'initial', 'not_run']]);
    const retry = await http<RunSummary>('POST', `/api/runs/${runId}/stages/flaky/retry`);
    expect(retry.status).toBe(200);
    const summary = await settled(runId);
    expect(attempts(summary, 'flaky')).toEqual([
      [1, 'initial', 'not_run'],
      [2, 'retry', 'passed'],
    ]);
    expect(summary.status).toBe('succeeded');
  });

  it('manual recovery with guidance: retry refused (409), one decision per idempotency key, the guided attempt passes, a second decision refused', async () => {
    const { run_id: runId } = await started('manualFixes');
    expect(await http('POST', `/api/runs/${runId}/stages/fixes/retry`)).toMatchObject({
      status: 409,
      body: { error: 'retry.manual_recovery', message: 'stage fixes uses manual recovery; use the recovery action instead of retry' },
    });
    const key = { 'idempotency-key': `recover-${runId}`, 'x-stageflow-operator': 'alice' };
    const guidance = { guidance: 'write "fixed" in report.md' };
    const [first, second] = await Promise.all([
      http<RunSummary>('POST', `/api/runs/${runId}/stages/fixes/recovery`, { headers: key, body: guidance }),
      http<RunSummary>('POST', `/api/runs/${runId}/stages/fixes/recovery`, { headers: key, body: guidance }),
    ]);
    expect(first.status).toBe(200);
    expect(second).toEqual(first);
    const third = await http<RunSummary>('POST', `/api/runs/${runId}/stages/fixes/recovery`, { headers: key, body: guidance });
    expect(third).toEqual(first);
    expect(await http('POST', `/api/runs/${runId}/stages/fixes/recovery`, { headers: key, body: { guidance: 'something else' } })).toMatchObject({
      status: 400,
      body: { error: 'idempotency.key_reused' },
    });
    const summary = await settled(runId);
    expect(summary.status).toBe('succeeded');
    expect(attempts(summary, 'fixes')).toEqual([
      [1, 'initial', 'failed'],
      [2, 'manual_retry', 'passed'],
    ]);
    const events = await natsRunEvents(d, runId);
    expect(eventsOfType(events, 'ManualRecoveryDecided')).toEqual([expect.objectContaining({ decision: 'guidance', guidance: guidance.guidance, by: 'api:legacy-1', claimedBy: 'alice' })]);
    expect(eventsOfType(events, 'StageAttemptStarted').find((e) => e.stageId === 'fixes' && e.attempt === 2)).toMatchObject({
      guidance: guidance.guidance,
      capsule: { attempt: 1, failed_checks: [{ id: 'report-says-fixed' }] },
    });
    expect(await http('POST', `/api/runs/${runId}/stages/fixes/recovery/stop`)).toMatchObject({
      status: 409,
      body: { error: 'recovery.already_decided', message: 'the recovery decision for stage fixes was already made' },
    });
  });

  it('manual stop: the run fails with successors skipped; retry and a further decision are refused after the stop (409)', async () => {
    const { run_id: runId } = await started('manualBroken');
    const key = { 'idempotency-key': `stop-${runId}` };
    const stop = await http<RunSummary>('POST', `/api/runs/${runId}/stages/broken/recovery/stop`, { headers: key });
    expect(stop.status).toBe(200);
    const summary = await settled(runId);
    expect(summary.status).toBe('failed');
    expect(statuses(summary)).toEqual([
      ['broken', 'failed'],
      ['publish', 'skipped'],
    ]);
    // A repeat of the stop with its key is the same answer, not a refusal.
    expect(await http('POST', `/api/runs/${runId}/stages/broken/recovery/stop`, { headers: key })).toEqual(stop);
    expect(await http('POST', `/api/runs/${runId}/stages/broken/retry`)).toMatchObject({ status: 409, body: { error: 'retry.manual_recovery' } });
    expect(await http('POST', `/api/runs/${runId}/stages/broken/recovery`, { body: { guidance: 'again' } })).toMatchObject({ status: 409, body: { error: 'recovery.already_decided' } });
    expect(eventsOfType(await natsRunEvents(d, runId), 'ManualRecoveryDecided')).toHaveLength(1);
  });
});
