import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { foldRun, summarizeRun } from '@stageflow/domain';
import { createDb, getRunSummary, getStageVerification, listRuns, migrateToLatest, project, startEmbeddedPostgres } from '..';
import { BIG_STDOUT, scenario } from '../testing/scenario';

jest.setTimeout(120_000);

describe('embedded Postgres (PGlite behind a local socket)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-pglite-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('migrates, projects and answers queries through pg, and keeps its data across a restart', async () => {
    const { runs, messages } = scenario();
    const dataDir = join(dir, 'pgdata');

    const first = await startEmbeddedPostgres({ dataDir });
    expect(first.url).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    let db = createDb(first.url, { maxConnections: first.maxConnections });
    try {
      await migrateToLatest(db);
      await project(db, messages.slice(0, 30));
      await project(db, messages.slice(30));
      expect(await getRunSummary(db, 'run-a', { includeEnvelopes: true })).toEqual(summarizeRun(foldRun(runs[0]), { includeEnvelopes: true }));
    } finally {
      await db.destroy();
      await first.stop();
    }

    const second = await startEmbeddedPostgres({ dataDir });
    db = createDb(second.url, { maxConnections: 1 });
    try {
      await migrateToLatest(db);
      for (const events of runs) {
        const state = foldRun(events);
        expect(await getRunSummary(db, state.runId)).toEqual(summarizeRun(state));
      }
      expect((await listRuns(db, { limit: 10 })).runs.map((r) => r.run_id)).toEqual(['run-c', 'run-b', 'run-a']);
      const v = await getStageVerification(db, 'run-a', 'build');
      expect(v?.attempts[0].checks[0].evidence.stdout).toBe(BIG_STDOUT);
      expect(await project(db, messages)).toMatchObject({ applied: 0, checkpoint: messages.length });
    } finally {
      await db.destroy();
      await second.stop();
    }
  });
});
