import type { RunStatus } from '@stageflow/domain';

/** 0: run succeeded; 1: failed, stopped, error (a message about it was dead-lettered), or invalid input; 2: waiting on an operator. */
export function exitCodeFor(status: RunStatus): 0 | 1 | 2 {
  switch (status) {
    case 'succeeded':
      return 0;
    case 'waiting':
      return 2;
    case 'failed':
    case 'stopped':
    case 'error':
    case 'running':
      return 1;
    default: {
      const unreachable: never = status;
      throw new Error(`unknown run status ${String(unreachable)}`);
    }
  }
}
