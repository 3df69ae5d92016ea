/**
 * The scheduler end to end: DAG semantics with every service as its own OS process against real
 * NATS and Postgres, driven by the script agent (e2e/fixtures/scheduler/agent.script.yaml). One
 * deployment serves every scenario; each scenario is its own run, and the runs are started together
 * in beforeAll (they are independent) so the file costs the longest scenario, not their sum.
 */
import * as path from 'node:path';
import type { RunEvent } from '@stageflow/domain';
import { assertBuilt, deployment, ROOT, type Deployment } from './support/cluster';
import { natsRunEvents } from './support/events';

jest.setTimeout(90_000);

const FIXTURES = path.join(ROOT, 'e2e/fixtures/scheduler');
const AGENT = `script:${path.join(FIXTURES, 'agent.script.yaml')}`;
const SERVICES: readonly [string, string[]][] = [['scheduler', []], ['recovery', []], ['verifier', []], ['agent-runner', ['--agent', AGENT]]];

interface StageSummary {
  readonly id: string;
  readonly status: string;
  readonly skip_reason: string | null;
  readonly attempts: readonly unknown[];
}
interface RunSummary {
  readonly run_id: string;
  readonly status: string;
  readonly stages: readonly StageSummary[];
}

/** `[id, status, skip_reason, attempts]` per stage, in summary order. */
function summaryOf(what: string, result: { code: number; stdout: string; stderr: string }): { code: number; summary: RunSummary } {
  if (!result.stdout.trim()) throw new Error(`${what} printed no summary (exit ${result.code}):\n${result.stderr.slice(-3000)}`);
  return { code: result.code, summary: JSON.parse(result.stdout) as RunSummary };
}

const board = (summary: RunSummary) => summary.stages.map((s) => [s.id, s.status, s.skip_reason ?? null, s.attempts.length]);

function started(events: readonly RunEvent[], stageId: string) {
  return events.flatMap((e) => (e.type === 'StageAttemptStarted' && e.stageId === stageId ? [e] : []));
}

