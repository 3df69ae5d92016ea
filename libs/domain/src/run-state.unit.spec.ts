import type { RunEvent } from './events';
import type { OnVerifyFail } from './pipeline';
import { decideRequest, type RequestRun } from './request';
import { foldRun, type RunState } from './run-state';
import { summarizeRun } from './summary';
import { check, given, NOW, pipeline, signedAll, simulate, stage, success } from './testing';

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

describe('operator wait and the attempt deadline', () => {
  it('moves the deadline by the time the attempt was parked on a question', () => {
    const base = { v: 1 as const, runId: 'r' };
    const state = foldRun(signedAll([
      { ...base, type: 'RunRequested', at: '2026-01-01T00:00:00.000Z', pipeline: { id: 'p', stages: [{ id: 's', system_prompt: 'x', model: 'm', io: { input: { schema: { type: 'object' } }, output: { schema: { type: 'object' } } }, verify: [], gate_kinds: ['confirm'], entry: true, route: [], replay_safe: true }] }, input: {}, checkout: { kind: 'fresh' }, labels: {}, requestedBy: 't' },
      { ...base, type: 'StageAttemptStarted', at: '2026-01-01T00:00:00.000Z', stageId: 's', attempt: 1, reason: 'initial', input: {}, upstream: {}, deadlineAt: '2026-01-01T01:00:00.000Z' },
      { ...base, type: 'OperatorQuestionAsked', at: '2026-01-01T00:10:00.000Z', stageId: 's', attempt: 1, exchangeId: 'x1', question: { kind: 'confirm', question: 'ok?' }, resume: {} },
      { ...base, type: 'OperatorAnswered', at: '2026-01-01T02:10:00.000Z', stageId: 's', attempt: 1, exchangeId: 'x1', answer: { decision: 'accept' }, by: 'op' },
    ]));
    expect(state.stages.s.attempts[0].deadlineAt).toBe('2026-01-01T03:00:00.000Z');
  });
});
