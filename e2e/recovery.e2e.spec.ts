/**
 * Recovery end to end on the embedded default, driven through the CLI as separate `sf`
 * processes with the script agent: automatic repair (succeeds on attempt 2 with the failed checks
 * in its prompt; exhausted; never after an agent failure), manual recovery (guidance that then
 * passes; stop), and the refusals (retry of a manual stage before and after a stop, a second
 * decision). Each decision that unblocks the run continues it in the foreground.
 * Every scenario has its own STAGEFLOW_HOME, so their runs start side by side.
 */
import * as path from 'node:path';
import type { RunEvent, RunSummary } from '@stageflow/domain';
import { loadConfig, openInfrastructure } from '@stageflow/runtime';
import { assertBuilt } from './support/cluster';
import { embedded, type Embedded } from './support/embedded';
import { attempts, eventsOfType, RECOVERY_AGENT, recoveryPipeline, stageOf, statuses, type Behaviour } from './fixtures/recovery/scenarios';

jest.setTimeout(120_000);

const agent = ['--agent', RECOVERY_AGENT];

/** One scenario: its own embedded home and its first `sf run`, started at once. */
function scenario(policy: 'repair' | 'manual', behaviour: Behaviour, code: number) {
  const sf = embedded();
  const first = sf.json<RunSummary>(['run', '--pipeline', recoveryPipeline(sf.dir, policy, behaviour), '--json', ...agent], code);
  first.catch(() => undefined);
  return {
    sf,
    first,
    /** A decision that continues the run in the foreground, like `sf run`. */
    runs: (args: string[]) => sf.sf(['runs', ...args, ...agent]),
    /** A decision the state refuses: nothing is recorded, so nothing needs to continue. */
    refused: (args: string[]) => sf.sf(['runs', ...args, '--no-wait']),
    events: async (runId: string): Promise<RunEvent[]> => {
      const infra = await openInfrastructure(loadConfig({ STAGEFLOW_HOME: path.join(sf.dir, 'home') }));
      try {
        return [...(await infra.runs.load(runId)).events];
      } finally {
        await infra.close();
      }
    },
  };
}

