import type { Exchange, OperatorAnswer, StageEnvelope, VerifyItem } from '@stageflow/domain';
import { runEmitChecks } from './emit-checks';
import { makeStage } from './testing/stage';

const success: StageEnvelope = { status: 'success', summary: 's', artifacts: ['stages/plan/attempts/1/artifacts/plan.md'], payload: {} };
let seq = 0;
function exchange(kind: Exchange['question']['kind'], answer?: OperatorAnswer): Exchange {
  seq += 1;
  return { exchangeId: `x${seq}`, attempt: 1, question: { kind, question: 'q?' }, askedAt: 't', resume: {}, ...(answer ? { answer } : {}) };
}
const gate = (kind: Exchange['question']['kind'], id = 'g'): VerifyItem => ({ id, type: 'gate', kind, when: ['emit'] });
const check = (verify: VerifyItem[], envelope: StageEnvelope, exchanges: Exchange[] = []) =>
  runEmitChecks(makeStage({ verify }), envelope, exchanges);

describe('runEmitChecks', () => {
  it('is a no-op without emit-phase items', () => {
    expect(check([], success)).toBeNull();
    expect(check([{ id: 'a', type: 'artifact', basename: 'zzz.md', when: ['after'] }], success)).toBeNull();
  });

  it('is skipped on failure emits', () => {
    expect(check([gate('confirm')], { status: 'failure', summary: 's', artifacts: [] })).toBeNull();
  });

  it.each<[string, Exchange['question']['kind'], Exchange[], string | null]>([
    ['confirm accepted', 'confirm', [exchange('confirm', { decision: 'accept' })], null],
    ['confirm rejected', 'confirm', [exchange('confirm', { decision: 'reject' })], 'was reject, not accept'],
    ['artifact_backed: the LAST exchange decides (accept then reject)', 'artifact_backed', [exchange('artifact_backed', { decision: 'accept' }), exchange('artifact_backed', { decision: 'reject' })], 'not accept'],
    ['artifact_backed: reject then accept passes', 'artifact_backed', [exchange('artifact_backed', { decision: 'reject' }), exchange('artifact_backed', { decision: 'accept' })], null],
    ['other kinds do not count', 'confirm', [exchange('free_text', { text: 'ok' })], 'no confirm ask_operator exchange'],
    ['no exchange at all', 'artifact_backed', [], 'no artifact_backed ask_operator exchange in this attempt'],
    ['unanswered', 'confirm', [exchange('confirm')], 'has no answer yet'],
    ['free_text answered', 'free_text', [exchange('free_text', { text: 'go' })], null],
    ['multi_question answered', 'multi_question', [exchange('multi_question', { answers: { a: 'x' } })], null],
    ['free_text unanswered', 'free_text', [exchange('free_text')], 'no answer yet'],
  ])('gate: %s', (_name, kind, exchanges, expected) => {
    const result = check([gate(kind)], success, exchanges);
    if (expected === null) expect(result).toBeNull();
    else expect(result).toContain(expected);
  });

  it.each<[string, VerifyItem, readonly string[], boolean]>([
    ['basename verbatim', { id: 'a', type: 'artifact', basename: 'plan.md', when: ['emit'] }, ['plan.md'], true],
    ['basename as /suffix', { id: 'a', type: 'artifact', basename: 'plan.md', when: ['emit'] }, ['stages/plan/attempts/1/artifacts/plan.md'], true],
    ['basename of path', { id: 'a', type: 'artifact', path: 'docs/plan.md', when: ['emit', 'after'] }, ['x/plan.md'], true],
    ['suffix must follow a slash', { id: 'a', type: 'artifact', basename: 'plan.md', when: ['emit'] }, ['myplan.md'], false],
    ['absent', { id: 'a', type: 'artifact', basename: 'plan.md', when: ['emit'] }, [], false],
  ])('artifact: %s', (_name, item, artifacts, passes) => {
    const result = check([item], { ...success, artifacts });
    if (passes) expect(result).toBeNull();
    else expect(result).toMatch(/emit-phase check a failed: artifacts must include plan.md/);
  });

  it('runs in declaration order and stops at the first failure', () => {
    const verify: VerifyItem[] = [
      { id: 'first', type: 'artifact', basename: 'missing.md', when: ['emit'] },
      gate('confirm', 'second'),
    ];
    expect(check(verify, success)).toMatch(/^emit-phase check first failed/);
    const reordered = [verify[1]!, verify[0]!];
    expect(check(reordered, success)).toMatch(/^emit-phase check second failed/);
  });
});
