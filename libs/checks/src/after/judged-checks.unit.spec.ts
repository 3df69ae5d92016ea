/** checklist, payload_schema, gate, checkout_changes, and the after-phase runner itself. */
import Ajv from 'ajv';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { baseContext, tempDir } from '../__tests__/support.spec';
import type { GateKind, IoSchema, VerifyItem } from '../domain';
import { MODE_EXECUTABLE, MODE_FILE, type SnapshotManifest } from '../snapshot/manifest';
import type { CapturedEnvelope, OperatorExchange, PayloadValidator } from '../types';
import { runAfterChecks } from './run-after-checks';

const after = ['after'] as const;
const envelope = (fields: Partial<CapturedEnvelope>): CapturedEnvelope => ({ status: 'success', summary: 'done', artifacts: [], ...fields });

async function runOne(item: VerifyItem, overrides: Parameters<typeof baseContext>[0]) {
  const [result] = await runAfterChecks([item], baseContext(overrides));
  return result!;
}

describe('checklist check', () => {
  const item: VerifyItem = { id: 'self-review', type: 'checklist', when: [...after], items: ['Matches the plan', 'No unrelated files'] };

  it('passes when the attestation equals the declared items as a set', async () => {
    const result = await runOne(item, { envelope: envelope({ checklist_attestations: [{ check_id: 'self-review', items: ['No unrelated files', 'Matches the plan'] }] }) });
    expect(result.status).toBe('passed');
    expect(result.evidence).toEqual({ attestation: true, attested: true, declared: ['Matches the plan', 'No unrelated files'], missing: [], extra: [] });
  });

  it('fails a missing item and an extra item', async () => {
    const result = await runOne(item, { envelope: envelope({ checklist_attestations: [{ check_id: 'self-review', items: ['Matches the plan', 'Wrote docs'] }] }) });
    expect(result).toEqual(expect.objectContaining({ status: 'failed', message: 'missing item(s): No unrelated files; extra item(s): Wrote docs' }));
    expect(result.evidence).toEqual(expect.objectContaining({ attestation: true, missing: ['No unrelated files'], extra: ['Wrote docs'] }));
  });

  it('fails with every item missing when there is no attestation', async () => {
    const result = await runOne(item, { envelope: envelope({ checklist_attestations: [{ check_id: 'other', items: ['Matches the plan'] }] }) });
    expect(result.status).toBe('failed');
    expect(result.evidence).toEqual(expect.objectContaining({ attested: false, missing: ['Matches the plan', 'No unrelated files'] }));
  });
});

describe('payload_schema check', () => {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validatePayload: PayloadValidator = (schema: IoSchema, payload: unknown) => {
    const validate = ajv.compile(schema);
    const valid = validate(payload);
    return { valid, errors: (validate.errors ?? []).map((e) => ({ path: e.instancePath, message: e.message ?? 'invalid' })) };
  };
  const outputSchema: IoSchema = { type: 'object', properties: { changed_files: { type: 'array', items: { type: 'string' } } }, required: ['changed_files'] };
  const item: VerifyItem = { id: 'valid-handoff', type: 'payload_schema', when: [...after] };

  it('passes a payload matching io.output.schema', async () => {
    const result = await runOne(item, { outputSchema, validatePayload, envelope: envelope({ payload: { changed_files: ['a.ts'] } }) });
    expect(result).toEqual(expect.objectContaining({ status: 'passed', evidence: { payload_present: true, errors: [] } }));
  });

  it('fails a payload that does not match and names the first error', async () => {
    const result = await runOne(item, { outputSchema, validatePayload, envelope: envelope({ payload: { changed_files: [1] } }) });
    expect(result).toEqual(expect.objectContaining({ status: 'failed', message: 'payload does not match io.output.schema (/changed_files/0: must be string)' }));
  });

  it('fails a missing payload', async () => {
    const result = await runOne(item, { outputSchema, validatePayload, envelope: envelope({}) });
    expect(result.status).toBe('failed');
    expect(result.evidence).toEqual(expect.objectContaining({ payload_present: false }));
  });

  it('is an error without a validator', async () => {
    const result = await runOne(item, { outputSchema });
    expect(result).toEqual(expect.objectContaining({ status: 'error', message: 'no payload validator configured' }));
  });
});

