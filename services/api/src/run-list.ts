import { listRuns, type ListRunsQuery, type RunPage } from '@stageflow/readmodels';
import { InvalidCommand, type RunStatus } from '@stageflow/domain';
import type { ReadModels } from './read-models';

const STATUSES: readonly RunStatus[] = ['running', 'waiting', 'succeeded', 'failed', 'stopped', 'error'];

/** `GET /api/runs`: filtered, cursor-paginated, from the read models (never with evidence). */
export class RunList {
  constructor(private readonly readModels: ReadModels) {}

  async list(query: { status?: string; pipeline?: string; since?: string; cursor?: string; limit: number }): Promise<RunPage> {
    if (query.status !== undefined && !STATUSES.includes(query.status as RunStatus)) {
      throw new InvalidCommand('query.status', `status must be one of ${STATUSES.join(', ')}`);
    }
    const q: ListRunsQuery = {
      limit: query.limit,
      ...(query.status ? { status: query.status as RunStatus } : {}),
      ...(query.pipeline ? { pipeline: query.pipeline } : {}),
      ...(query.since ? { since: query.since } : {}),
      ...(query.cursor ? { cursor: query.cursor } : {}),
    };
    try {
      return await listRuns(this.readModels.db, q);
    } catch (err) {
      if (err instanceof Error && err.name === 'InvalidCursorError') throw new InvalidCommand('query.cursor', err.message);
      throw err;
    }
  }
}
