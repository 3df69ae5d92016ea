import { decideAdvance } from './scheduler';
import { advance, ev, given, pipeline, stage, success } from './testing';
import { runStatus } from './run-state';
import { summarizeRun } from './summary';

const linear = pipeline(stage('a', { entry: true, route: [{ to: 'b' }] }), stage('b', { route: [{ to: 'c' }] }), stage('c'));

describe('scheduler: starting stages', () => {
  it('starts the entry stage with the run input, deadline from its timeout', () => {
    const p = pipeline(stage('a', { entry: true, timeout_ms: 60_000 }));
    given(ev.requested(p, { topic: 'x' }))
      .when(decideAdvance, advance())
      .then({
        type: 'StageAttemptStarted',
        stageId: 'a',
        attempt: 1,
        reason: 'initial',
        input: { topic: 'x' },
        upstream: {},
        deadlineAt: '2025-01-01T00:11:00.000Z',
      });
  });

  it('is a no-op on its own result (a redelivered advance starts nothing twice)', () => {
    given(ev.requested(linear)).when(decideAdvance, advance()).thenIdempotent();
  });

  it('does nothing for a run that does not exist or has ended', () => {
    given().when(decideAdvance, advance()).thenNothing();
    given(ev.requested(linear), { v: 1, runId: 'run-1', at: 'x', type: 'RunFailed', reason: 'x' }).when(decideAdvance, advance()).thenNothing();
  });

  it('runs sequentially: the successor starts with the parent payload as input and its envelope upstream', () => {
    const env = success({ plan: 'p1' });
    given(ev.requested(linear), ev.passed('a', env))
      .when(decideAdvance, advance())
      .then({ type: 'StageAttemptStarted', stageId: 'b', input: { plan: 'p1' }, upstream: { a: env } });
  });

  it('does not start a successor while its parent is running', () => {
    given(ev.requested(linear), ev.started('a')).when(decideAdvance, advance()).thenNothing();
  });

  it('fails the stage (not the agent) when the input does not match io.input.schema', () => {
    given(ev.requested(linear), ev.passed('a'))
      .when(decideAdvance, advance((s) => (s.id === 'b' ? 'missing required field plan' : null)))
      .then(
        { type: 'StageFailed', stageId: 'b', attempt: 0, kind: 'input', reason: 'input does not match io.input.schema: missing required field plan' },
        { type: 'StageSkipped', stageId: 'c', reason: 'parent_failed', detail: 'b' },
        { type: 'RunFailed', reason: 'stage b failed' },
      );
  });

  it('ends the run succeeded when every stage succeeded or was skipped', () => {
    given(ev.requested(linear), ev.passed('a'), ev.passed('b'), ev.passed('c')).when(decideAdvance, advance()).then({ type: 'RunSucceeded' });
  });
});

describe('scheduler: route if', () => {
  const gated = pipeline(
    stage('triage', { entry: true, route: [{ to: 'page', if: { field: 'severity', op: 'eq', value: 'high' } }, { to: 'notify' }] }),
    stage('page', { route: [{ to: 'escalate' }] }),
    stage('escalate'),
    stage('notify'),
  );

  it('hit: the gated successor starts beside its ungated sibling', () => {
    given(ev.requested(gated), ev.passed('triage', success({ severity: 'high' })))
      .when(decideAdvance, advance())
      .then({ type: 'StageAttemptStarted', stageId: 'page' }, { type: 'StageAttemptStarted', stageId: 'notify' });
  });

  it('miss: the successor is skipped (if_miss) and its single-parent successors cascade (parent_skipped)', () => {
    given(ev.requested(gated), ev.passed('triage', success({ severity: 'low' })))
      .when(decideAdvance, advance())
      .then(
        { type: 'StageSkipped', stageId: 'page', reason: 'if_miss', detail: 'triage -> page' },
        { type: 'StageSkipped', stageId: 'escalate', reason: 'parent_skipped', detail: 'page' },
        { type: 'StageAttemptStarted', stageId: 'notify' },
      );
  });

  it('is type-strict: 1 is not "1"', () => {
    const p = pipeline(stage('a', { entry: true, route: [{ to: 'b', if: { field: 'n', op: 'eq', value: 1 } }] }), stage('b'));
    given(ev.requested(p), ev.passed('a', success({ n: '1' })))
      .when(decideAdvance, advance())
      .then({ type: 'StageSkipped', stageId: 'b', reason: 'if_miss' }, { type: 'RunSucceeded' });
  });

  it('a field missing from the payload fails the run with missing_field (not a miss)', () => {
    given(ev.requested(gated), ev.passed('triage', success({})))
      .when(decideAdvance, advance())
      .then(
        { type: 'StageFailed', stageId: 'page', attempt: 0, kind: 'missing_field', reason: expect.stringContaining('payload has no field severity') },
        { type: 'RunFailed', reason: expect.stringMatching(/^missing_field: /) },
      );
  });
});