describe('gate check (after phase: any exchange of the kind over the run so far)', () => {
  const gate = (kind: GateKind): VerifyItem => ({ id: 'approval', type: 'gate', kind, when: [...after] });
  const exchange = (fields: Partial<OperatorExchange> & Pick<OperatorExchange, 'kind'>): OperatorExchange => ({ answered: true, attempt: 1, ...fields });

  it.each<[GateKind, OperatorExchange[], 'passed' | 'failed']>([
    ['confirm', [exchange({ kind: 'confirm', decision: 'accept' })], 'passed'],
    ['confirm', [exchange({ kind: 'confirm', decision: 'reject' })], 'failed'],
    ['confirm', [exchange({ kind: 'confirm' })], 'failed'],
    ['confirm', [exchange({ kind: 'confirm', decision: 'accept', attempt: 1 }), exchange({ kind: 'confirm', decision: 'reject', attempt: 2 })], 'passed'],
    ['confirm', [exchange({ kind: 'artifact_backed', decision: 'accept' })], 'failed'],
    ['artifact_backed', [exchange({ kind: 'artifact_backed', decision: 'accept', attempt: 2 })], 'passed'],
    ['artifact_backed', [exchange({ kind: 'artifact_backed', answered: true })], 'failed'],
    ['free_text', [exchange({ kind: 'free_text' })], 'passed'],
    ['free_text', [exchange({ kind: 'free_text', answered: false })], 'failed'],
    ['free_text', [exchange({ kind: 'free_text', decision: 'reject' })], 'failed'],
    ['multi_question', [exchange({ kind: 'multi_question', answered: false }), exchange({ kind: 'multi_question', attempt: 3 })], 'passed'],
    ['multi_question', [], 'failed'],
  ])('%s with %j → %s', async (kind, exchanges, status) => {
    const result = await runOne(gate(kind), { operatorExchanges: exchanges });
    expect(result.status).toBe(status);
  });

  it('records the exchanges considered and which attempts satisfied it', async () => {
    const result = await runOne(gate('confirm'), {
      operatorExchanges: [exchange({ kind: 'confirm', decision: 'reject', attempt: 1 }), exchange({ kind: 'confirm', decision: 'accept', attempt: 2 }), exchange({ kind: 'free_text' })],
    });
    expect(result.evidence).toEqual({
      kind: 'confirm',
      scope: 'run',
      exchanges: [
        { attempt: 1, answered: true, decision: 'reject' },
        { attempt: 2, answered: true, decision: 'accept' },
      ],
      satisfied_by_attempts: [2],
    });
  });

  it('names what is missing', async () => {
    expect((await runOne(gate('confirm'), {})).message).toBe('no confirm exchange in this run');
    expect((await runOne(gate('confirm'), { operatorExchanges: [exchange({ kind: 'confirm', decision: 'reject' })] })).message).toBe('no confirm exchange in this run was accepted');
  });
});

