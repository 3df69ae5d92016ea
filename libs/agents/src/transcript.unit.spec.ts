import { goodEmit, makeHost, tempRun, type TempRun } from './testing/fixtures';
import { TranscriptRecorder } from './transcript';

const CANARY = 'canary-7f3a9c1e5b';
const API_KEY = 'sk-test-0123456789abcdef';

let run: TempRun;
const saved = { canary: process.env.SF_CANARY_TOKEN, key: process.env.OPENAI_API_KEY };
beforeEach(() => {
  run = tempRun();
  process.env.SF_CANARY_TOKEN = CANARY;
  process.env.OPENAI_API_KEY = API_KEY;
});
afterEach(() => {
  run.cleanup();
  for (const [name, value] of [['SF_CANARY_TOKEN', saved.canary], ['OPENAI_API_KEY', saved.key]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('TranscriptRecorder', () => {
  it('records every tool call with its arguments and result, secrets redacted', async () => {
    const recorder = new TranscriptRecorder({ secrets: ['tool-token-abc123'] });
    const host = makeHost(run, { onToolCall: recorder.onToolCall });
    await host.call('write_file', { path: 'notes.txt', content: `key=${API_KEY}` });
    await host.call('run_command', { command: `printf '%s tool-token-abc123' ${CANARY}` });
    await host.call('emit_stage_envelope', { ...goodEmit, summary: `done with ${CANARY}` });

    const transcript = recorder.takeTurn(1, { kind: 'reminder', n: 1, text: `token ${CANARY}` }, { kind: 'ended', text: `bye ${API_KEY}` });
    const stored = JSON.stringify(transcript);

    expect(transcript.toolCalls.map((c) => c.name)).toEqual(['write_file', 'run_command', 'emit_stage_envelope']);
    expect(JSON.parse(transcript.toolCalls[1]!.result.content)).toMatchObject({ exit_code: 0, stdout: '[REDACTED] [REDACTED]' });
    expect(stored).toContain('[REDACTED]');
    for (const secret of [CANARY, API_KEY, 'tool-token-abc123']) expect(stored).not.toContain(secret);
  });

  it('starts a fresh call list for each turn', async () => {
    const recorder = new TranscriptRecorder();
    const host = makeHost(run, { onToolCall: recorder.onToolCall });
    await host.call('write_file', { path: 'a.txt', content: 'a' });
    expect(recorder.takeTurn(1, { kind: 'reminder', n: 1, text: 'r' }, { kind: 'ended' }).toolCalls).toHaveLength(1);
    expect(recorder.takeTurn(2, { kind: 'reminder', n: 2, text: 'r' }, { kind: 'aborted' }).toolCalls).toHaveLength(0);
  });
});
