import type { StageEnvelope } from '@stageflow/domain';
import { buildPrompt } from './prompt';
import { makeStage } from './testing/fixtures';

describe('buildPrompt', () => {
  it('carries every section in order, upstream in the order given', () => {
    const env = (summary: string): StageEnvelope => ({ status: 'success', summary, artifacts: ['stages/a/attempts/1/artifacts/x.md'], payload: { n: summary } });
    const stage = makeStage({
      fork: { select: 'one' },
      route: [{ to: 'left' }, { to: 'right' }],
      loop: { type: 'loop', to: 'impl', max_replays: 2, on_max_replays: 'require_continue' },
      verify: [{ id: 'self-review', type: 'checklist', items: ['a', 'b'], when: ['after'] }],
      gate_kinds: ['confirm'],
    });
    const { system, user } = buildPrompt({
      stage,
      input: { topic: 'T' },
      upstream: { zeta: env('Z first'), alpha: env('A second') },
      capsule: { attempt: 1, summary: 'tried', failed_checks: [{ id: 'tests', type: 'command', status: 'failed', message: 'exit 1' }] },
      guidance: 'Use the other API.',
      loopContext: { replay: 1, remaining_replays: 1 },
      answeredExchanges: [{ exchangeId: 'x', attempt: 1, question: { kind: 'confirm', question: 'Ship?' }, askedAt: 't', resume: {}, answer: { decision: 'accept' } }],
    });
    expect(system).toBe('Build it.');
    const order = ['## Task input', '"topic": "T"', '### zeta', '### alpha', '## Repair', 'tests (command): failed — exit 1', '## Operator guidance', '## Feedback Loop Context', '## Operator answers so far', '## Tool contract'];
    const positions = order.map((s) => user.indexOf(s));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(user).toContain('exactly one successor(s) to run, from: left, right');
    expect(user).toContain('"target": "impl"');
    expect(user).toContain('"check_id": "self-review"');
    expect(user).toContain('"required": [');
  });

  it('omits sections without input', () => {
    const { user } = buildPrompt({ stage: makeStage(), input: {}, upstream: {}, answeredExchanges: [] });
    expect(user).not.toMatch(/Upstream|Repair|guidance|Feedback Loop|Operator answers/);
  });
});
