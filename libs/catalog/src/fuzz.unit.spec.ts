import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { validateText } from '../test/validateText';
import { parseYamlText } from './yamlSource';
import type { CatalogIssue } from './issues';

const PIPELINES = path.resolve(__dirname, '..', 'test', 'fixtures', 'project', 'pipelines');
const STAGES = {
  './stages/plan.yaml': fs.readFileSync(path.join(PIPELINES, 'stages', 'plan.yaml'), 'utf8'),
  './stages/implement.yaml': fs.readFileSync(path.join(PIPELINES, 'stages', 'implement.yaml'), 'utf8'),
};
const GOOD = fs.readFileSync(path.join(PIPELINES, 'good.pipeline.yaml'), 'utf8');
const GOOD_VALUE = (parseYamlText(GOOD) as { value: unknown }).value;

function expectTypedIssues(issues: readonly CatalogIssue[]): void {
  for (const issue of issues) {
    expect(typeof issue.code).toBe('string');
    expect(issue.code).toMatch(/^[a-z]+\.[a-z_]+$/);
    expect(typeof issue.message).toBe('string');
    expect(typeof issue.path).toBe('string');
  }
}

/** Replaces the node at a random path of `value` with `replacement`. */
function mutateAt(value: unknown, choices: readonly number[], replacement: unknown): unknown {
  if (choices.length === 0 || typeof value !== 'object' || value === null) return replacement;
  const keys = Object.keys(value);
  if (keys.length === 0) return replacement;
  const key = keys[choices[0] % keys.length];
  const copy: Record<string, unknown> | unknown[] = Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) };
  (copy as Record<string, unknown>)[key] = mutateAt((value as Record<string, unknown>)[key], choices.slice(1), replacement);
  return copy;
}

describe('fuzzing valid pipelines yields only typed issues', () => {
  jest.setTimeout(60_000);
  it('the fixture itself is valid', () => {
    expect(validateText(GOOD, STAGES).errors).toEqual([]);
  });

  it('structural mutations (a node replaced by arbitrary JSON)', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), (choices, replacement) => {
        const text = stringify(mutateAt(GOOD_VALUE, choices, replacement));
        const result = validateText(text, STAGES);
        expectTypedIssues([...result.errors, ...result.warnings]);
        expect(result.pipeline === undefined).toBe(result.errors.length > 0);
      }),
      { numRuns: 1000 },
    );
  });

  it('textual mutations (bytes cut, inserted or replaced)', () => {
    fc.assert(
      fc.property(fc.nat(GOOD.length), fc.nat(40), fc.string({ maxLength: 12 }), (start, cut, insert) => {
        const text = GOOD.slice(0, start) + insert + GOOD.slice(start + cut);
        const result = validateText(text, STAGES);
        expectTypedIssues([...result.errors, ...result.warnings]);
      }),
      { numRuns: 1000 },
    );
  });
});
