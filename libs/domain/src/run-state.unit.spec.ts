import type { RunEvent } from './events';
import type { OnVerifyFail } from './pipeline';
import { decideRequest, type RequestRun } from './request';
import { foldRun, type RunState } from './run-state';
import { summarizeRun } from './summary';
import { check, given, NOW, pipeline, simulate, stage, success } from './testing';

const strip = ({ version: _version, ...rest }: RunState) => rest;

/** Folding every event twice in a row gives the state folding it once gives. */
function expectIdempotentFold(events: readonly RunEvent[]) {
  const once = foldRun(events);
  const twice = foldRun(events.flatMap((e) => [e, e]));
  expect(strip(twice)).toEqual(strip(once));
  expect(summarizeRun(twice)).toEqual(summarizeRun(once));
}

describe('request decider', () => {
  const request: RequestRun = {
    type: 'RequestRun',
    runId: 'run-1',
    pipeline: pipeline(stage('a', { entry: true })),
    input: { q: 1 },
    checkout: { kind: 'fresh' },
    idempotencyKey: 'k1',
    requestedBy: 'svc',
    now: NOW,
  };
  it('creates the run once', () => {
    given().when(decideRequest, request).then({ type: 'RunRequested', runId: 'run-1', input: { q: 1 }, labels: {}, idempotencyKey: 'k1', requestedBy: 'svc' });
    given().when(decideRequest, request).thenIdempotent();
  });
});

describe('evolve is idempotent over whole scenarios', () => {
  const manual: OnVerifyFail = { mode: 'manual', max_attempts: 3, retry_safety: 'side_effecting', include_failed_checks: true };

  it('repair, manual recovery, retry and a diamond', () => {
    const p = pipeline(
      stage('a', { entry: true, route: [{ to: 'b' }, { to: 'c' }], on_verify_fail: { ...manual, mode: 'repair', retry_safety: 'idempotent' } }),
      stage('b', { route: [{ to: 'd' }], on_verify_fail: manual }),
      stage('c', { route: [{ to: 'd' }] }),
      stage('d'),
    );
    const sim = simulate(p);
    sim.advance();
    sim.finish('a', success(), [check('t', 'failed')]); // repair
    sim.succeed('a', { x: 1 });
    sim.finish('b', success(), [check('t', 'failed')]); // manual decision
    sim.operator({ type: 'RecoverWithGuidance', stageId: 'b', guidance: 'again', by: 'op', now: NOW });
    sim.succeed('b');
    sim.failAgent('c');
    sim.operator({ type: 'RetryStage', stageId: 'c', by: 'op', now: NOW });
    sim.succeed('c');
    sim.succeed('d');
    expect(summarizeRun(sim.state).status).toBe('succeeded');
    expectIdempotentFold(sim.events);
  });

  it('a feedback loop with a park and an extend', () => {
    const p = pipeline(
      stage('impl', { entry: true, route: [{ to: 'review' }] }),
      stage('review', { route: [{ to: 'ship' }], loop: { type: 'loop', to: 'impl', max_replays: 1, on_max_replays: 'wait_for_human' } }),
      stage('ship'),
    );
    const back = { feedback_loop: { action: 'send_back', target: 'impl' } } as const;
    const sim = simulate(p);
    sim.advance();
    sim.succeed('impl');
    sim.succeed('review', {}, back);
    sim.succeed('impl');
    sim.succeed('review', {}, back); // parked
    sim.operator({ type: 'DecideFeedbackLoop', stageId: 'review', decision: 'extend', by: 'op', now: NOW });
    sim.succeed('impl');
    sim.succeed('review', {}, { feedback_loop: { action: 'continue' } });
    sim.succeed('ship');
    expect(summarizeRun(sim.state).status).toBe('succeeded');
    expectIdempotentFold(sim.events);
  });

  it('a sequential clone chain with a failure and a retry', () => {
    const p = pipeline(
      stage('e', { entry: true, route: [{ to: 'c' }], clone: { role: 'emitter', child: 'c', join: 'j', cap: 3, mode: 'sequential', array_field: 'items' } }),
      stage('c', { route: [{ to: 'j' }], clone: { role: 'child', emitter: 'e', join: 'j' } }),
      stage('j', { clone: { role: 'join', emitter: 'e', child: 'c' } }),
    );
    const sim = simulate(p);
    sim.advance();
    sim.succeed('e', { items: [{ n: 1 }, { n: 2 }] });
    sim.failAgent('c~1');
    sim.operator({ type: 'RetryStage', stageId: 'c~1', by: 'op', now: NOW });
    sim.succeed('c~1');
    sim.succeed('c~2');
    sim.succeed('j');
    expect(summarizeRun(sim.state).status).toBe('succeeded');
    expectIdempotentFold(sim.events);
  });
});
