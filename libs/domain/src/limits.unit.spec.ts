import { decideRequest, initialRunState, type PipelineDefinition } from './index';
import { deadlineAfter, inputLimitProblem, MAX_TIMER_MS, nestsDeeperThan, timerDelayMs } from './limits';

const nested = (levels: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = [value];
  return value;
};

describe('limits', () => {
  it('keeps a deadline a valid date however large the timeout', () => {
    expect(deadlineAfter('2026-01-01T00:00:00.000Z', 99999999999999999999)).toBe(new Date(Date.parse('2026-01-01T00:00:00.000Z') + MAX_TIMER_MS).toISOString());
    expect(deadlineAfter('2026-01-01T00:00:00.000Z', 1000)).toBe('2026-01-01T00:00:01.000Z');
  });

  it('clamps timer delays into what setTimeout honours', () => {
    expect(timerDelayMs(2_592_000_000)).toBe(MAX_TIMER_MS);
    expect(timerDelayMs(Number.NaN)).toBe(0);
    expect(timerDelayMs(-5)).toBe(0);
    expect(timerDelayMs(1500.7)).toBe(1500);
  });

  it('measures nesting without recursion', () => {
    expect(nestsDeeperThan(nested(100_000), 64)).toBe(true);
    expect(nestsDeeperThan(nested(64), 64)).toBe(false);
    expect(nestsDeeperThan(nested(65), 64)).toBe(true);
    expect(nestsDeeperThan('scalar', 0)).toBe(false);
  });

  it('names the limit an input breaks', () => {
    expect(inputLimitProblem({ a: nested(100) })?.code).toBe('input.too_deep');
    expect(inputLimitProblem({ a: 'x'.repeat(2 * 1024 * 1024) })?.code).toBe('input.too_large');
    expect(inputLimitProblem({ a: [1, { b: 2 }] })).toBeUndefined();
  });

  it('given no run, when a request carries a too-deep input, then it is refused', () => {
    const pipeline = { id: 'p', stages: [] } as unknown as PipelineDefinition;
    const request = { type: 'RequestRun' as const, runId: 'r', pipeline, checkout: { kind: 'fresh' as const }, requestedBy: 't', now: '2026-01-01T00:00:00.000Z' };
    expect(() => decideRequest({ ...request, input: { a: nested(8000) } }, initialRunState())).toThrow(expect.objectContaining({ code: 'input.too_deep' }));
    expect(decideRequest({ ...request, input: { a: 1 } }, initialRunState()).map((e) => e.type)).toEqual(['RunRequested']);
  });
});
