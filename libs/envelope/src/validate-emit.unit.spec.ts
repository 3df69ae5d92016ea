import type { Exchange, StageDefinition } from '@stageflow/domain';
import { validateEmit } from './validate-emit';
import { makeStage, requiredOnly } from './testing/stage';

const ok = { status: 'success', summary: 'Did it.', artifacts: [], payload: { steps: [] } };
const forkStage = (select: 'one' | 'subset', allow_none?: boolean) =>
  makeStage({ fork: { select, ...(allow_none !== undefined ? { allow_none } : {}) }, route: [{ to: 'a' }, { to: 'b' }] });
const loopStage = makeStage({
  loop: { type: 'loop', to: 'implement', max_replays: 2, on_max_replays: 'require_continue' },
  route: [{ to: 'a' }, { to: 'b' }],
  fork: { select: 'subset' },
});

/** Rows as objects: jest would pass its done callback in place of a short row's missing cells. */
const rows = <T extends [string, ...unknown[]]>(table: T[]) => table.map((row) => ({ name: row[0], row }));

function run(raw: unknown, stage: StageDefinition = makeStage(), extra: { loopAllowsSendBack?: boolean } = {}) {
  const exchanges: Exchange[] = [];
  return validateEmit(raw, { stage, validatePayload: requiredOnly, exchangesThisAttempt: exchanges, ...extra });
}

describe('validateEmit accepts', () => {
  it.each(rows<[string, unknown, StageDefinition?, { loopAllowsSendBack?: boolean }?]>([
    ['a minimal success', ok],
    ['the same envelope given as a JSON string', JSON.stringify(ok)],
    ['a failure without payload', { status: 'failure', summary: 'Could not.', artifacts: [] }],
    ['a failure with a payload that does not match the schema', { status: 'failure', summary: 'x', artifacts: [], payload: {} }],
    ['optional stage_id echo and notes', { ...ok, stage_id: 'plan', notes: 'n' }],
    ['run-relative artifacts', { ...ok, artifacts: ['stages/plan/attempts/1/artifacts/a.md'] }],
    ['fork select one with one successor', { ...ok, fork_choice: ['a'] }, forkStage('one')],
    ['fork subset with two successors', { ...ok, fork_choice: ['a', 'b'] }, forkStage('subset')],
    ['fork subset empty with allow_none', { ...ok, fork_choice: [] }, forkStage('subset', true)],
    ['a failure on a fork stage without fork_choice', { status: 'failure', summary: 'x', artifacts: [] }, forkStage('one')],
    ['a failure on a fork stage with an illegal fork_choice', { status: 'failure', summary: 'x', artifacts: [], fork_choice: ['zzz'] }, forkStage('one')],
    ['fork_choice on a stage without fork (not validated)', { ...ok, fork_choice: ['anything'] }],
    ['loop continue', { ...ok, feedback_loop: { action: 'continue' }, fork_choice: ['a'] }, loopStage],
    ['loop send_back to the loop target', { ...ok, feedback_loop: { action: 'send_back', target: 'implement' } }, loopStage],
    ['loop continue when send_back is exhausted', { ...ok, feedback_loop: { action: 'continue' }, fork_choice: ['a'] }, loopStage, { loopAllowsSendBack: false }],
    ['a failure on a loop stage without feedback_loop', { status: 'failure', summary: 'x', artifacts: [] }, loopStage],
    ['checklist attestations', { ...ok, checklist_attestations: [{ check_id: 'self-review', items: ['a', 'b'] }] }],
  ]))('$name', ({ row: [, raw, stage, extra] }) => {
    const result = run(raw, stage, extra);
    expect(result).toEqual(expect.objectContaining({ ok: true }));
  });

  it('returns only the known fields, copied', () => {
    const result = run({ ...ok, notes: 'n' });
    expect(result).toEqual({ ok: true, envelope: { status: 'success', summary: 'Did it.', artifacts: [], payload: { steps: [] }, notes: 'n' } });
  });
});

