import type { RunEvent } from '@stageflow/domain';
import { board, progressLine } from '../progress';

const base = { v: 1, runId: 'run-1', at: '2026-01-01T00:00:00.000Z' } as const;

describe('progressLine: who decided', () => {
  it('names the recorded operator, and what the caller claimed beside it', () => {
    expect(progressLine({ ...base, type: 'RunCancelled', by: 'api:ci' } as RunEvent)).toBe('✖ run stopped by api:ci');
    expect(progressLine({ ...base, type: 'StageRetryRequested', stageId: 'build', by: 'api:ci', claimedBy: 'cli:alice' } as RunEvent)).toBe('• build retry requested by api:ci (as cli:alice)');
  });
});

describe('refused verdicts and decisions', () => {
  it('are a progress line and a line under the board', () => {
    expect(progressLine({ ...base, type: 'SignatureRefused', refusedType: 'AttemptVerified', stageId: 'build', attempt: 2, reason: 'unsigned' })).toBe(
      '✖ AttemptVerified of build attempt 2 refused, not applied: unsigned',
    );
    const summary = { run_id: 'run-1', pipeline: 'p', status: 'failed', started_at: base.at, finished_at: null, labels: {}, stages: [] } as const;
    expect(board({ ...summary, security: [{ at: base.at, refused: 'RunCancelled', reason: 'key k is not trusted' }] }).split('\n').at(-1)).toBe(
      'security: RunCancelled refused (key k is not trusted); not applied',
    );
    expect(board(summary)).not.toMatch(/security/);
  });
});
