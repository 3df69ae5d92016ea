import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AgentBackend } from '../backend';
import { buildPrompt } from '../prompt';
import { runSession, type SessionOutcome } from '../session';
import { anText, anTools, errorReply, oaText, oaTools, startFakeServer, type FakeReply, type FakeServer } from '../testing/fake-server';
import { makeHost, makeStage, tempRun, type TempRun } from '../testing/fixtures';
import { AnthropicBackend } from './anthropic';
import { OpenAIBackend } from './openai';

const emitArgs = { status: 'success', summary: 'wrote the report', artifacts: ['stages/build/attempts/1/artifacts/report.md'], payload: { ok: true } };

interface Flavor {
  readonly name: string;
  readonly text: (t: string) => FakeReply;
  readonly tools: (...calls: [string, unknown][]) => FakeReply;
  /** Arguments the provider would send for a call with unparsable/invalid arguments. */
  readonly malformed: unknown;
  readonly backend: (url: string) => AgentBackend;
  /** The text of every tool result / user message in a request body. */
  readonly transcript: (body: { [k: string]: unknown }) => string;
}

const flavors: Flavor[] = [
  {
    name: 'openai',
    text: oaText,
    tools: (...calls) => oaTools(...calls.map(([n, a]): [string, string] => [n, typeof a === 'string' ? a : JSON.stringify(a)])),
    malformed: '{"status": "success", "summary": ',
    backend: (url) => new OpenAIBackend({ baseURL: `${url}/v1`, apiKey: 'test-key', maxRetries: 2 }),
    transcript: (body) => JSON.stringify(body.messages),
  },
  {
    name: 'anthropic',
    text: anText,
    tools: anTools,
    malformed: 'not an object',
    backend: (url) => new AnthropicBackend({ baseURL: url, apiKey: 'test-key', maxRetries: 2 }),
    transcript: (body) => JSON.stringify(body.messages),
  },
];

let run: TempRun;
let server: FakeServer | undefined;
beforeEach(() => {
  run = tempRun();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  run.cleanup();
});

async function drive(flavor: Flavor, replies: FakeReply[]): Promise<{ outcome: SessionOutcome; reminders: number[]; rejections: string[] }> {
  server = await startFakeServer(replies);
  const stage = makeStage({ model: `${flavor.name}/test-model` });
  const reminders: number[] = [];
  const rejections: string[] = [];
  const host = makeHost(run, { stage, onRejected: (r) => void rejections.push(r) });
  const outcome = await runSession({
    backend: flavor.backend(server.url),
    host,
    stage,
    runId: 'run-1',
    attempt: 1,
    prompt: buildPrompt({ stage, input: { topic: 'x' }, upstream: {}, answeredExchanges: [], tools: host.tools().map((t) => t.name) }),
    recorder: { onReminder: (n) => void reminders.push(n) },
    deadlineAt: Date.now() + 20_000,
  });
  return { outcome, reminders, rejections };
}

describe.each(flavors)('$name backend against a local fake server', (flavor) => {
  it('runs a multi-turn tool loop ending in an emit', async () => {
    const { outcome, reminders } = await drive(flavor, [
      flavor.tools(['write_stage_artifact', { path: 'report.md', content: '# Report' }], ['list_files', {}]),
      flavor.text('I wrote the report.'),
      flavor.tools(['emit_stage_envelope', emitArgs]),
    ]);
    expect(outcome).toEqual({ kind: 'emitted', envelope: emitArgs });
    expect(reminders).toEqual([1]);
    expect(fs.readFileSync(path.join(run.runDir, 'stages/build/attempts/1/artifacts/report.md'), 'utf8')).toBe('# Report');
    const requests = server!.requests;
    expect(requests).toHaveLength(3);
    expect(requests[0]!.body.model).toBe('test-model');
    expect(JSON.stringify(requests[0]!.body)).toContain('emit_stage_envelope');
    expect(flavor.transcript(requests[1]!.body)).toContain('stages/build/attempts/1/artifacts/report.md');
    expect(flavor.transcript(requests[2]!.body)).toContain('Reminder 1 of 2');
  });

  it('answers malformed tool arguments with a tool error and continues', async () => {
    const { outcome, rejections } = await drive(flavor, [flavor.tools(['emit_stage_envelope', flavor.malformed]), flavor.tools(['emit_stage_envelope', emitArgs])]);
    expect(outcome.kind).toBe('emitted');
    expect(rejections).toHaveLength(1);
    expect(rejections[0]).toMatch(/not valid JSON|must be a JSON object/);
    expect(flavor.transcript(server!.requests[1]!.body)).toMatch(/not valid JSON|must be a JSON object/);
  });

  it('retries a 429 and then succeeds', async () => {
    const { outcome } = await drive(flavor, [errorReply(429, 'slow down', { 'retry-after-ms': '5' }), flavor.tools(['emit_stage_envelope', emitArgs])]);
    expect(outcome.kind).toBe('emitted');
    expect(server!.requests).toHaveLength(2);
  });

  it('fails the attempt on 401 with a provider error and no reminder', async () => {
    const { outcome, reminders } = await drive(flavor, [errorReply(401, 'invalid api key')]);
    expect(outcome).toMatchObject({ kind: 'failed', failureKind: 'provider_error', reason: expect.stringMatching(/^provider error: 401 .*invalid api key/) });
    expect(reminders).toEqual([]);
    expect(server!.requests).toHaveLength(1);
  });

  it('parks on ask_operator and resumes with the answer as the tool result', async () => {
    server = await startFakeServer([
      flavor.tools(['ask_operator', { kind: 'confirm', question: 'Ship it?' }]),
      flavor.tools(['emit_stage_envelope', emitArgs]),
    ]);
    const stage = makeStage({ model: `${flavor.name}/m`, gate_kinds: ['confirm'] });
    const base = { backend: flavor.backend(server.url), stage, runId: 'run-1', attempt: 1, recorder: { onReminder: () => undefined } };
    const prompt = buildPrompt({ stage, input: {}, upstream: {}, answeredExchanges: [] });
    const parked = await runSession({ ...base, host: makeHost(run, { stage }), prompt });
    if (parked.kind !== 'parked') throw new Error(`expected parked, got ${JSON.stringify(parked)}`);
    const state = JSON.parse(JSON.stringify(parked.resume));
    const exchange = { exchangeId: parked.exchangeId, attempt: 1, question: parked.question, askedAt: 't', resume: state, answer: { decision: 'accept' as const } };
    const resumed = await runSession({ ...base, backend: flavor.backend(server.url), host: makeHost(run, { stage, exchanges: [exchange] }), prompt, resume: { state, exchange } });
    expect(resumed.kind).toBe('emitted');
    expect(flavor.transcript(server.requests[1]!.body)).toContain('accept');
  });
});
