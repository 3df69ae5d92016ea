import type { StageAttemptStarted } from './events';
import { decideOperator } from './operator';
import { runStatus } from './run-state';
import { decideAdvance } from './scheduler';
import { summarizeRun } from './summary';
import { advance, given, NOW, pipeline, simulate, stage, success } from './testing';
import { cloneInstancesOf, forkChoiceProblem, replayRoute } from './wiring';

const chain = (mode: 'parallel' | 'sequential', cap = 3) =>
  pipeline(
    stage('emit-items', {
      entry: true,
      route: [{ to: 'handle-item' }],
      clone: { role: 'emitter', child: 'handle-item', join: 'gather', cap, mode, array_field: 'items' },
    }),
    stage('handle-item', { route: [{ to: 'gather' }], clone: { role: 'child', emitter: 'emit-items', join: 'gather' } }),
    stage('gather', { route: [{ to: 'report' }], clone: { role: 'join', emitter: 'emit-items', child: 'handle-item' } }),
    stage('report'),
  );

const items = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];

function emitted(mode: 'parallel' | 'sequential', list: unknown[] = items) {
  const sim = simulate(chain(mode));
  sim.advance();
  const decided = sim.succeed('emit-items', { items: list });
  return { sim, decided };
}

describe('clone chains', () => {
  it('parallel: mints {child}~{n} from the array and starts every instance with its element only', () => {
    const { sim, decided } = emitted('parallel');
    expect(sim.types(decided).slice(3)).toEqual([
      'CloneInstancesMinted:handle-item',
      'StageAttemptStarted:handle-item~1',
      'StageAttemptStarted:handle-item~2',
      'StageAttemptStarted:handle-item~3',
    ]);
    expect(decided[3]).toMatchObject({ emitter: 'emit-items', mode: 'parallel', instances: [{ id: 'handle-item~1', n: 1, item: { id: 'a' } }, { n: 2 }, { n: 3 }] });
    expect(decided[5]).toMatchObject({ input: { id: 'b' }, upstream: { 'emit-items': { payload: { items } } } });
    expect(sim.status('handle-item')).toBe('running');
  });

  it('the join runs when all instances succeeded, upstream keyed by instance id in array order', () => {
    const { sim } = emitted('parallel');
    sim.succeed('handle-item~3', { c: 3 });
    sim.succeed('handle-item~1', { a: 1 });
    const decided = sim.succeed('handle-item~2', { b: 2 });
    const join = decided.at(-1) as StageAttemptStarted;
    expect(join).toMatchObject({ type: 'StageAttemptStarted', stageId: 'gather' });
    expect(Object.keys(join.upstream)).toEqual(['handle-item~1', 'handle-item~2', 'handle-item~3']);
    expect(sim.status('handle-item')).toBe('succeeded');
    sim.succeed('gather');
    expect(sim.types(sim.succeed('report')).at(-1)).toBe('RunSucceeded');
    const summary = summarizeRun(sim.state);
    expect(summary.stages.map((s) => s.id)).toEqual(['emit-items', 'handle-item', 'handle-item~1', 'handle-item~2', 'handle-item~3', 'gather', 'report']);
    expect(summary.stages[1]).toMatchObject({ instances: ['handle-item~1', 'handle-item~2', 'handle-item~3'] });
    expect(summary.stages[2]).toMatchObject({ clone_of: 'handle-item', status: 'succeeded' });
  });

  it('parallel: a failed instance does not stop running siblings, blocks the join, and the run fails', () => {
    const { sim } = emitted('parallel');
    sim.failAgent('handle-item~2');
    expect(sim.status('handle-item~3')).toBe('running');
    sim.succeed('handle-item~1');
    const decided = sim.succeed('handle-item~3');
    expect(sim.types(decided).at(-1)).toBe('RunFailed');
    expect(sim.status('gather')).toBe('pending');
    expect(sim.status('handle-item')).toBe('failed');
  });

  it('sequential: instances run one after another in array order', () => {
    const { sim, decided } = emitted('sequential');
    expect(sim.types(decided).slice(3)).toEqual(['CloneInstancesMinted:handle-item', 'StageAttemptStarted:handle-item~1']);
    expect(sim.types(sim.succeed('handle-item~1')).at(-1)).toBe('StageAttemptStarted:handle-item~2');
  });

  it('sequential: a failure skips the instances not started; a successful retry starts the next one again', () => {
    const { sim } = emitted('sequential');
    const failed = sim.failAgent('handle-item~1');
    expect(sim.types(failed).slice(2)).toEqual(['StageSkipped:handle-item~2', 'StageSkipped:handle-item~3', 'RunFailed']);
    expect(failed[2]).toMatchObject({ reason: 'parent_failed', detail: 'handle-item~1' });
    expect(failed[3]).toMatchObject({ reason: 'parent_skipped', detail: 'handle-item~2' });
    const retried = sim.operator({ type: 'RetryStage', stageId: 'handle-item~1', by: 'op', now: NOW });
    expect(sim.types(retried)).toEqual(['StageRetryRequested:handle-item~1', 'StageAttemptStarted:handle-item~1']);
    expect(runStatus(sim.state)).toBe('running');
    expect(sim.types(sim.succeed('handle-item~1')).at(-1)).toBe('StageAttemptStarted:handle-item~2');
  });

  it('retry of the template itself is refused: the instance is retried', () => {
    const { sim } = emitted('parallel');
    sim.failAgent('handle-item~1');
    sim.succeed('handle-item~2');
    sim.succeed('handle-item~3');
    given(sim.events).when(decideOperator, { type: 'RetryStage', stageId: 'handle-item', by: 'op', now: NOW }).thenRefused('retry.clone_template');
  });

  it.each([
    ['empty', []],
    ['over the cap', [{}, {}, {}, {}]],
    ['not an array', 'nope'],
    ['holding a non-object', [1]],
  ])('an emitter array %s fails the emitter; the chain is skip-cascaded', (_name, list) => {
    const { sim, decided } = emitted('parallel', list as unknown[]);
    expect(sim.types(decided).slice(2)).toEqual([
      'StageSucceeded:emit-items',
      'StageFailed:emit-items',
      'StageSkipped:handle-item',
      'StageSkipped:gather',
      'StageSkipped:report',
      'RunFailed',
    ]);
    expect(decided[3]).toMatchObject({ kind: 'clone_array_invalid' });
    expect(summarizeRun(sim.state).stages.filter((s) => s.status === 'skipped').every((s) => s.skip_reason)).toBe(true);
  });

  it('minting is idempotent: advancing again mints nothing more', () => {
    const { sim } = emitted('parallel');
    given(sim.events).when(decideAdvance, advance()).thenNothing();
  });

  it('an instance can use manual recovery: the decision holds the run, guidance restarts that instance', () => {
    const p = chain('parallel');
    const manual = pipeline(
      p.stages[0],
      { ...p.stages[1], on_verify_fail: { mode: 'manual', max_attempts: 2, retry_safety: 'idempotent', include_failed_checks: true } },
      ...p.stages.slice(2),
    );
    const sim = simulate(manual);
    sim.advance();
    sim.succeed('emit-items', { items: [{ id: 'a' }] });
    sim.finish('handle-item~1', success(), [{ id: 't', type: 'command', phase: 'after', status: 'failed', evidence: {}, started_at: 'x', finished_at: 'x' }]);
    expect(runStatus(sim.state)).toBe('waiting');
    expect(sim.status('handle-item')).toBe('running');
    const decided = sim.operator({ type: 'RecoverWithGuidance', stageId: 'handle-item~1', guidance: 'try harder', by: 'op', now: NOW });
    expect(sim.types(decided)).toEqual(['ManualRecoveryDecided:handle-item~1', 'StageAttemptStarted:handle-item~1']);
  });
});

