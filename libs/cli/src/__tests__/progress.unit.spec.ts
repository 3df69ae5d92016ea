import type { RunEvent } from '@stageflow/domain';
import { progressLine } from '../progress';

const base = { v: 1, runId: 'run-1', at: '2026-01-01T00:00:00.000Z' } as const;

describe('progressLine: who decided', () => {
  it('names the recorded operator, and what the caller claimed beside it', () => {
    expect(progressLine({ ...base, type: 'RunCancelled', by: 'api:ci' } as RunEvent)).toBe('✖ run stopped by api:ci');
    expect(progressLine({ ...base, type: 'StageRetryRequested', stageId: 'build', by: 'api:ci', claimedBy: 'cli:alice' } as RunEvent)).toBe('• build retry requested by api:ci (as cli:alice)');
  });
});
