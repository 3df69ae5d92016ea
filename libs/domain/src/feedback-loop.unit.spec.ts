import type { StageAttemptStarted } from './events';
import { decideOperator } from './operator';
import type { LoopRoute } from './pipeline';
import { loopAllowsSendBack, runStatus } from './run-state';
import { decideAdvance } from './scheduler';
import { summarizeRun } from './summary';
import { advance, given, NOW, pipeline, simulate, stage } from './testing';

const loopPipeline = (policy: Partial<LoopRoute> = {}) =>
  pipeline(
    stage('plan', { entry: true, route: [{ to: 'implement' }] }),
    stage('implement', { route: [{ to: 'review' }] }),
    stage('review', {
      route: [{ to: 'submit' }],
      loop: { type: 'loop', to: 'implement', max_replays: 2, on_max_replays: 'require_continue', replay_session: 'resume', ...policy },
    }),
    stage('submit', { replay_safe: false }),
  );

const sendBack = { feedback_loop: { action: 'send_back', target: 'implement' } } as const;
const cont = { feedback_loop: { action: 'continue' } } as const;

/** Run plan → implement → review, ready for review's emit. */
function toReview(policy: Partial<LoopRoute> = {}) {
  const sim = simulate(loopPipeline(policy));
  sim.advance();
  sim.succeed('plan', { plan: 'p' });
  sim.succeed('implement', { diff: 1 });
  return sim;
}

