/** run_command and script `run` steps in the real sandbox (bubblewrap). */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildPrompt } from '../prompt';
import { ScriptBackend } from '../script/script';
import { parseScript } from '../script/script-file';
import { runSession } from '../session';
import { makeHost, makeStage, tempRun, type TempRun } from '../testing/fixtures';

let run: TempRun;
beforeEach(() => {
  run = tempRun();
});
afterEach(() => run.cleanup());

/** Live (non-zombie) host processes whose command line contains `marker`. */
function liveProcesses(marker: string): string[] {
  return execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(marker) && !line.includes('ps -eo') && !/^Z/.test(line.trim()));
}

const outputOf = async (host: ReturnType<typeof makeHost>, args: object) => JSON.parse((await host.call('run_command', args)).content);

describe('run_command', () => {
  it('runs in the checkout with SF_* and the scratch environment only', async () => {
    process.env.SF_TEST_SECRET_TOKEN = 'nope';
    const out = await outputOf(makeHost(run), { command: 'pwd; echo "$SF_STAGE_ID $SF_ATTEMPT $SF_CHECKOUT"; echo "[$SF_TEST_SECRET_TOKEN]"; echo "$HOME"' });
    delete process.env.SF_TEST_SECRET_TOKEN;
    expect(out.exit_code).toBe(0);
    expect(out.stdout).toBe(`${run.checkout}\nbuild 1 ${run.checkout}\n[]\n/tmp/home\n`);
  });

  it('writes the checkout and the artifact directory, nothing else of the run', async () => {
    fs.writeFileSync(path.join(run.runDir, 'other.txt'), 'x');
    const out = await outputOf(makeHost(run), { command: `echo a > made.txt && echo b > "$SF_ARTIFACTS_DIR/r.md" && ! ls ${run.runDir}/other.txt 2>/dev/null && ! (echo c > /etc/x) 2>/dev/null` });
    expect(out.exit_code).toBe(0);
    expect(fs.readFileSync(path.join(run.checkout, 'made.txt'), 'utf8')).toBe('a\n');
    expect(fs.readFileSync(path.join(run.runDir, 'stages/build/attempts/1/artifacts/r.md'), 'utf8')).toBe('b\n');
  });

  it('has a network only when the stage says network: true', async () => {
    const probe = { command: 'grep -q tap0 /proc/net/dev' };
    expect((await outputOf(makeHost(run), probe)).exit_code).not.toBe(0);
    expect((await outputOf(makeHost(run, { stage: makeStage({ network: true }) }), probe)).exit_code).toBe(0);
  });

  it('caps output at the last 64 KiB', async () => {
    const out = await outputOf(makeHost(run), { command: 'head -c 200000 /dev/zero | tr "\\0" a; echo END' });
    expect(out.stdout_truncated).toBe(true);
    expect(out.stdout.length).toBe(64 * 1024);
    expect(out.stdout.endsWith('END\n')).toBe(true);
  });

  it('returns when the command exits, though a background child holds stdout', async () => {
    const started = Date.now();
    const out = await outputOf(makeHost(run), { command: '(sleep 4101 &); echo back' });
    expect(out).toMatchObject({ exit_code: 0, timed_out: false, stdout: 'back\n' });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(liveProcesses('sleep 4101')).toEqual([]);
  });

  it('kills everything on timeout, setsid or not', async () => {
    const started = Date.now();
    const out = await outputOf(makeHost(run), { command: 'sleep 4201 & setsid sleep 4202 & wait', timeout_ms: 200 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(out.timed_out).toBe(true);
    expect([...liveProcesses('sleep 4201'), ...liveProcesses('sleep 4202')]).toEqual([]);
  });

  it('close() kills running commands', async () => {
    const host = makeHost(run);
    const pending = host.call('run_command', { command: 'sleep 4301' });
    setTimeout(() => host.close(), 300);
    const out = JSON.parse((await pending).content);
    expect(out.signal).toBe('SIGKILL');
    expect(liveProcesses('sleep 4301')).toEqual([]);
  });
});

describe('script run steps', () => {
  it('time out at the deadline, kill tool processes, and send no reminder', async () => {
    const stage = makeStage({ timeout_ms: 300 });
    const reminders: number[] = [];
    const host = makeHost(run, { stage });
    const script = `stages:\n  build:\n    - - { run: 'sleep 4401 & wait' }\n      - { emit: { status: success, summary: done, artifacts: [], payload: { ok: true } } }\n`;
    const started = Date.now();
    const outcome = await runSession({
      backend: new ScriptBackend(parseScript(script, 'test.script.yaml')),
      host,
      stage,
      runId: 'run-1',
      attempt: 1,
      prompt: buildPrompt({ stage, input: {}, upstream: {}, answeredExchanges: [] }),
      recorder: { onReminder: (n) => void reminders.push(n) },
      deadlineAt: Date.now() + 300,
    });
    expect(outcome).toMatchObject({ kind: 'failed', failureKind: 'timeout', reason: expect.stringMatching(/timeout_ms 300/) });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(reminders).toEqual([]);
    await new Promise((r) => setTimeout(r, 100));
    expect(liveProcesses('sleep 4401')).toEqual([]);
  });
});
