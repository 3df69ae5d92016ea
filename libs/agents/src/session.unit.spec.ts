import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Exchange, StageDefinition } from '@stageflow/domain';
import { buildPrompt } from './prompt';
import { ScriptBackend } from './script/script';
import { parseScript } from './script/script-file';
import { runSession, type RunSessionOptions, type SessionOutcome } from './session';
import { makeHost, makeStage, tempRun, type TempRun } from './testing/fixtures';

let run: TempRun;
beforeEach(() => {
  run = tempRun();
});
afterEach(() => run.cleanup());

const EMIT = '{ emit: { status: success, summary: done, artifacts: [], payload: { ok: true } } }';

function setup(scriptYaml: string, stage: StageDefinition = makeStage(), extra: Partial<RunSessionOptions> = {}, exchanges: Exchange[] = []) {
  const reminders: [number, string | undefined][] = [];
  const rejections: string[] = [];
  const host = makeHost(run, { stage, exchanges, onRejected: (r) => void rejections.push(r) });
  const backend = new ScriptBackend(parseScript(scriptYaml, 'test.script.yaml'));
  const opts: RunSessionOptions = {
    backend,
    host,
    stage,
    runId: 'run-1',
    attempt: 1,
    prompt: buildPrompt({ stage, input: {}, upstream: {}, answeredExchanges: [] }),
    recorder: { onReminder: (n, last) => void reminders.push([n, last]) },
    ...extra,
  };
  return { host, reminders, rejections, opts, go: (): Promise<SessionOutcome> => runSession(opts) };
}

const script = (...steps: string[]) => `stages:\n  build:\n    - - ${steps.join('\n      - ')}\n`;