describe('scheduler: failure and skip cascades', () => {
  it('a failed parent skip-cascades single-parent successors (parent_failed, then parent_skipped) and the run fails', () => {
    given(ev.requested(linear), ev.started('a'), ev.failed('a'))
      .when(decideAdvance, advance())
      .then(
        { type: 'StageSkipped', stageId: 'b', reason: 'parent_failed', detail: 'a' },
        { type: 'StageSkipped', stageId: 'c', reason: 'parent_skipped', detail: 'b' },
        { type: 'RunFailed', reason: 'stage a failed' },
      );
  });

  it('on: [failed] opts the edge out of the cascade but never launches; the run fails when nothing else can move', () => {
    const p = pipeline(stage('tests', { entry: true, route: [{ to: 'ship' }, { to: 'hotfix', on: ['failed'] }] }), stage('ship'), stage('hotfix'));
    const g = given(ev.requested(p), ev.started('tests'), ev.failed('tests'));
    g.when(decideAdvance, advance()).then({ type: 'StageSkipped', stageId: 'ship', reason: 'parent_failed' }, { type: 'RunFailed', reason: 'stage tests failed' });
  });

  it('an on: [failed] edge still launches its child when the parent succeeds', () => {
    const p = pipeline(stage('tests', { entry: true, route: [{ to: 'hotfix', on: ['failed'] }] }), stage('hotfix'));
    given(ev.requested(p), ev.passed('tests')).when(decideAdvance, advance()).then({ type: 'StageAttemptStarted', stageId: 'hotfix' });
  });

  it('a skipped parent cascades unless on lists skipped; then the child stays pending and never launches', () => {
    const p = pipeline(
      stage('a', { entry: true, route: [{ to: 'b', if: { field: 'go', op: 'eq', value: true } }] }),
      stage('b', { route: [{ to: 'c' }, { to: 'd', on: ['succeeded', 'skipped'] }] }),
      stage('c'),
      stage('d'),
    );
    const state = given(ev.requested(p), ev.passed('a', success({ go: false }))).when(decideAdvance, advance()).then(
      { type: 'StageSkipped', stageId: 'b', reason: 'if_miss' },
      { type: 'StageSkipped', stageId: 'c', reason: 'parent_skipped', detail: 'b' },
      // d is neither skipped nor launched: nothing can move, so the run fails.
      { type: 'RunFailed', reason: 'stage d can never start' },
    );
    expect(state.map((e) => ('stageId' in e ? e.stageId : e.type))).not.toContain('d');
  });
});

describe('scheduler: generic fan-in (diamond)', () => {
  const diamond = pipeline(
    stage('clarify', { entry: true, route: [{ to: 'research' }, { to: 'validation' }] }),
    stage('research', { route: [{ to: 'synthesize' }] }),
    stage('validation', { route: [{ to: 'synthesize' }] }),
    stage('synthesize'),
  );

  it('fans out to both branches', () => {
    given(ev.requested(diamond), ev.passed('clarify'))
      .when(decideAdvance, advance())
      .then({ type: 'StageAttemptStarted', stageId: 'research' }, { type: 'StageAttemptStarted', stageId: 'validation' });
  });

  it('waits for every parent', () => {
    given(ev.requested(diamond), ev.passed('clarify'), ev.passed('research'), ev.started('validation')).when(decideAdvance, advance()).thenNothing();
  });

  it('runs when all succeeded, upstream keyed in YAML order regardless of finishing order', () => {
    const r = success({ findings: 1 });
    const v = success({ valid: true });
    const [started] = given(ev.requested(diamond), ev.passed('clarify'), ev.passed('validation', v), ev.passed('research', r))
      .when(decideAdvance, advance())
      .then({ type: 'StageAttemptStarted', stageId: 'synthesize', upstream: { research: r, validation: v }, input: { findings: 1, valid: true } });
    expect(Object.keys((started as { upstream: object }).upstream)).toEqual(['research', 'validation']);
  });

  it('a failed parent keeps the join pending (even with on: [failed]) and the run fails', () => {
    const accepted = pipeline(
      diamond.stages[0],
      stage('research', { route: [{ to: 'synthesize', on: ['succeeded', 'failed', 'skipped'] }] }),
      stage('validation', { route: [{ to: 'synthesize' }] }),
      stage('synthesize'),
    );
    for (const p of [diamond, accepted]) {
      given(ev.requested(p), ev.passed('clarify'), ev.started('research'), ev.failed('research'), ev.passed('validation'))
        .when(decideAdvance, advance())
        .then({ type: 'RunFailed', reason: 'stage research failed' });
    }
  });

  it('a skipped sibling does not block a join with a succeeded parent; the skipped one is omitted', () => {
    const p = pipeline(
      stage('clarify', { entry: true, route: [{ to: 'research', if: { field: 'deep', op: 'eq', value: true } }, { to: 'validation' }] }),
      ...diamond.stages.slice(1),
    );
    const v = success({ valid: true });
    given(ev.requested(p), ev.passed('clarify', success({ deep: false })), ev.skipped('research', 'if_miss'), ev.passed('validation', v))
      .when(decideAdvance, advance())
      .then({ type: 'StageAttemptStarted', stageId: 'synthesize', upstream: { validation: v } });
  });

  it('all parents skipped: the join is skipped with all_parents_skipped', () => {
    given(ev.requested(diamond), ev.passed('clarify'), ev.skipped('research', 'operator'), ev.skipped('validation', 'operator'))
      .when(decideAdvance, advance())
      .then({ type: 'StageSkipped', stageId: 'synthesize', reason: 'all_parents_skipped' }, { type: 'RunSucceeded' });
  });

  it('all parents succeeded but an inbound if missed: the join is skipped, not opened on a partial set', () => {
    const p = pipeline(
      diamond.stages[0],
      stage('research', { route: [{ to: 'synthesize', if: { field: 'ok', op: 'eq', value: true } }] }),
      diamond.stages[2],
      diamond.stages[3],
    );
    given(ev.requested(p), ev.passed('clarify'), ev.passed('research', success({ ok: false })), ev.passed('validation'))
      .when(decideAdvance, advance())
      .then({ type: 'StageSkipped', stageId: 'synthesize', reason: 'if_miss', detail: 'research -> synthesize' }, { type: 'RunSucceeded' });
  });

  it('summarizes every skipped stage with its skip_reason', () => {
    const events = [ev.requested(diamond), ev.passed('clarify'), ev.skipped('research', 'operator'), ev.skipped('validation', 'operator')].flat();
    const g = given(events);
    const decided = g.when(decideAdvance, advance()).then({ type: 'StageSkipped' }, { type: 'RunSucceeded' });
    const summary = summarizeRun(given(events, decided).state);
    expect(summary.status).toBe('succeeded');
    expect(summary.stages.filter((s) => s.status === 'skipped').map((s) => [s.id, s.skip_reason])).toEqual([
      ['research', 'operator'],
      ['validation', 'operator'],
      ['synthesize', 'all_parents_skipped'],
    ]);
  });
});