describe('scheduler e2e', () => {
  let d: Deployment;

  type Finished = { readonly code: number; readonly summary: RunSummary };
  const scenarios: { [name: string]: Promise<Finished> } = {};
  const parkedLoops: { [decision: string]: Promise<{ parked: Finished; decided: Finished }> } = {};

  /** Runs a fixture pipeline through the cluster and returns the exit code and the summary. */
  async function run(pipeline: string): Promise<Finished> {
    return summaryOf(`sf run ${pipeline}`, await d.sf(['run', '--pipeline', path.join(FIXTURES, `${pipeline}.pipeline.yaml`), '--json'], { timeoutMs: 80_000 }));
  }

  /** Runs loop-wait until it parks (w_review sent back twice, one replay allowed), then decides. */
  async function parkThenDecide(decision: string): Promise<{ parked: Finished; decided: Finished }> {
    const parked = await run('loop-wait');
    const args = ['runs', 'feedback-decide', '--run', parked.summary.run_id, '--stage', 'w_review', '--decision', decision, '--json'];
    return { parked, decided: summaryOf(`sf runs feedback-decide ${decision}`, await d.sf(args, { timeoutMs: 80_000 })) };
  }

  /** Started now, awaited by its test; a rejection is reported there, never as unhandled. */
  function eager<T>(work: Promise<T>): Promise<T> {
    work.catch(() => undefined);
    return work;
  }

  beforeAll(async () => {
    assertBuilt();
    d = deployment();
    // One at a time: on a busy machine four cold starts at once can each outlast the start timeout.
    for (const [name, args] of SERVICES) await d.start(name, args);
    for (const name of ['diamond', 'if-skip', 'failed-join', 'loop', 'clone']) scenarios[name] = eager(run(name));
    for (const decision of ['extend', 'continue', 'abandon']) parkedLoops[decision] = eager(parkThenDecide(decision));
  });
  afterAll(async () => d?.stop());

  it('a diamond join runs once both branches succeeded, with upstream keyed in YAML declaration order', async () => {
    const { code, summary } = await scenarios['diamond'];
    expect(code).toBe(0);
    expect(board(summary)).toEqual([
      ['d_root', 'succeeded', null, 1],
      ['d_right', 'succeeded', null, 1],
      ['d_left', 'succeeded', null, 1],
      ['d_join', 'succeeded', null, 1],
    ]);
    const events = await natsRunEvents(d, summary.run_id);
    const [join] = started(events, 'd_join');
    // d_root routes left first and d_right is slower, yet the declaration order decides.
    expect(Object.keys(join.upstream)).toEqual(['d_right', 'd_left']);
    expect(join.upstream.d_left).toMatchObject({ summary: 'Left half done.', payload: { left: 1 } });
    expect(join.input).toEqual({ right: 2, left: 1 });
  });

  it('an `if` that misses skips its successor with if_miss, and the skip cascades', async () => {
    const { code, summary } = await scenarios['if-skip'];
    expect(code).toBe(0);
    expect(summary.status).toBe('succeeded');
    expect(board(summary)).toEqual([
      ['i_root', 'succeeded', null, 1],
      ['i_yes', 'skipped', 'if_miss', 0],
      ['i_after_yes', 'skipped', 'parent_skipped', 0],
      ['i_always', 'succeeded', null, 1],
    ]);
  });

  it('a failed branch keeps the join pending and fails the run', async () => {
    const { code, summary } = await scenarios['failed-join'];
    expect(code).toBe(1);
    expect(summary.status).toBe('failed');
    expect(board(summary)).toEqual([
      ['f_root', 'succeeded', null, 1],
      ['f_ok', 'succeeded', null, 1],
      ['f_bad', 'failed', null, 1],
      ['f_join', 'pending', null, 0],
    ]);
    const events = await natsRunEvents(d, summary.run_id);
    expect(started(events, 'f_join')).toHaveLength(0);
    expect(events.filter((e) => e.type === 'RunFailed')).toEqual([expect.objectContaining({ reason: 'stage f_bad failed' })]);
  });

  it('a feedback loop sends back once, replays with the loop context, then continues', async () => {
    const { code, summary } = await scenarios.loop;
    expect(code).toBe(0);
    expect(board(summary)).toEqual([
      ['l_plan', 'succeeded', null, 1],
      ['l_build', 'succeeded', null, 2],
      ['l_review', 'succeeded', null, 2],
      ['l_ship', 'succeeded', null, 1],
    ]);
    const events = await natsRunEvents(d, summary.run_id);
    const replays = events.filter((e) => e.type === 'FeedbackLoopReplayed');
    expect(replays).toEqual([
      expect.objectContaining({ stageId: 'l_review', attempt: 1, target: 'l_build', replay: 1, route: ['l_build', 'l_review'], remainingReplays: 1 }),
    ]);
    const rebuild = started(events, 'l_build')[1];
    expect(rebuild).toMatchObject({
      attempt: 2,
      reason: 'loop_replay',
      loopContext: {
        source: 'l_review',
        target: 'l_build',
        replay: 1,
        remaining_replays: 1,
        route: ['l_build', 'l_review'],
        prior_attempt: 1,
        send_back: { summary: 'v1 lacks tests.', payload: { verdict: 'rework' } },
      },
    });
    // Downstream of the loop runs only after the source continued.
    const reviewDone = events.map((e, i) => (e.type === 'StageSucceeded' && e.stageId === 'l_review' ? i : -1)).filter((i) => i >= 0);
    expect(reviewDone).toHaveLength(2);
    expect(events.indexOf(started(events, 'l_ship')[0])).toBeGreaterThan(reviewDone[1]);
  });

  describe('a loop past max_replays under wait_for_human', () => {
    /** The run parked: exit 2, w_review waiting after one replay, w_ship not started. */
    async function expectParked(parked: Finished): Promise<void> {
      expect(parked.code).toBe(2);
      expect(parked.summary.status).toBe('waiting');
      expect(board(parked.summary)).toEqual([
        ['w_build', 'succeeded', null, 2],
        ['w_review', 'waiting', null, 2],
        ['w_ship', 'pending', null, 0],
      ]);
      const events = await natsRunEvents(d, parked.summary.run_id);
      expect(events.filter((e) => e.type === 'FeedbackLoopParked')).toEqual([expect.objectContaining({ stageId: 'w_review', attempt: 2, replays: 1, maxReplays: 1 })]);
    }

    it('extend: one more replay, then the reviewer continues and the run succeeds', async () => {
      const { parked, decided } = await parkedLoops.extend;
      await expectParked(parked);
      expect(decided.code).toBe(0);
      expect(board(decided.summary)).toEqual([
        ['w_build', 'succeeded', null, 3],
        ['w_review', 'succeeded', null, 3],
        ['w_ship', 'succeeded', null, 1],
      ]);
      const events = await natsRunEvents(d, parked.summary.run_id);
      expect(events.filter((e) => e.type === 'FeedbackLoopDecided')).toEqual([expect.objectContaining({ decision: 'extend', attempt: 2 })]);
      expect(events.flatMap((e) => (e.type === 'FeedbackLoopReplayed' ? [e.replay] : []))).toEqual([1, 2]);
    });

    it('continue: the loop goes on downstream without another replay', async () => {
      const { parked, decided } = await parkedLoops.continue;
      await expectParked(parked);
      expect(decided.code).toBe(0);
      expect(board(decided.summary)).toEqual([
        ['w_build', 'succeeded', null, 2],
        ['w_review', 'succeeded', null, 2],
        ['w_ship', 'succeeded', null, 1],
      ]);
    });

    it('abandon: the source fails, its successor is skipped, the run fails', async () => {
      const { parked, decided } = await parkedLoops.abandon;
      await expectParked(parked);
      expect(decided.code).toBe(1);
      expect(decided.summary.status).toBe('failed');
      expect(board(decided.summary)).toEqual([
        ['w_build', 'succeeded', null, 2],
        ['w_review', 'failed', null, 2],
        ['w_ship', 'skipped', 'parent_failed', 0],
      ]);
    });

    it('a decision on a loop that is not parked is refused', async () => {
      const { summary } = await scenarios.loop;
      const refused = await d.sf(['runs', 'feedback-decide', '--run', summary.run_id, '--stage', 'l_review', '--decision', 'extend']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/already succeeded/);
    });
  });

  it('a clone chain runs one instance per array item, then the join with every instance', async () => {
    const { code, summary } = await scenarios['clone'];
    expect(code).toBe(0);
    expect(board(summary)).toEqual([
      ['c_split', 'succeeded', null, 1],
      ['c_work', 'succeeded', null, 0],
      ['c_work~1', 'succeeded', null, 1],
      ['c_work~2', 'succeeded', null, 1],
      ['c_merge', 'succeeded', null, 1],
    ]);
    const events = await natsRunEvents(d, summary.run_id);
    expect(events.filter((e) => e.type === 'CloneInstancesMinted')).toEqual([
      expect.objectContaining({
        stageId: 'c_work',
        emitter: 'c_split',
        instances: [
          { id: 'c_work~1', n: 1, item: { name: 'alpha' } },
          { id: 'c_work~2', n: 2, item: { name: 'beta' } },
        ],
      }),
    ]);
    expect(started(events, 'c_work~2')[0].input).toEqual({ name: 'beta' });
    const [merge] = started(events, 'c_merge');
    expect(Object.keys(merge.upstream)).toEqual(['c_work~1', 'c_work~2']);
    expect(merge.input).toEqual({ alpha: 'done', beta: 'done' });
  });
});
