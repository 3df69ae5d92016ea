import { statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { baseContext, tempDir } from './__tests__/support.spec';
import { runAfterChecks } from './after/run-after-checks';
import type { VerifyItem } from './domain';
import { checkRequiredOutputs, formatSelfCheck } from './self-check';

const dir = tempDir('self-check');
const items: VerifyItem[] = [
  { id: 'report', type: 'artifact', when: ['after'], path: 'report.md', nonempty: true, sections: ['Summary'] },
  { id: 'tests', type: 'artifact', when: ['after'], path: 'test-output.txt', runner_evidence: true },
  { id: 'emit-only', type: 'artifact', when: ['emit'], basename: 'elsewhere.md' },
  { id: 'cmd', type: 'command', when: ['after'], run: 'true' },
];

describe('checkRequiredOutputs', () => {
  it('is ok when every after-phase artifact is present, fresh and valid', async () => {
    const startedAt = Date.now();
    writeFileSync(join(dir, 'report.md'), '## Summary\nok\n');
    writeFileSync(join(dir, 'test-output.txt'), '# pass 3\n# fail 0\n');
    const result = await checkRequiredOutputs({ items, artifactsDir: dir, attemptStartedAt: startedAt });
    expect(result).toEqual({ ok: true, problems: [], checked: ['report (report.md)', 'tests (test-output.txt)'] });
    expect(formatSelfCheck(result)).toBe('All 2 required output(s) are present, written by this attempt and valid:\n  ok  report (report.md)\n  ok  tests (test-output.txt)\n');
  });

  it('names a missing, an invalid and a stale output', async () => {
    const startedAt = Date.now();
    writeFileSync(join(dir, 'report.md'), 'Summary: prose only\n');
    writeFileSync(join(dir, 'test-output.txt'), 'Tests:       3 passed, 3 total\n');
    const hourAgo = new Date(startedAt - 3600_000);
    utimesSync(join(dir, 'test-output.txt'), hourAgo, hourAgo);
    const result = await checkRequiredOutputs({ items: [...items, { id: 'plan', type: 'artifact', when: ['after'], path: 'plan.md' }], artifactsDir: dir, attemptStartedAt: new Date(startedAt) });
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual([
      'report: report.md lacks section heading(s): Summary',
      'tests: test-output.txt was not written by this attempt',
      'plan: plan.md is missing (plan.md does not exist)',
    ]);
    expect(formatSelfCheck(result)).toContain('3 problem(s) with required outputs:\n  - report: report.md lacks section heading(s): Summary\n');
  });

  it('judges freshness against baseline file times', async () => {
    writeFileSync(join(dir, 'report.md'), '# Summary\nx\n');
    writeFileSync(join(dir, 'test-output.txt'), 'exit code: 0\n');
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'report.md'), old, old);
    const baselineMtimes = { 'report.md': statSync(join(dir, 'report.md')).mtimeMs };
    const result = await checkRequiredOutputs({ items, artifactsDir: dir, baselineMtimes });
    expect(result.problems).toEqual(['report: report.md was not written by this attempt']);
    const rewritten = new Date(Date.now());
    utimesSync(join(dir, 'report.md'), rewritten, rewritten);
    expect((await checkRequiredOutputs({ items, artifactsDir: dir, baselineMtimes })).ok).toBe(true);
  });

  it('agrees with the after-phase artifact check (one derivation)', async () => {
    writeFileSync(join(dir, 'report.md'), 'no headings at all\n');
    writeFileSync(join(dir, 'test-output.txt'), '1 failing\n');
    const self = await checkRequiredOutputs({ items, artifactsDir: dir, attemptStartedAt: 0 });
    const verifier = await runAfterChecks(items.filter((item) => item.type === 'artifact'), baseContext({ artifactsDir: dir }));
    expect(verifier.map((r) => r.status)).toEqual(['failed', 'failed']);
    expect(self.problems).toEqual(verifier.map((r) => `${r.id}: ${r.message}`));
  });

  it('reports a stage without required outputs', () => {
    expect(formatSelfCheck({ ok: true, problems: [], checked: [] })).toBe('No required outputs are declared for this stage.\n');
  });
});