describe('validateEmit rejects', () => {
  it.each(rows<[string, unknown, RegExp, StageDefinition?, { loopAllowsSendBack?: boolean }?]>([
    ['malformed JSON text', '{"status": ', /not valid JSON/],
    ['a non-object', [1, 2], /must be a JSON object/],
    ['null', null, /must be a JSON object/],
    ['a missing status', { summary: 'x', artifacts: [], payload: { steps: [] } }, /status must be "success" or "failure"/],
    ['an unknown status', { ...ok, status: 'done' }, /status must be "success" or "failure", got "done"/],
    ['a missing summary', { ...ok, summary: undefined }, /summary is required/],
    ['a blank summary', { ...ok, summary: '   ' }, /summary is required/],
    ['missing artifacts', { status: 'success', summary: 'x', payload: { steps: [] } }, /artifacts is required.*pass \[\]/],
    ['artifacts not an array', { ...ok, artifacts: 'a.md' }, /artifacts must be an array of strings/],
    ['artifacts with a non-string', { ...ok, artifacts: [1] }, /artifacts must be an array of strings/],
    ['an absolute artifact path', { ...ok, artifacts: ['/etc/passwd'] }, /run-relative.*"\/etc\/passwd"/],
    ['an artifact path with ..', { ...ok, artifacts: ['stages/../x'] }, /run-relative/],
    ['a success without payload', { status: 'success', summary: 'x', artifacts: [] }, /payload is required on success/],
    ['a non-object payload', { ...ok, payload: [1] }, /payload must be a JSON object/],
    ['a payload that violates io.output.schema', { ...ok, payload: {} }, /payload does not match io.output.schema: \/ is missing required property steps/],
    ['a failure with a non-object payload', { status: 'failure', summary: 'x', artifacts: [], payload: 'no' }, /payload must be a JSON object/],
    ['an unknown top-level key', { ...ok, result: 1 }, /unknown field\(s\) result/],
    ['clone_forks', { ...ok, clone_forks: [{}] }, /clone_forks is not a valid envelope field.*Clone Chain/],
    ['clone_forks on a failure too', { status: 'failure', summary: 'x', artifacts: [], clone_forks: [] }, /clone_forks.*Clone Chain/],
    ['a wrong stage_id echo', { ...ok, stage_id: 'other' }, /stage_id must echo this stage's id "plan"/],
    ['non-string notes', { ...ok, notes: 3 }, /notes must be a string/],
    ['fork_choice not an array', { ...ok, fork_choice: 'a' }, /fork_choice must be an array/, forkStage('one')],
    ['fork_choice missing on a fork stage', ok, /fork_choice is required on success.*\(a, b\)/, forkStage('subset')],
    ['fork_choice naming a non-successor', { ...ok, fork_choice: ['c'] }, /names c, which is not an immediate successor/, forkStage('subset')],
    ['select one with two choices', { ...ok, fork_choice: ['a', 'b'] }, /exactly one successor \(select: one\), got 2/, forkStage('one')],
    ['select one with none, even with allow_none', { ...ok, fork_choice: [] }, /exactly one successor/, forkStage('one', true)],
    ['subset empty without allow_none', { ...ok, fork_choice: [] }, /does not set allow_none/, forkStage('subset')],
    ['a duplicate fork choice', { ...ok, fork_choice: ['a', 'a'] }, /lists a more than once/, forkStage('subset')],
    ['feedback_loop missing on a loop source', { ...ok, fork_choice: ['a'] }, /feedback_loop is required on success/, loopStage],
    ['feedback_loop on a failure', { status: 'failure', summary: 'x', artifacts: [], feedback_loop: { action: 'continue' } }, /not allowed when status is failure/, loopStage],
    ['feedback_loop on a stage without loop', { ...ok, feedback_loop: { action: 'continue' } }, /declares no \{ type: loop \} route entry/],
    ['feedback_loop not an object', { ...ok, feedback_loop: 'continue' }, /feedback_loop must be an object/, loopStage],
    ['an unknown feedback action', { ...ok, feedback_loop: { action: 'retry' } }, /action must be "continue" or "send_back"/, loopStage],
    ['continue with extra fields', { ...ok, fork_choice: ['a'], feedback_loop: { action: 'continue', target: 'implement' } }, /takes no other fields; remove target/, loopStage],
    ['send_back to another target', { ...ok, feedback_loop: { action: 'send_back', target: 'plan' } }, /target must be "implement"/, loopStage],
    ['send_back with fork_choice', { ...ok, fork_choice: ['a'], feedback_loop: { action: 'send_back', target: 'implement' } }, /send_back cannot be combined with fork_choice/, loopStage],
    ['send_back past max_replays', { ...ok, feedback_loop: { action: 'send_back', target: 'implement' } }, /max_replays \(2\)/, loopStage, { loopAllowsSendBack: false }],
    ['checklist_attestations not an array', { ...ok, checklist_attestations: {} }, /checklist_attestations must be an array/],
    ['an attestation without check_id', { ...ok, checklist_attestations: [{ items: [] }] }, /\[0\]\.check_id must be/],
    ['an attestation with non-string items', { ...ok, checklist_attestations: [{ check_id: 'c', items: [1] }] }, /\[0\]\.items must be an array of strings/],
    ['an attestation with an unknown key', { ...ok, checklist_attestations: [{ check_id: 'c', items: [], note: 1 }] }, /unknown field\(s\) note/],
    ['a check attested twice', { ...ok, checklist_attestations: [{ check_id: 'c', items: [] }, { check_id: 'c', items: [] }] }, /attested twice/],
  ]))('$name', ({ row: [, raw, message, stage, extra] }) => {
    const result = run(raw, stage, extra);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(message);
  });

  it('lists every problem at once', () => {
    const result = run({ status: 'success', summary: '', extra: 1 });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatch(/unknown field\(s\) extra/);
      expect(result.error).toMatch(/summary is required/);
      expect(result.error).toMatch(/artifacts is required/);
      expect(result.error).toMatch(/payload is required/);
    }
  });

  it('refuses a payload nested 8,000 levels deep with a message, not a stack overflow', () => {
    let payload: unknown = {};
    for (let i = 0; i < 8000; i++) payload = { a: payload };
    const result = run({ ...ok, payload });
    expect(result).toEqual({ ok: false, error: expect.stringContaining('nests deeper than 64 levels') });
    expect(run({ ...ok, payload: { steps: [{ a: [1] }] } }).ok).toBe(true);
  });
});
