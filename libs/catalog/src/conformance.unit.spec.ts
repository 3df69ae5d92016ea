import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CatalogIssue } from './issues';
import { loadPipeline } from './loadPipeline';
import { loadStageFile } from './loadStageFile';

/** The reference system's verdicts on its own fixtures (see README.md in that folder). */
const CORPUS = path.resolve(__dirname, '..', '..', '..', '..', 'shared', 'peer', 'stageflow');

interface Case {
  readonly ok: boolean;
  readonly codes: readonly string[];
  readonly absent_codes?: readonly string[];
  readonly messages?: readonly string[];
  readonly messages_are_regex?: boolean;
  readonly stage_id?: string;
  readonly kind?: 'stage';
  readonly level?: 'validate';
}

const cases = JSON.parse(fs.readFileSync(path.join(CORPUS, 'cases.json'), 'utf8')) as Record<string, Case>;

function load(file: string, expected: Case, strict: boolean): { ok: boolean; errors: CatalogIssue[]; warnings: CatalogIssue[] } {
  return expected.kind === 'stage' ? loadStageFile(file, { strict }) : loadPipeline(file, { strict, projectRoot: CORPUS });
}

describe('conformance with the reference system (cases.json)', () => {
  it('has the corpus', () => {
    expect(Object.keys(cases)).toHaveLength(165);
  });

  it.each(Object.entries(cases))('%s', (relative, expected) => {
    const result = load(path.join(CORPUS, relative), expected, false);
    const reported = expected.ok ? result.warnings : result.errors;
    const all = [...result.errors, ...result.warnings];
    const summary = all.map((issue) => `${issue.code}: ${issue.message}`).join('\n');
    expect({ ok: result.ok, summary }).toEqual({ ok: expected.ok, summary });
    for (const code of expected.codes) expect(reported.map((issue) => issue.code)).toContain(code);
    for (const code of expected.absent_codes ?? []) expect(all.map((issue) => issue.code)).not.toContain(code);
    const text = all.map((issue) => issue.message).join('\n');
    for (const message of expected.messages ?? []) {
      if (expected.messages_are_regex === true) expect(text).toMatch(new RegExp(message));
      else expect(text.toLowerCase()).toContain(message.toLowerCase());
    }
    if (expected.stage_id !== undefined) {
      const routeIf = result.errors.filter((issue) => issue.code === 'pipeline.route_if_invalid');
      expect(routeIf.map((issue) => issue.stage_id)).toContain(expected.stage_id);
    }
    for (const issue of all) expect(path.isAbsolute(issue.file)).toBe(true);
  });

  it.each(Object.entries(cases).filter(([, expected]) => expected.ok))('%s stays valid under --strict', (relative, expected) => {
    expect(load(path.join(CORPUS, relative), expected, true).ok).toBe(true);
  });
});
