/**
 * The agent session end to end on the embedded default, with the script agent: every `sf`
 * command is its own OS process and the processes of one scenario share a STAGEFLOW_HOME.
 * Soft rejects, reminders (two pass, three fail), provider errors, the attempt timeout, and each
 * gate kind asked by `sf run` (exit 2) and answered by a second process (`sf runs answer`).
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RunSummary, StageSummary } from '@stageflow/domain';
import { assertBuilt, ROOT, SF } from './support/cluster';

jest.setTimeout(60_000);

const FIXTURES = path.join(ROOT, 'e2e/fixtures/agents');
const AGENT = `script:${path.join(FIXTURES, 'agent.script.yaml')}`;
const pipeline = (name: string) => path.join(FIXTURES, `${name}.pipeline.yaml`);

interface VerifyReport {
  readonly status: string;
  readonly attempts: readonly { n: number; disposition: string; failure: string | null; rejections: string[]; reminders: number }[];
}

/** One STAGEFLOW_HOME; every call is a separate `sf` process against it. */
function embedded() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-e2e-agents-'));
  const env: NodeJS.ProcessEnv = { ...process.env, STAGEFLOW_HOME: path.join(dir, 'home'), SF_AGENT: AGENT };
  delete env.NATS_URL;
  delete env.DATABASE_URL;
  const sf = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [SF, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`sf ${args.join(' ')} timed out; stderr:\n${stderr.slice(-3000)}`));
      }, 45_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code: code ?? 1, stdout, stderr });
      });
    });
  const json = async <T>(args: string[], expectedCode: number): Promise<T> => {
    const result = await sf(args);
    if (result.code !== expectedCode) throw new Error(`sf ${args.join(' ')} exited ${result.code}, expected ${expectedCode}; stderr:\n${result.stderr.slice(-3000)}`);
    return JSON.parse(result.stdout) as T;
  };
  return {
    dir,
    run: (name: string, code: number, extra: string[] = []) => json<RunSummary>(['run', '--pipeline', pipeline(name), '--json', ...extra], code),
    answer: (runId: string, stageId: string, code: number, answer: string[]) => json<RunSummary>(['runs', 'answer', '--run', runId, '--stage', stageId, '--json', ...answer], code),
    verify: (runId: string, stageId: string) => json<VerifyReport>(['runs', 'verify', '--run', runId, '--stage', stageId, '--json'], 0),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

const stage = (summary: RunSummary, id: string): StageSummary => {
  const found = summary.stages.find((s) => s.id === id);
  if (!found) throw new Error(`no stage ${id} in ${JSON.stringify(summary)}`);
  return found;
};
const statuses = (summary: RunSummary) => summary.stages.map((s) => [s.id, s.status]);

async function gone(pid: number, timeoutMs = 5000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('agent sessions e2e (embedded default, script agent)', () => {
  let env: ReturnType<typeof embedded>;
  beforeAll(() => assertBuilt());
  beforeEach(() => (env = embedded()));
  afterEach(() => env.cleanup());

  it('an invalid emit is a soft reject: the next valid emit is accepted and the rejection stays in the attempt history', async () => {
    const summary = await env.run('soft-reject', 0, ['--include', 'stages']);
    expect(summary.status).toBe('succeeded');
    const report = stage(summary, 'report');
    expect(report.attempts).toHaveLength(1);
    expect(report.attempts[0]).toMatchObject({ disposition: 'passed', failure: null });
    // The first accepted emit wins; the later failure emit is ignored.
    expect(report.envelope).toMatchObject({ status: 'success', summary: 'Wrote report.md.', payload: { report_file: 'report.md' } });

    const history = await env.verify(summary.run_id, 'report');
    expect(history.attempts[0]!.rejections).toHaveLength(1);
    expect(history.attempts[0]!.rejections[0]).toMatch(/summary is required/);
    expect(history.attempts[0]!.rejections[0]).toMatch(/payload does not match io\.output\.schema.*report_file/);
    expect(history.attempts[0]!.reminders).toBe(0);
  });

  it('two turns without an emit get two reminders and the emit after them passes', async () => {
    const summary = await env.run('patient', 0);
    expect(stage(summary, 'patient')).toMatchObject({ status: 'succeeded', attempts: [{ n: 1, disposition: 'passed', failure: null }] });
    expect((await env.verify(summary.run_id, 'patient')).attempts[0]).toMatchObject({ reminders: 2, rejections: [] });
  });

  it('a third turn without an emit fails the attempt with missing emit_stage_envelope', async () => {
    const summary = await env.run('silent', 1);
    expect(summary.status).toBe('failed');
    expect(stage(summary, 'silent')).toMatchObject({ status: 'failed', attempts: [{ n: 1, disposition: 'not_run', failure: 'missing emit_stage_envelope' }] });
    expect((await env.verify(summary.run_id, 'silent')).attempts[0]!.reminders).toBe(2);
  });

  it('a provider error fails the attempt at once with its message and no reminder', async () => {
    const summary = await env.run('flaky', 1);
    expect(stage(summary, 'flaky')).toMatchObject({
      status: 'failed',
      attempts: [{ n: 1, disposition: 'not_run', failure: 'provider error: upstream overloaded (529) after retries' }],
    });
    expect((await env.verify(summary.run_id, 'flaky')).attempts[0]).toMatchObject({ reminders: 0, rejections: [] });
  });

  it('an attempt past its timeout_ms fails as a timeout and the process it started is killed', async () => {
    const checkout = path.join(env.dir, 'checkout');
    fs.mkdirSync(checkout);
    await new Promise<void>((resolve, reject) =>
      spawn('git', ['init', '-q'], { cwd: checkout, stdio: 'ignore' }).on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`git init exited ${code}`)))),
    );
    const started = Date.now();
    const summary = await env.run('slow', 1, ['--checkout', checkout]);
    expect(Date.now() - started).toBeLessThan(20_000); // not the command's 30 s
    expect(stage(summary, 'slow')).toMatchObject({
      status: 'failed',
      attempts: [{ n: 1, disposition: 'not_run', failure: 'timeout: the attempt passed its deadline (timeout_ms 1500)' }],
    });
    const pid = Number(fs.readFileSync(path.join(checkout, 'sleeper.pid'), 'utf8').trim());
    expect(pid).toBeGreaterThan(0);
    expect(await gone(pid)).toBe(true);
  });

  it('each gate kind parks the run (exit 2) and an answer from a second process continues it to success', async () => {
    const asked = await env.run('gates', 2);
    expect(asked.status).toBe('waiting');
    expect(stage(asked, 'ask_text')).toMatchObject({ status: 'waiting', waiting_for: 'answer' });
    const runId = asked.run_id;

    const afterText = await env.answer(runId, 'ask_text', 2, ['--text', 'Ada']);
    expect(statuses(afterText)).toEqual([['ask_text', 'succeeded'], ['ask_confirm', 'waiting'], ['ask_multi', 'pending'], ['ask_artifact', 'pending']]);

    const afterConfirm = await env.answer(runId, 'ask_confirm', 2, ['--decision', 'accept', '--text', 'go']);
    expect(statuses(afterConfirm)).toEqual([['ask_text', 'succeeded'], ['ask_confirm', 'succeeded'], ['ask_multi', 'waiting'], ['ask_artifact', 'pending']]);

    const afterMulti = await env.answer(runId, 'ask_multi', 2, ['--answers', JSON.stringify({ version: '1.2.0', publish: { decision: 'accept' } })]);
    expect(statuses(afterMulti)).toEqual([['ask_text', 'succeeded'], ['ask_confirm', 'succeeded'], ['ask_multi', 'succeeded'], ['ask_artifact', 'waiting']]);

    const done = await env.answer(runId, 'ask_artifact', 0, ['--decision', 'accept', '--text', 'plan looks right']);
    expect(done.status).toBe('succeeded');
    for (const id of ['ask_text', 'ask_confirm', 'ask_multi', 'ask_artifact']) {
      expect(stage(done, id)).toMatchObject({ status: 'succeeded', attempts: [{ n: 1, disposition: 'passed' }] });
      expect((await env.verify(runId, id)).attempts[0]).toMatchObject({ rejections: [], reminders: 0 });
    }
  });

  it('a rejected confirm fails the emit-phase gate: the agent is told why, and the attempt fails once its reminders run out', async () => {
    const asked = await env.run('confirm', 2);
    expect(stage(asked, 'ask_confirm')).toMatchObject({ status: 'waiting', waiting_for: 'answer' });

    const rejected = await env.answer(asked.run_id, 'ask_confirm', 1, ['--decision', 'reject', '--text', 'not today']);
    expect(rejected.status).toBe('failed');
    const failed = stage(rejected, 'ask_confirm');
    expect(failed.status).toBe('failed');
    expect(failed.attempts).toHaveLength(1);
    expect(failed.attempts[0]!.failure).toMatch(/^missing emit_stage_envelope \(last rejection: emit-phase check confirmed failed: .*was reject, not accept/);
    const history = await env.verify(asked.run_id, 'ask_confirm');
    expect(history.attempts[0]!.rejections).toEqual([expect.stringMatching(/^emit-phase check confirmed failed: .*confirm question .* was reject, not accept/)]);
    expect(history.attempts[0]!.reminders).toBe(2);
  });
});