describe('recovery e2e through the CLI (embedded default, script agent)', () => {
  let scenarios: Record<'repairFixes' | 'repairBroken' | 'flaky' | 'manualFixes' | 'manualBroken', ReturnType<typeof scenario>>;
  const all = (): Embedded[] => Object.values(scenarios ?? {}).map((s) => s.sf);

  beforeAll(() => {
    assertBuilt();
    scenarios = {
      repairFixes: scenario('repair', 'fixes', 0),
      repairBroken: scenario('repair', 'broken', 1),
      flaky: scenario('repair', 'flaky', 1),
      manualFixes: scenario('manual', 'fixes', 2),
      manualBroken: scenario('manual', 'broken', 2),
    };
  });
  afterAll(async () => {
    await Promise.all(all().map((sf) => sf.cleanup()));
  });

  it('repairs a failed verification: attempt 2 carries the failed checks in its capsule and passes', async () => {
    const { first, events } = scenarios.repairFixes;
    const summary = await first;
    expect(summary.status).toBe('succeeded');
    expect(attempts(summary, 'fixes')).toEqual([
      [1, 'initial', 'failed'],
      [2, 'repair', 'passed'],
    ]);
    expect(stageOf(summary, 'publish').status).toBe('succeeded');
    const started = eventsOfType(await events(summary.run_id), 'StageAttemptStarted').filter((e) => e.stageId === 'fixes');
    expect(started.map((e) => e.attempt)).toEqual([1, 2]);
    expect(started[0]!.capsule).toBeUndefined();
    expect(started[1]!.capsule).toMatchObject({ attempt: 1, failed_checks: [{ id: 'report-says-fixed', type: 'command', status: 'failed' }] });
  });

  it('fails the stage and the run when repair attempts run out (exit 1), and skips the successor', async () => {
    const summary = await scenarios.repairBroken.first;
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

  it('never repairs an agent failure: one attempt, then an ordinary retry is allowed and passes', async () => {
    const { first, runs } = scenarios.flaky;
    const failed = await first;
    expect(failed.status).toBe('failed');
    expect(attempts(failed, 'flaky')).toEqual([[1, 'initial', 'not_run']]);
    expect(stageOf(failed, 'flaky').failure).toMatch(/provider error: the model provider is down/);
    const retried = await runs(['retry', '--run', failed.run_id, '--stage', 'flaky', '--json']);
    expect(retried.code).toBe(0);
    const summary = JSON.parse(retried.stdout) as RunSummary;
    expect(attempts(summary, 'flaky')).toEqual([
      [1, 'initial', 'not_run'],
      [2, 'retry', 'passed'],
    ]);
    expect(statuses(summary)).toEqual([
      ['flaky', 'succeeded'],
      ['publish', 'succeeded'],
    ]);
  });

  describe('manual recovery with guidance', () => {
    let waiting: RunSummary;
    beforeAll(async () => {
      waiting = await scenarios.manualFixes.first;
    });

    it('a failed verification leaves the stage failed and the run waiting for a decision (exit 2); nothing cascades', () => {
      expect(waiting.status).toBe('waiting');
      expect(stageOf(waiting, 'fixes')).toMatchObject({ status: 'failed', waiting_for: 'recovery_decision' });
      expect(stageOf(waiting, 'publish').status).toBe('pending');
    });

    it('refuses the ordinary retry with the reason (exit 1)', async () => {
      const retry = await scenarios.manualFixes.refused(['retry', '--run', waiting.run_id, '--stage', 'fixes']);
      expect(retry.code).toBe(1);
      expect(retry.stderr).toMatch(/stage fixes uses manual recovery; use the recovery action instead of retry/);
    });

    it('recover --guidance starts a guided attempt that passes; the run continues to exit 0; who decided is recorded', async () => {
      const { runs, events } = scenarios.manualFixes;
      const recovered = await runs(['recover', '--run', waiting.run_id, '--stage', 'fixes', '--guidance', 'write "fixed" in report.md', '--json']);
      expect(recovered.code).toBe(0);
      const summary = JSON.parse(recovered.stdout) as RunSummary;
      expect(summary.status).toBe('succeeded');
      expect(attempts(summary, 'fixes')).toEqual([
        [1, 'initial', 'failed'],
        [2, 'manual_retry', 'passed'],
      ]);
      const log = await events(waiting.run_id);
      expect(eventsOfType(log, 'ManualRecoveryDecided')).toEqual([
        expect.objectContaining({ stageId: 'fixes', attempt: 1, decision: 'guidance', guidance: 'write "fixed" in report.md', by: expect.stringMatching(/^cli:/) }),
      ]);
      const guided = eventsOfType(log, 'StageAttemptStarted').find((e) => e.stageId === 'fixes' && e.attempt === 2);
      expect(guided).toMatchObject({ reason: 'manual_retry', guidance: 'write "fixed" in report.md', capsule: { attempt: 1, failed_checks: [{ id: 'report-says-fixed' }] } });
    });

    it('refuses a second decision for the same failure (exit 1)', async () => {
      const again = await scenarios.manualFixes.refused(['recover', '--run', waiting.run_id, '--stage', 'fixes', '--stop']);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/the recovery decision for stage fixes was already made/);
    });
  });

  it('recover --stop ends the stage: exit 1, successors skipped; retry and a second decision are refused afterwards', async () => {
    const { first, runs, refused, events } = scenarios.manualBroken;
    const waiting = await first;
    const stop = ['recover', '--run', waiting.run_id, '--stage', 'broken', '--stop', '--json', '--idempotency-key', 'stop-broken-1'];
    const stopped = await runs(stop);
    expect(stopped.code).toBe(1);
    expect(statuses(JSON.parse(stopped.stdout) as RunSummary)).toEqual([
      ['broken', 'failed'],
      ['publish', 'skipped'],
    ]);
    const repeated = await runs(stop);
    expect(repeated.code).toBe(1);
    expect(JSON.parse(repeated.stdout)).toEqual(JSON.parse(stopped.stdout));
    expect(eventsOfType(await events(waiting.run_id), 'ManualRecoveryDecided')).toEqual([expect.objectContaining({ decision: 'stop', by: expect.stringMatching(/^cli:/) })]);
    const [retry, guidance] = await Promise.all([
      refused(['retry', '--run', waiting.run_id, '--stage', 'broken']),
      refused(['recover', '--run', waiting.run_id, '--stage', 'broken', '--guidance', 'try again']),
    ]);
    expect(retry.code).toBe(1);
    expect(retry.stderr).toMatch(/stage broken uses manual recovery; use the recovery action instead of retry/);
    expect(guidance.code).toBe(1);
    expect(guidance.stderr).toMatch(/the recovery decision for stage broken was already made/);
  });
});
