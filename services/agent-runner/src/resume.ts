import type { StageState } from '@stageflow/domain';

/** How many operator answers an attempt has received: the `resume` of the job that continues it. */
export function answeredCount(stage: StageState, attempt: number): number {
  return stage.exchanges.filter((x) => x.attempt === attempt && x.answer).length;
}
