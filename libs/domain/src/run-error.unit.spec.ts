import { decideRunError, MAX_ERROR_REASON_CHARS, type EndRunInError } from './run-error';
import { foldRun, runStatus } from './run-state';
import { summarizeRun } from './summary';
import { ev, given, NOW, pipeline, simulate, stage } from './testing';

const endInError = (reason = 'scheduler could not process seq 7: RangeError: Invalid time value'): EndRunInError => ({ type: 'EndRunInError', reason, now: NOW });

describe('ending a run in error', () => {
  it('given a running run, when a message about it is dead-lettered, then the run ends error with the reason', () => {
    const sim = simulate(pipeline(stage('a', { entry: true })));
    sim.advance();
    const decided = given(sim.events).when(decideRunError, endInError()).thenIdempotent();
    expect(decided).toMatchObject([{ type: 'RunErrored', reason: 'scheduler could not process seq 7: RangeError: Invalid time value' }]);
    const state = foldRun([...sim.events, ...decided]);
    expect(runStatus(state)).toBe('error');
    expect(summarizeRun(state)).toMatchObject({ status: 'error', reason: expect.stringContaining('RangeError') });
  });

  it('given a finished run, the outcome stays', () => {
    const requested = ev.requested(pipeline(stage('a', { entry: true })));
    const past = [requested, { v: requested.v, runId: requested.runId, at: NOW, type: 'RunFailed', reason: 'stage a failed' } as const];
    expect(runStatus(foldRun(past))).toBe('failed');
    given(past).when(decideRunError, endInError()).thenNothing();
  });

  it('given no run, nothing is decided', () => {
    given().when(decideRunError, endInError()).thenNothing();
  });

  it('records at most MAX_ERROR_REASON_CHARS of the reason', () => {
    const [event] = given(ev.requested(pipeline(stage('a', { entry: true })))).when(decideRunError, endInError('x'.repeat(10_000))).then({ type: 'RunErrored' });
    expect((event as { reason: string }).reason).toHaveLength(MAX_ERROR_REASON_CHARS);
  });
});
