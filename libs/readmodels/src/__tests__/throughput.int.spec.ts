/**
 * Rebuild throughput against the test Postgres and against embedded PGlite. Prints events/s;
 * SF_BENCH_RUNS scales the log (default 100 runs of 32 events in 27 decisions each).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { createDb, getRunSummary, migrateToLatest, rebuild, startEmbeddedPostgres, type Database } from '..';
import { MemoryLog } from '../testing/memory-log';
import { decisions, shipRun, TEST_SIGNATURES } from '../testing/scenario';
import { openTestDb } from '../testing/test-db';

jest.setTimeout(600_000);

const RUNS = Number(process.env.SF_BENCH_RUNS ?? 100);

async function bigLog(): Promise<{ log: MemoryLog; events: number }> {
  const log = new MemoryLog();
  const runs = Array.from({ length: RUNS }, (_, i) =>
    decisions(shipRun(`bench-${i}`, new Date(Date.parse('2025-05-01T00:00:00.000Z') + i * 7_000).toISOString())),
  );
  // Interleave ~8 runs at a time, as concurrent runs appear in a real log.
  for (let g = 0; g < runs.length; g += 8) {
    const group = runs.slice(g, g + 8);
    for (let i = 0; i < Math.max(...group.map((r) => r.length)); i++) {
      for (const batches of group) if (batches[i]) await log.append(`sf.evt.run.${batches[i][0].runId}`, { events: batches[i] });
    }
  }
  return { log, events: runs.flat(2).length };
}

async function measure(label: string, db: Kysely<Database>, { log, events }: { log: MemoryLog; events: number }): Promise<number> {
  const result = await rebuild(db, log, { signatures: TEST_SIGNATURES });
  const rate = Math.round((result.events / result.ms) * 1000);
  console.log(
    `[readmodels] rebuild ${label}: ${result.events} events (${result.messages} decisions) in ${Math.round(result.ms)} ms = ${rate} events/s (${result.batches} batches)`,
  );
  expect(result).toMatchObject({ messages: log.messages.length, events });
  expect((await getRunSummary(db, `bench-${RUNS - 1}`))?.status).toBe('failed');
  return rate;
}

describe('rebuild throughput', () => {
  let log: { log: MemoryLog; events: number };
  beforeAll(async () => {
    log = await bigLog();
  });

  it('replays thousands of events per second into Postgres', async () => {
    const t = await openTestDb('rm_bench');
    try {
      expect(await measure('postgres', t.db, log)).toBeGreaterThan(1000);
    } finally {
      await t.drop();
    }
  });

  it('replays into embedded PGlite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sf-pglite-bench-'));
    const pg = await startEmbeddedPostgres({ dataDir: join(dir, 'data') });
    const db = createDb(pg.url, { maxConnections: 1 });
    try {
      await migrateToLatest(db);
      expect(await measure('embedded pglite', db, log)).toBeGreaterThan(200);
    } finally {
      await db.destroy();
      await pg.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