describe('wiring helpers', () => {
  it('replayRoute: forward paths from target to source, in YAML order', () => {
    const p = pipeline(
      stage('a', { entry: true, route: [{ to: 'b' }, { to: 'side' }] }),
      stage('b', { route: [{ to: 'c' }] }),
      stage('side'),
      stage('c'),
    );
    expect(replayRoute(p.stages, 'a', 'c')).toEqual(['a', 'b', 'c']);
    expect(replayRoute(p.stages, 'c', 'a')).toEqual([]);
  });

  it('forkChoiceProblem follows select / allow_none', () => {
    const one = stage('f', { fork: { select: 'one', allow_none: true }, route: [{ to: 'x' }, { to: 'y' }] });
    const subset = stage('f', { fork: { select: 'subset', allow_none: true }, route: [{ to: 'x' }, { to: 'y' }] });
    const strict = stage('f', { fork: { select: 'subset' }, route: [{ to: 'x' }] });
    expect(forkChoiceProblem(one, success({}, { fork_choice: ['x'] }))).toBeNull();
    expect(forkChoiceProblem(one, success({}, { fork_choice: [] }))).toMatch(/exactly one/);
    expect(forkChoiceProblem(one, success({}, { fork_choice: ['z'] }))).toMatch(/not an immediate successor/);
    expect(forkChoiceProblem(one, success())).toMatch(/needs fork_choice/);
    expect(forkChoiceProblem(subset, success({}, { fork_choice: [] }))).toBeNull();
    expect(forkChoiceProblem(strict, success({}, { fork_choice: [] }))).toMatch(/allow_none/);
    expect(forkChoiceProblem(stage('plain'), success())).toBeNull();
  });

  it('cloneInstancesOf mints 1-based ids, including ~1 for a single item', () => {
    const emitter = chain('parallel').stages[0];
    expect(cloneInstancesOf(emitter, { items: [{ k: 1 }] })).toEqual({ ok: true, instances: [{ id: 'handle-item~1', n: 1, item: { k: 1 } }] });
  });
});

describe('events for a chain fold idempotently', () => {
  it('instances appear in state when minted', () => {
    const { sim } = emitted('parallel');
    expect(Object.keys(sim.state.stages)).toEqual(expect.arrayContaining(['handle-item~1', 'handle-item~2', 'handle-item~3']));
    expect(sim.state.stages['handle-item~2']).toMatchObject({ cloneOf: 'handle-item', cloneIndex: 2, cloneItem: { id: 'b' } });
  });
});
