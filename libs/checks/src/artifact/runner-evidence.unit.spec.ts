import { judgeRunnerEvidence } from './runner-evidence';

describe('judgeRunnerEvidence', () => {
  it.each([
    ['node:test TAP', 'TAP version 13\nok 1 - a\n1..1\n# tests 1\n# pass 1\n# fail 0\n# cancelled 0\n# duration_ms 3\n', 'node_test', 'passed'],
    ['node:test TAP failing', '# tests 2\n# pass 1\n# fail 1\n# skipped 0\n', 'node_test', 'failed'],
    ['node:test spec reporter', 'ℹ tests 3\nℹ pass 3\nℹ fail 0\nℹ duration_ms 9\n', 'node_test', 'passed'],
    ['jest', 'PASS src/a.test.ts\nTest Suites: 1 passed, 1 total\nTests:       3 passed, 3 total\nSnapshots:   0 total\nTime: 1 s\n', 'jest', 'passed'],
    ['jest failing', 'Tests:       1 failed, 2 passed, 3 total\nTime: 1 s\n', 'jest', 'failed'],
    ['vitest', ' Test Files  1 passed (1)\n      Tests  4 passed (4)\n   Start at  10:00:00\n', 'vitest', 'passed'],
    ['vitest failing', '      Tests  1 failed | 3 passed (4)\n', 'vitest', 'failed'],
    ['mocha', '  3 passing (12ms)\n', 'mocha', 'passed'],
    ['mocha failing', '  3 passing (12ms)\n  1 failing\n\n  1) suite\n     AssertionError\n', 'mocha', 'failed'],
    ['pytest', '============ 5 passed in 0.12s ============\n', 'pytest', 'passed'],
    ['pytest failing', '===== 1 failed, 4 passed in 0.31s =====\n', 'pytest', 'failed'],
    ['go test', '=== RUN   TestA\n--- PASS: TestA (0.00s)\nPASS\nok  \texample.com/pkg\t0.012s\n', 'go_test', 'passed'],
    ['go test failing', '--- FAIL: TestA (0.00s)\nFAIL\nexit status 1\nFAIL\texample.com/pkg\t0.01s\n', 'go_test', 'failed'],
    ['recorded exit code', '$ make check\n...\nexit code: 0\n', 'exit_code', 'passed'],
    ['recorded failing exit code', 'exit code: 2\n', 'exit_code', 'failed'],
    ['ANSI coloured jest', '\u001b[1mTests:\u001b[22m       \u001b[32m2 passed\u001b[39m, 2 total\n', 'jest', 'passed'],
  ])('%s', (_name, text, runner, outcome) => {
    expect(judgeRunnerEvidence(text)).toEqual(expect.objectContaining({ runner, outcome }));
  });

  it('judges a two-sided proof by its LAST result', () => {
    const text = [
      '## Red: the test fails without the fix',
      'Tests:       1 failed, 1 total',
      '## Green: with the fix',
      'Tests:       1 passed, 1 total',
    ].join('\n');
    expect(judgeRunnerEvidence(text)).toEqual({ runner: 'jest', outcome: 'passed', line: 'Tests:       1 passed, 1 total', line_number: 4 });
    expect(judgeRunnerEvidence(`${text}\nexit code: 1\n`)?.outcome).toBe('failed');
  });

  it.each([['ok'], ['All tests passed!'], ['tests pass, trust me'], ['']])('finds no runner in %j', (text) => {
    expect(judgeRunnerEvidence(text)).toBeUndefined();
  });
});
