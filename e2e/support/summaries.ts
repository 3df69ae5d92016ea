/** Reading run summaries in assertions. */
import type { RunSummary, StageSummary } from '@stageflow/domain';

export function stageOf(summary: RunSummary, id: string): StageSummary {
  const found = summary.stages.find((s) => s.id === id);
  if (!found) throw new Error(`no stage ${id} in ${JSON.stringify(summary)}`);
  return found;
}

export const statuses = (summary: RunSummary) => summary.stages.map((s) => [s.id, s.status]);
