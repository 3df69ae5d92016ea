/**
 * Whether a file holds a real test runner's own summary. The file is judged by its LAST result
 * line, so a two-sided proof (a deliberately failing run, then the passing one) reads as passed.
 * Recognised: node:test (`# pass N` / `# fail N`, TAP or `ℹ` reporter), jest (`Tests: …`), vitest
 * (`Tests  … (N)`), mocha (`N passing` / `N failing`), pytest (`… N passed in 0.1s`), go test
 * (`ok  pkg`, `FAIL`, `PASS`), and a recorded exit code (`exit code: 0`, `exit status 1`).
 */

export type Runner = 'node_test' | 'jest' | 'vitest' | 'mocha' | 'pytest' | 'go_test' | 'exit_code';

export interface RunnerFinding {
  readonly runner: Runner;
  readonly outcome: 'passed' | 'failed';
  /** The deciding line, trimmed, at most 200 characters. */
  readonly line: string;
  /** 1-based. */
  readonly line_number: number;
}

type Outcome = RunnerFinding['outcome'];

interface Rule {
  readonly runner: Runner;
  readonly pattern: RegExp;
  readonly outcome: (match: RegExpExecArray) => Outcome;
}

const count = (text: string, word: string): number => {
  const match = new RegExp(`(\\d+)\\s+${word}`).exec(text);
  return match === null ? 0 : Number(match[1]);
};
const passedUnlessFailures = (summary: string): Outcome =>
  count(summary, 'failed') + count(summary, 'errors?') > 0 || count(summary, 'passed') === 0 ? 'failed' : 'passed';

// ANSI colour codes are stripped before matching.
const RULES: readonly Rule[] = [
  { runner: 'node_test', pattern: /^(?:#|ℹ)\s*fail\s+(\d+)\s*$/, outcome: (m) => (Number(m[1]) === 0 ? 'passed' : 'failed') },
  { runner: 'node_test', pattern: /^(?:#|ℹ)\s*pass\s+(\d+)\s*$/, outcome: (m) => (Number(m[1]) > 0 ? 'passed' : 'failed') },
  { runner: 'jest', pattern: /^Tests:\s+(.*\d+\s+total)\s*$/, outcome: (m) => passedUnlessFailures(m[1]!) },
  { runner: 'vitest', pattern: /^\s*Tests\s+(.*\d+\s+(?:passed|failed).*)\(\d+\)\s*$/, outcome: (m) => passedUnlessFailures(m[1]!) },
  { runner: 'mocha', pattern: /^\s*(\d+)\s+failing\s*$/, outcome: (m) => (Number(m[1]) === 0 ? 'passed' : 'failed') },
  { runner: 'mocha', pattern: /^\s*(\d+)\s+passing(?:\s+\(\d+m?s\))?\s*$/, outcome: (m) => (Number(m[1]) > 0 ? 'passed' : 'failed') },
  { runner: 'pytest', pattern: /^=*\s*(.*\d+\s+(?:passed|failed|errors?).*?)\s+in\s+[\d.]+s.*$/, outcome: (m) => passedUnlessFailures(m[1]!) },
  { runner: 'go_test', pattern: /^ok\s+\S+/, outcome: () => 'passed' },
  { runner: 'go_test', pattern: /^PASS\s*$/, outcome: () => 'passed' },
  { runner: 'go_test', pattern: /^FAIL(?:\s|$)/, outcome: () => 'failed' },
  { runner: 'exit_code', pattern: /\bexit(?:[ _-]?code|[ _-]status)\s*[:=]?\s*(\d+)\b/i, outcome: (m) => (Number(m[1]) === 0 ? 'passed' : 'failed') },
];

const ANSI = /\u001b\[[0-9;]*m/g;

export function judgeRunnerEvidence(text: string): RunnerFinding | undefined {
  const lines = text.split(/\r?\n/);
  for (let index = lines.length - 1; index >= 0; index--) {
    const line = lines[index]!.replace(ANSI, '');
    for (const rule of RULES) {
      const match = rule.pattern.exec(line);
      if (match !== null) {
        return { runner: rule.runner, outcome: rule.outcome(match), line: line.trim().slice(0, 200), line_number: index + 1 };
      }
    }
  }
  return undefined;
}
