/**
 * The agent session end to end on the embedded default with the script agent, every `sf` command
 * its own OS process: soft rejects, reminders (two pass, three fail), provider errors, and the
 * attempt timeout. Rejections and reminders are read back from the attempt history
 * (`sf runs verify --json`) by another process.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RunSummary } from '@stageflow/domain';
import type { TranscriptReport, VerificationReport } from '@stageflow/runtime';
import { assertBuilt, ROOT } from './support/cluster';
import { embedded, type Embedded } from './support/embedded';
import { stageOf } from './support/summaries';

jest.setTimeout(60_000);

const FIXTURES = path.join(ROOT, 'e2e/fixtures/agents');
const AGENT = `script:${path.join(FIXTURES, 'agent.script.yaml')}`;


/** True once `pid` no longer exists. */
/** True once no host process carries `marker` in its command line (zombies aside), within `timeoutMs`. */
async function processGone(marker: string, timeoutMs = 5000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const lines = execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' }).split('\n');
    if (!lines.some((line) => line.includes(marker) && !/^\s*Z/.test(line))) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('agent sessions e2e (embedded default, script agent)', () => {
  let sf: Embedded;
  const run = (name: string, code: number, extra: string[] = []) => sf.json<RunSummary>(['run', '--pipeline', path.join(FIXTURES, `${name}.pipeline.yaml`), '--json', ...extra], code);
  const history = async (runId: string, stageId: string) => (await sf.json<VerificationReport>(['runs', 'verify', '--run', runId, '--stage', stageId, '--json'], 0)).attempts;

  beforeAll(() => assertBuilt());
  beforeEach(() => (sf = embedded({ SF_AGENT: AGENT })));
  afterEach(() => sf.cleanup());

  it('an invalid emit is a soft reject: the next valid emit is accepted and the rejection stays in the attempt history', async () => {
    const summary = await run('soft-reject', 0, ['--include', 'stages']);
    expect(summary.status).toBe('succeeded');
    const report = stageOf(summary, 'report');
    expect(report.attempts).toEqual([expect.objectContaining({ n: 1, disposition: 'passed', failure: null })]);
    // The first accepted emit wins; the failure emit the script sends after it is ignored.
    expect(report.envelope).toMatchObject({ status: 'success', summary: 'Wrote report.md.', payload: { report_file: 'report.md' } });

    const [attempt] = await history(summary.run_id, 'report');
    expect(attempt!.rejections).toHaveLength(1);
    expect(attempt!.rejections[0]).toMatch(/summary is required/);
    expect(attempt!.rejections[0]).toMatch(/payload does not match io\.output\.schema.*report_file/);
    expect(attempt!.reminders).toBe(0);

    // The turn's transcript holds the emit tool calls, rejected and accepted, with their arguments.
    expect(attempt!.transcripts).toEqual([{ turn: 1, digest: expect.stringMatching(/^sha256:/) }]);
    const transcript = await sf.json<TranscriptReport>(['runs', 'transcript', '--run', summary.run_id, '--stage', 'report', '--attempt', '1', '--json'], 0);
    const calls = (transcript.turns[0]!.transcript as { toolCalls: { name: string; args: { summary?: string }; result: { isError: boolean } }[] }).toolCalls;
    expect(calls.filter((c) => c.name === 'emit_stage_envelope')).toEqual(
      expect.arrayContaining([expect.objectContaining({ args: expect.objectContaining({ summary: 'Wrote report.md.' }), result: expect.objectContaining({ isError: false }) })]),
    );
  });

  it('two turns without an emit get two reminders, and the emit after them passes', async () => {
    const summary = await run('patient', 0);
    expect(stageOf(summary, 'patient')).toMatchObject({ status: 'succeeded', attempts: [{ n: 1, disposition: 'passed', failure: null }] });
    expect((await history(summary.run_id, 'patient'))[0]).toMatchObject({ reminders: 2, rejections: [] });
  });

  it('a third turn without an emit fails the attempt with missing emit_stage_envelope', async () => {
    const summary = await run('silent', 1);
    expect(summary.status).toBe('failed');
    expect(stageOf(summary, 'silent')).toMatchObject({ status: 'failed', attempts: [{ n: 1, disposition: 'not_run', failure: 'missing emit_stage_envelope' }] });
    expect((await history(summary.run_id, 'silent'))[0]!.reminders).toBe(2);
  });

  it('a provider error fails the attempt at once with its message and no reminder', async () => {
    const summary = await run('flaky', 1);
    expect(stageOf(summary, 'flaky')).toMatchObject({
      status: 'failed',
      attempts: [{ n: 1, disposition: 'not_run', failure: 'provider error: upstream overloaded (529) after retries' }],
    });
    expect((await history(summary.run_id, 'flaky'))[0]).toMatchObject({ reminders: 0, rejections: [] });
  });

  it('an attempt past its timeout_ms fails as a timeout and the process it started is killed', async () => {
    const checkout = path.join(sf.dir, 'checkout');
    fs.mkdirSync(checkout);
    await new Promise<void>((resolve, reject) =>
      spawn('git', ['init', '-q'], { cwd: checkout, stdio: 'ignore' }).on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`git init exited ${code}`)))),
    );
    const started = Date.now();
    const summary = await run('slow', 1, ['--checkout', checkout]);
    expect(Date.now() - started).toBeLessThan(25_000); // the command itself sleeps 30 s
    expect(stageOf(summary, 'slow')).toMatchObject({
      status: 'failed',
      attempts: [{ n: 1, disposition: 'not_run', failure: 'timeout: the attempt passed its deadline (timeout_ms 1500)' }],
    });
    // The sleeper ran in the sandbox (its own pid namespace): it is found by the name it ran under.
    const marker = fs.readFileSync(path.join(checkout, 'sleeper.marker'), 'utf8').trim();
    expect(marker).toBe(`sf-e2e-sleeper-${summary.run_id}`);
    expect(await processGone(marker)).toBe(true);
  });
});