describe('feedback loops', () => {
  it('continue: the source succeeds and its normal successors run', () => {
    const sim = toReview();
    const decided = sim.succeed('review', {}, cont);
    expect(sim.types(decided)).toEqual([
      'EnvelopeCaptured:review',
      'AttemptVerified:review',
      'StageSucceeded:review',
      'StageAttemptStarted:submit',
    ]);
  });

  it('send_back: the route from target through source goes back to pending and the target restarts with a loop context', () => {
    const sim = toReview();
    const decided = sim.succeed('review', { notes: 'fix the tests' }, { ...sendBack, summary: 'tests are weak', artifacts: ['r.md'] });
    expect(sim.types(decided).slice(2)).toEqual(['StageSucceeded:review', 'FeedbackLoopReplayed:review', 'StageAttemptStarted:implement']);
    expect(decided[3]).toMatchObject({ loopId: 'review->implement', replay: 1, route: ['implement', 'review'], remainingReplays: 1 });
    const started = decided[4] as StageAttemptStarted;
    expect(started).toMatchObject({ attempt: 2, reason: 'loop_replay', input: { plan: 'p' } });
    expect(started.loopContext).toEqual({
      loop_id: 'review->implement',
      replay_id: 'review->implement#1',
      replay: 1,
      source: 'review',
      target: 'implement',
      send_back: { summary: 'tests are weak', artifacts: ['r.md'], payload: { notes: 'fix the tests' } },
      remaining_replays: 1,
      route: ['implement', 'review'],
      prior_attempt: 1,
      replay_session: 'resume',
    });
    // Downstream of the source stays held; the source is pending again.
    expect([sim.status('review'), sim.status('submit'), sim.status('plan')]).toEqual(['pending', 'pending', 'succeeded']);
    // The rest of the route replays too, with the same context and a fresh attempt.
    const next = sim.succeed('implement', { diff: 2 });
    const review = next.find((e) => e.type === 'StageAttemptStarted') as StageAttemptStarted;
    expect(review).toMatchObject({ stageId: 'review', attempt: 2, reason: 'loop_replay', loopContext: { replay: 1, prior_attempt: 1 } });
    // Continue ends the loop; submit runs once, as an ordinary start.
    const done = sim.succeed('review', {}, cont);
    expect(done.at(-1)).toMatchObject({ type: 'StageAttemptStarted', stageId: 'submit', reason: 'initial' });
    expect(done.at(-1)).not.toHaveProperty('loopContext');
  });

  it('require_continue: after max_replays a send_back is not honoured (the validator is told to reject it)', () => {
    const sim = toReview();
    expect(loopAllowsSendBack(sim.state, 'review')).toBe(true);
    sim.succeed('review', {}, sendBack);
    sim.succeed('implement');
    expect(loopAllowsSendBack(sim.state, 'review')).toBe(true);
    sim.succeed('review', {}, sendBack);
    sim.succeed('implement');
    expect(loopAllowsSendBack(sim.state, 'review')).toBe(false);
    expect(loopAllowsSendBack(sim.state, 'plan')).toBe(false);
    // Should one get through anyway, the scheduler fails the source rather than loop a third time.
    const decided = sim.succeed('review', {}, sendBack);
    expect(sim.types(decided).slice(2)).toEqual(['StageSucceeded:review', 'StageFailed:review', 'StageSkipped:submit', 'RunFailed']);
    expect(decided[3]).toMatchObject({ kind: 'feedback_loop_exhausted' });
    expect(summarizeRun(sim.state).stages.find((s) => s.id === 'review')).toMatchObject({
      feedback_loop: { replays: 2, max_replays: 2, remaining_replays: 0 },
    });
  });

  describe('wait_for_human', () => {
    function parked() {
      const sim = toReview({ on_max_replays: 'wait_for_human', max_replays: 1 });
      sim.succeed('review', {}, sendBack);
      sim.succeed('implement');
      expect(loopAllowsSendBack(sim.state, 'review')).toBe(true);
      const decided = sim.succeed('review', { round: 2 }, sendBack);
      expect(sim.types(decided).slice(2)).toEqual(['StageSucceeded:review', 'FeedbackLoopParked:review']);
      return sim;
    }

    it('parks the source waiting for a feedback decision; the run waits and nothing moves', () => {
      const sim = parked();
      expect(sim.status('review')).toBe('waiting');
      expect(runStatus(sim.state)).toBe('waiting');
      expect(summarizeRun(sim.state).stages.find((s) => s.id === 'review')).toMatchObject({ status: 'waiting', waiting_for: 'feedback_decision' });
      given(sim.events).when(decideAdvance, advance()).thenNothing();
    });

    it('extend: one more replay is allowed and the deferred send_back is honoured', () => {
      const sim = parked();
      const decided = sim.operator({ type: 'DecideFeedbackLoop', stageId: 'review', decision: 'extend', reason: 'one more', by: 'op', now: NOW });
      expect(sim.types(decided)).toEqual(['FeedbackLoopDecided:review', 'FeedbackLoopReplayed:review', 'StageAttemptStarted:implement']);
      expect(decided[1]).toMatchObject({ replay: 2, remainingReplays: 0, sendBack: { payload: { round: 2 } } });
    });

    it('continue: the source is succeeded and successors run', () => {
      const sim = parked();
      const decided = sim.operator({ type: 'DecideFeedbackLoop', stageId: 'review', decision: 'continue', by: 'op', now: NOW });
      expect(sim.types(decided)).toEqual(['FeedbackLoopDecided:review', 'StageAttemptStarted:submit']);
      expect(sim.status('review')).toBe('succeeded');
    });

    it('abandon: the source fails with the reason and the run fails', () => {
      const sim = parked();
      const decided = sim.operator({ type: 'DecideFeedbackLoop', stageId: 'review', decision: 'abandon', reason: 'out of time', by: 'op', now: NOW });
      expect(sim.types(decided)).toEqual(['FeedbackLoopDecided:review', 'StageFailed:review', 'StageSkipped:submit', 'RunFailed']);
      expect(decided[1]).toMatchObject({ kind: 'feedback_loop_abandoned', reason: 'feedback loop abandoned by op: out of time' });
    });

    it('a second decision on the same park is refused; so is a decision with no park or a wrong loop id', () => {
      const sim = parked();
      given(sim.events)
        .when(decideOperator, { type: 'DecideFeedbackLoop', stageId: 'review', decision: 'continue', loopId: 'x->y', by: 'op', now: NOW })
        .thenRefused('feedback.loop_mismatch');
      given(sim.events)
        .when(decideOperator, { type: 'DecideFeedbackLoop', stageId: 'review', decision: 'maybe' as never, by: 'op', now: NOW })
        .thenRefused('feedback.decision_invalid');
      given(sim.events)
        .when(decideOperator, { type: 'DecideFeedbackLoop', stageId: 'implement', decision: 'continue', by: 'op', now: NOW })
        .thenRefused('feedback.no_loop');
      sim.operator({ type: 'DecideFeedbackLoop', stageId: 'review', decision: 'continue', by: 'op', now: NOW });
      given(sim.events)
        .when(decideOperator, { type: 'DecideFeedbackLoop', stageId: 'review', decision: 'extend', by: 'op', now: NOW })
        .thenRefused('feedback.not_waiting');
    });
  });
});
