/**
 * The MCP server end to end with real MCP clients from the SDK: over stdio (the client spawns
 * `sf mcp` against the cluster) and over streamable HTTP (`/mcp` on the API, bearer auth). The
 * tools drive the recovery scenarios of recovery.e2e.spec.ts and answer as REST does: a refusal
 * is a tool error carrying the REST status and code.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RunSummary } from '@stageflow/domain';
import type { VerificationReport } from '@stageflow/runtime';
import { assertBuilt, deployment, SF, type Deployment } from './support/cluster';
import { natsRunEvents } from './support/events';
import { attempts, eventsOfType, RECOVERY_AGENT, recoveryPipeline, stageOf, statuses, type Behaviour } from './fixtures/recovery/scenarios';

jest.setTimeout(120_000);

const TOOLS = ['answer_operator', 'decide_feedback_loop', 'get_run', 'get_stage_verification', 'recover_manual_stage', 'stop_manual_recovery'];

interface ToolReply<T> {
  readonly isError: boolean;
  readonly value: T;
}

describe('MCP e2e (stdio and streamable HTTP, cluster, script agent)', () => {
  let d: Deployment;
  let api: string;
  let stdio: Client;
  let http: Client;
  const runs: Partial<Record<string, Promise<RunSummary>>> = {};

  const call = async <T = RunSummary>(client: Client, name: string, args: Record<string, unknown>): Promise<ToolReply<T>> => {
    const result = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[] };
    return { isError: Boolean(result.isError), value: JSON.parse(result.content[0]!.text) as T };
  };
  /** Polls get_run until the run stops running. */
  const settled = async (client: Client, runId: string): Promise<RunSummary> => {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const { value } = await call(client, 'get_run', { runId });
      if (value.status !== 'running' || Date.now() > deadline) return value;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  const start = async (policy: 'repair' | 'manual', behaviour: Behaviour, status: RunSummary['status']): Promise<RunSummary> => {
    const file = recoveryPipeline(d.dir, policy, behaviour);
    const response = await fetch(`${api}/api/runs`, {
      method: 'POST',
      headers: { authorization: 'Bearer e2e-token', 'content-type': 'application/json' },
      body: JSON.stringify({ pipeline: { inline: { entry: path.basename(file), files: { [path.basename(file)]: fs.readFileSync(file, 'utf8') } } } }),
    });
    if (response.status !== 202) throw new Error(`POST /api/runs: ${response.status} ${await response.text()}`);
    const summary = await settled(http, ((await response.json()) as { run_id: string }).run_id);
    if (summary.status !== status) throw new Error(`run ${policy}/${behaviour} is ${summary.status}, expected ${status}`);
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
    http = new Client({ name: 'e2e-http', version: '1.0.0' });
    await http.connect(new StreamableHTTPClientTransport(new URL(`${api}/mcp`), { requestInit: { headers: { authorization: 'Bearer e2e-token', 'x-stageflow-operator': 'bob' } } }));
    stdio = new Client({ name: 'e2e-stdio', version: '1.0.0' });
    const env = Object.fromEntries(Object.entries({ ...d.env, STAGEFLOW_HOME: path.join(d.dir, 'mcp') }).filter((e): e is [string, string] => e[1] !== undefined));
    await stdio.connect(new StdioClientTransport({ command: process.execPath, args: [SF, 'mcp'], env, stderr: 'ignore' }));
    for (const [name, policy, behaviour, status] of [
      ['repairFixes', 'repair', 'fixes', 'succeeded'],
      ['manualFixes', 'manual', 'fixes', 'waiting'],
      ['manualBroken', 'manual', 'broken', 'waiting'],
    ] as const) {
      runs[name] = start(policy, behaviour, status);
      runs[name]!.catch(() => undefined);
    }
  });
  afterAll(async () => {
    await stdio?.close();
    await http?.close();
    await d?.stop();
  });

  it('lists the six tools over both transports', async () => {
    for (const client of [stdio, http]) expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(TOOLS);
  });

  it('refuses an HTTP client without the bearer token', async () => {
    const anonymous = new Client({ name: 'e2e-anonymous', version: '1.0.0' });
    await expect(anonymous.connect(new StreamableHTTPClientTransport(new URL(`${api}/mcp`)))).rejects.toThrow(/401|unauthorized/i);
  });

  it('get_stage_verification reads a repair: the failed attempt and the passing repair', async () => {
    const { run_id: runId } = await started('repairFixes');
    const { isError, value } = await call<VerificationReport>(stdio, 'get_stage_verification', { runId, stageId: 'fixes' });
    expect(isError).toBe(false);
    expect(value.attempts.map((a) => [a.n, a.reason, a.disposition])).toEqual([
      [1, 'initial', 'failed'],
      [2, 'repair', 'passed'],
    ]);
  });

  it('reports unknown runs and stages (404) and bad input (400) as tool errors with the REST codes', async () => {
    const { run_id: runId } = await started('manualFixes');
    expect(await call(stdio, 'get_run', { runId: 'run_nope' })).toEqual({ isError: true, value: { status: 404, error: 'run.not_found', message: 'run run_nope not found' } });
    expect(await call(http, 'get_stage_verification', { runId, stageId: 'nope' })).toMatchObject({ isError: true, value: { status: 404, error: 'stage.not_found' } });
    expect(await call(http, 'recover_manual_stage', { runId, stageId: 'fixes', guidance: ' ' })).toMatchObject({ isError: true, value: { status: 400, error: 'recovery.guidance_required' } });
    expect(await call(http, 'decide_feedback_loop', { runId, stageId: 'fixes', decision: 'maybe' })).toMatchObject({ isError: true, value: { status: 400, error: 'feedback.decision_invalid' } });
  });

  it('refuses decisions the state does not allow (409 with the reason)', async () => {
    const { run_id: runId } = await started('manualFixes');
    expect(await call(http, 'decide_feedback_loop', { runId, stageId: 'fixes', decision: 'continue' })).toEqual({
      isError: true,
      value: { status: 409, error: 'feedback.no_loop', message: 'stage fixes is not a feedback loop source' },
    });
    expect(await call(stdio, 'answer_operator', { runId, stageId: 'fixes', answer: { text: 'hi' } })).toMatchObject({ isError: true, value: { status: 409, error: 'answer.no_question' } });
  });

  it('recover_manual_stage (stdio) starts a guided attempt that passes; a second decision is refused', async () => {
    const { run_id: runId } = await started('manualFixes');
    const recovered = await call(stdio, 'recover_manual_stage', { runId, stageId: 'fixes', guidance: 'write "fixed" in report.md', idempotencyKey: `mcp-${runId}` });
    expect(recovered.isError).toBe(false);
    expect(stageOf(recovered.value, 'fixes').attempts.map((a) => a.reason)).toEqual(['initial', 'manual_retry']);
    expect(await call(stdio, 'recover_manual_stage', { runId, stageId: 'fixes', guidance: 'write "fixed" in report.md', idempotencyKey: `mcp-${runId}` })).toEqual(recovered);
    const summary = await settled(stdio, runId);
    expect(summary.status).toBe('succeeded');
    expect(attempts(summary, 'fixes')).toEqual([
      [1, 'initial', 'failed'],
      [2, 'manual_retry', 'passed'],
    ]);
    expect(eventsOfType(await natsRunEvents(d, runId), 'ManualRecoveryDecided')).toEqual([expect.objectContaining({ decision: 'guidance', by: expect.stringMatching(/^mcp:/) })]);
    expect(await call(http, 'stop_manual_recovery', { runId, stageId: 'fixes' })).toMatchObject({
      isError: true,
      value: { status: 409, error: 'recovery.already_decided', message: 'the recovery decision for stage fixes was already made' },
    });
  });

  it('stop_manual_recovery (HTTP) ends the stage: the run fails, successors skipped; recovery refused after the stop', async () => {
    const { run_id: runId } = await started('manualBroken');
    const stopped = await call(http, 'stop_manual_recovery', { runId, stageId: 'broken' });
    expect(stopped.isError).toBe(false);
    const summary = await settled(http, runId);
    expect(summary.status).toBe('failed');
    expect(statuses(summary)).toEqual([
      ['broken', 'failed'],
      ['publish', 'skipped'],
    ]);
    expect(eventsOfType(await natsRunEvents(d, runId), 'ManualRecoveryDecided')).toEqual([expect.objectContaining({ decision: 'stop', by: 'mcp:legacy-1', claimedBy: 'bob' })]);
    expect(await call(stdio, 'recover_manual_stage', { runId, stageId: 'broken', guidance: 'again' })).toMatchObject({ isError: true, value: { status: 409, error: 'recovery.already_decided' } });
  });
});