describe('checkout_changes check', () => {
  const entry = (path: string, digest: string, mode = MODE_FILE) => ({ path, digest: `sha256:${digest}`, size: 1, mode });
  const baseline: SnapshotManifest = { files: [entry('README.md', 'r'), entry('src/a.ts', 'a'), entry('src/old.ts', 'o'), entry('run.sh', 's')] };
  const changedTree: SnapshotManifest = { files: [entry('README.md', 'r'), entry('run.sh', 's', MODE_EXECUTABLE), entry('src/a.ts', 'a2'), entry('src/new.ts', 'n')] };
  const plain: VerifyItem = { id: 'changes', type: 'checkout_changes', when: [...after] };
  const withFields: VerifyItem = { id: 'changes', type: 'checkout_changes', when: [...after], path_fields: ['changed_files', 'deleted_files'] };

  it('passes a real change and lists it', async () => {
    const result = await runOne(plain, { baselineManifest: baseline, afterManifest: changedTree });
    expect(result.status).toBe('passed');
    expect(result.evidence).toEqual({ changed: ['run.sh', 'src/a.ts', 'src/new.ts', 'src/old.ts'], added: ['src/new.ts'], modified: ['run.sh', 'src/a.ts'], deleted: ['src/old.ts'] });
  });

  it('fails when nothing changed', async () => {
    const result = await runOne(plain, { baselineManifest: baseline, afterManifest: baseline });
    expect(result).toEqual(expect.objectContaining({ status: 'failed', message: 'the attempt changed nothing in the checkout' }));
  });

  it('passes when the claimed paths (normalised) equal the changed paths', async () => {
    const payload = { changed_files: ['./src/a.ts', 'src/new.ts', 'run.sh'], deleted_files: ['src//old.ts', 'src/a.ts'] };
    const result = await runOne(withFields, { baselineManifest: baseline, afterManifest: changedTree, envelope: envelope({ payload }) });
    expect(result.status).toBe('passed');
    expect(result.evidence).toEqual(expect.objectContaining({ claimed: ['run.sh', 'src/a.ts', 'src/new.ts', 'src/old.ts'], missing_claimed: [], unclaimed: [], invalid_claimed: [] }));
  });

  it('fails claimed-but-unchanged and changed-but-unclaimed paths', async () => {
    const payload = { changed_files: ['src/a.ts', 'src/ghost.ts'], deleted_files: ['src/old.ts'] };
    const result = await runOne(withFields, { baselineManifest: baseline, afterManifest: changedTree, envelope: envelope({ payload }) });
    expect(result).toEqual(expect.objectContaining({ status: 'failed', message: 'claimed but not changed: src/ghost.ts; changed but not claimed: run.sh, src/new.ts' }));
    expect(result.evidence).toEqual(expect.objectContaining({ missing_claimed: ['src/ghost.ts'], unclaimed: ['run.sh', 'src/new.ts'] }));
  });

  it('fails absolute and traversing claims and non-array fields', async () => {
    const payload = { changed_files: ['/etc/passwd', '../x', 'src/a.ts', 'src/new.ts', 'run.sh', 'src/old.ts'], deleted_files: 'src/old.ts' };
    const result = await runOne(withFields, { baselineManifest: baseline, afterManifest: changedTree, envelope: envelope({ payload }) });
    expect(result.status).toBe('failed');
    expect(result.message).toBe('payload field deleted_files is not an array of strings; invalid claimed path(s): "/etc/passwd", "../x"');
    expect(result.evidence).toEqual(expect.objectContaining({ invalid_claimed: ['/etc/passwd', '../x'] }));
  });

  it('is an error without both manifests', async () => {
    const result = await runOne(plain, { baselineManifest: baseline });
    expect(result).toEqual(expect.objectContaining({ status: 'error', message: expect.stringContaining('snapshot') }));
  });
});

describe('runAfterChecks', () => {
  const dir = tempDir('runner');
  beforeAll(() => writeFileSync(join(dir, 'report.md'), '# Report\n'));

  it('runs every after-phase item in declaration order, all of them after a failure, and skips emit-only items', async () => {
    const items: VerifyItem[] = [
      { id: 'fails-first', type: 'command', when: ['after'], run: 'exit 1' },
      { id: 'emit-only-gate', type: 'gate', kind: 'confirm', when: ['emit'] },
      { id: 'report', type: 'artifact', when: ['emit', 'after'], path: 'report.md' },
      { id: 'no-validator', type: 'payload_schema', when: ['after'] },
      { id: 'passes-last', type: 'command', when: ['after'], run: 'true' },
    ];
    const results = await runAfterChecks(items, baseContext({ checkoutDir: dir, artifactsDir: dir }));
    expect(results.map((r) => [r.id, r.type, r.status])).toEqual([
      ['fails-first', 'command', 'failed'],
      ['report', 'artifact', 'passed'],
      ['no-validator', 'payload_schema', 'error'],
      ['passes-last', 'command', 'passed'],
    ]);
    for (const result of results) {
      expect(result.phase).toBe('after');
      expect(Date.parse(result.finished_at)).toBeGreaterThanOrEqual(Date.parse(result.started_at));
    }
  });

  it('turns an unknown check type into an error result instead of a crash', async () => {
    const rogue = { id: 'x', type: 'llm_review', when: ['after'] } as unknown as VerifyItem;
    const [result] = await runAfterChecks([rogue], baseContext());
    expect(result).toEqual(expect.objectContaining({ id: 'x', status: 'error', message: 'unknown check type "llm_review"' }));
  });
});