describe('scheduler: manual recovery holds the cascade', () => {
  const p = pipeline(
    stage('deploy', { entry: true, route: [{ to: 'announce' }], on_verify_fail: { mode: 'manual', max_attempts: 3, retry_safety: 'side_effecting', include_failed_checks: true } }),
    stage('announce'),
  );

  it('while a decision is pending: successors are not skipped, the run is waiting, not ended', () => {
    const g = given(ev.requested(p), ev.started('deploy'), ev.failed('deploy', 1, 'verification'), ev.manualOpened('deploy'));
    g.when(decideAdvance, advance()).thenNothing();
    expect(runStatus(g.state)).toBe('waiting');
    expect(summarizeRun(g.state).stages[0]).toMatchObject({ status: 'failed', waiting_for: 'recovery_decision' });
  });

  it('after stop the cascade is released and the run fails', () => {
    given(ev.requested(p), ev.started('deploy'), ev.failed('deploy', 1, 'verification'), ev.manualOpened('deploy'), {
      v: 1,
      runId: 'run-1',
      at: 'x',
      type: 'ManualRecoveryDecided',
      stageId: 'deploy',
      attempt: 1,
      decision: 'stop',
      by: 'op',
    })
      .when(decideAdvance, advance())
      .then({ type: 'StageSkipped', stageId: 'announce', reason: 'parent_failed' }, { type: 'RunFailed' });
  });
});

describe('scheduler: fork (constructed DAGs)', () => {
  const forked = (select: 'one' | 'subset') =>
    pipeline(
      stage('decide', { entry: true, fork: { select, allow_none: true }, route: [{ to: 'design-doc' }, { to: 'quick-fix' }] }),
      stage('design-doc', { route: [{ to: 'review' }] }),
      stage('quick-fix'),
      stage('review'),
    );

  it('starts the chosen successors and skips the rest with not_chosen (cascading to their children)', () => {
    given(ev.requested(forked('one')), ev.passed('decide', success({}, { fork_choice: ['quick-fix'] })))
      .when(decideAdvance, advance())
      .then(
        { type: 'StageSkipped', stageId: 'design-doc', reason: 'not_chosen', detail: 'decide chose [quick-fix]' },
        { type: 'StageAttemptStarted', stageId: 'quick-fix' },
        { type: 'StageSkipped', stageId: 'review', reason: 'parent_skipped' },
      );
  });

  it('fork_choice: [] skips every successor and the run succeeds', () => {
    given(ev.requested(forked('subset')), ev.passed('decide', success({}, { fork_choice: [] })))
      .when(decideAdvance, advance())
      .then(
        { type: 'StageSkipped', stageId: 'design-doc', reason: 'not_chosen' },
        { type: 'StageSkipped', stageId: 'quick-fix', reason: 'not_chosen' },
        { type: 'StageSkipped', stageId: 'review', reason: 'parent_skipped' },
        { type: 'RunSucceeded' },
      );
  });
});