describe('runSession with the script backend', () => {
  it('emits on the first turn', async () => {
    const { go, reminders } = setup(script("{ write_file: { path: src/a.txt, content: 'A' } }", "{ write_artifact: { path: report.md, content: 'R' } }", EMIT));
    expect(await go()).toEqual({ kind: 'emitted', envelope: { status: 'success', summary: 'done', artifacts: [], payload: { ok: true } } });
    expect(reminders).toEqual([]);
    expect(fs.readFileSync(path.join(run.checkout, 'src/a.txt'), 'utf8')).toBe('A');
    expect(fs.readFileSync(path.join(run.runDir, 'stages/build/attempts/1/artifacts/report.md'), 'utf8')).toBe('R');
  });

  it('soft reject then accepted in the same turn', async () => {
    const { go, rejections, reminders } = setup(script('{ emit: { status: success, summary: done, artifacts: [] } }', EMIT));
    expect((await go()).kind).toBe('emitted');
    expect(rejections).toEqual([expect.stringMatching(/payload is required on success/)]);
    expect(reminders).toEqual([]);
  });

  it('two end_turns then an emit: two reminders, emitted', async () => {
    const { go, reminders } = setup(script('end_turn', 'end_turn', EMIT));
    expect((await go()).kind).toBe('emitted');
    expect(reminders).toEqual([
      [1, undefined],
      [2, undefined],
    ]);
  });

  it('three end_turns: missing emit after two reminders, quoting the last rejection', async () => {
    const { go, reminders } = setup(script('{ emit: { status: success, summary: "", artifacts: [], payload: { ok: true } } }', 'end_turn', 'end_turn', 'end_turn', EMIT));
    const outcome = await go();
    expect(outcome).toMatchObject({ kind: 'failed', failureKind: 'missing_emit', reason: expect.stringMatching(/^missing emit_stage_envelope/) });
    expect(reminders.map(([n]) => n)).toEqual([1, 2]);
    expect(reminders[0]![1]).toMatch(/summary is required/);
  });

  it('provider_error fails with no reminder', async () => {
    const { go, reminders } = setup(script("{ provider_error: { message: '401 invalid x-api-key' } }", EMIT));
    expect(await go()).toEqual({ kind: 'failed', failureKind: 'provider_error', reason: 'provider error: 401 invalid x-api-key' });
    expect(reminders).toEqual([]);
  });

  it('provider error messages are capped at 500 characters', async () => {
    const { go } = setup(script(`{ provider_error: { message: '${'x'.repeat(900)}' } }`));
    const outcome = await go();
    expect(outcome.kind === 'failed' && outcome.reason.length).toBe(500);
  });

  it('a failure emit is accepted and ends the session with no reminder', async () => {
    const { go, reminders } = setup(script('{ emit: { status: failure, summary: cannot build, artifacts: [] } }', 'end_turn', EMIT));
    expect(await go()).toEqual({
      kind: 'failed',
      failureKind: 'agent_failure',
      reason: 'agent reported failure: cannot build',
      envelope: { status: 'failure', summary: 'cannot build', artifacts: [] },
    });
    expect(reminders).toEqual([]);
  });

  it('times out during a sleep step', async () => {
    const { go } = setup(script('{ sleep: { ms: 10000 } }', EMIT), makeStage(), { deadlineAt: new Date(Date.now() + 100).toISOString() });
    expect(await go()).toMatchObject({ kind: 'failed', failureKind: 'timeout' });
  });

  it('a cancel signal fails the session as cancelled', async () => {
    const controller = new AbortController();
    const { go } = setup(script('{ sleep: { ms: 10000 } }', EMIT), makeStage(), { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    expect(await go()).toEqual({ kind: 'failed', failureKind: 'cancelled', reason: 'cancelled' });
  });

  it('ask_operator parks; resume continues from the next step', async () => {
    const stage = makeStage({ gate_kinds: ['confirm'], verify: [{ id: 'ok', type: 'gate', kind: 'confirm', when: ['emit'] }] });
    const yaml = script("{ write_file: { path: one.txt, content: '1' } }", "{ ask_operator: { kind: confirm, question: 'Proceed?' } }", "{ write_file: { path: two.txt, content: '2' } }", EMIT);
    const first = setup(yaml, stage);
    const parked = await first.go();
    expect(parked).toEqual({
      kind: 'parked',
      exchangeId: 'build-a1-q1',
      question: { kind: 'confirm', question: 'Proceed?' },
      resume: { backend: 'script', turn: 1, remindersUsed: 0, memory: { step: 2 } },
    });
    expect(first.reminders).toEqual([]);
    expect(fs.existsSync(path.join(run.checkout, 'two.txt'))).toBe(false);
    if (parked.kind !== 'parked') throw new Error('not parked');

    // Resume on a "new replica": a fresh host and backend from the recorded state.
    const answered: Exchange = { exchangeId: parked.exchangeId, attempt: 1, question: parked.question, askedAt: 't', resume: { ...parked.resume }, answer: { decision: 'accept' } };
    const second = setup(yaml, stage, { resume: { state: parked.resume, exchange: answered } }, [answered]);
    expect((await second.go()).kind).toBe('emitted');
    expect(fs.readFileSync(path.join(run.checkout, 'two.txt'), 'utf8')).toBe('2');
  });

  it('a rejected gate answer makes the emit a soft reject', async () => {
    const stage = makeStage({ gate_kinds: ['confirm'], verify: [{ id: 'ok', type: 'gate', kind: 'confirm', when: ['emit'] }] });
    const rejectedAnswer: Exchange = { exchangeId: 'build-a1-q1', attempt: 1, question: { kind: 'confirm', question: 'q' }, askedAt: 't', resume: {}, answer: { decision: 'reject' } };
    const { go, rejections } = setup(script(EMIT), stage, { resume: { state: { backend: 'script', turn: 1, remindersUsed: 0, memory: { step: 0 } }, exchange: rejectedAnswer } }, [rejectedAnswer]);
    expect(await go()).toMatchObject({ kind: 'failed', failureKind: 'missing_emit' });
    expect(rejections[0]).toMatch(/emit-phase check ok failed: .*was reject/);
  });

  it('uses the last scripted attempt for later attempts', async () => {
    const yaml = `stages:\n  build:\n    - - end_turn\n    - - ${EMIT}\n`;
    const { opts } = setup(yaml);
    const outcome = await runSession({ ...opts, attempt: 3, host: makeHost(run, { attempt: 3 }) });
    expect(outcome.kind).toBe('emitted');
  });
});
