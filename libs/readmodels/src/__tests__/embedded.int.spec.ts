import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { foldRun, summarizeRun } from '@stageflow/domain';
import {
  createDb,
  EmbeddedPostgresBusyError,
  EmbeddedPostgresError,
  getRunSummary,
  getStageVerification,
  listRuns,
  migrateToLatest,
  project,
  startEmbeddedPostgres,
} from '..';
import { BIG_STDOUT, scenario, TEST_SIGNATURES } from '../testing/scenario';

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
      await project(db, messages.slice(0, 30), { signatures: TEST_SIGNATURES });
      await project(db, messages.slice(30), { signatures: TEST_SIGNATURES });
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
      expect(await project(db, messages, { signatures: TEST_SIGNATURES })).toMatchObject({ applied: 0, checkpoint: messages.length });
    } finally {
      await db.destroy();
      await second.stop();
    }
  });
});

describe('embedded Postgres: one server per data directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-pglite-lock-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a data directory another live process serves, naming it', async () => {
    const dataDir = join(dir, 'busy');
    writeFileSync(`${dataDir}.lock`, JSON.stringify({ owner: process.ppid }));
    const start = startEmbeddedPostgres({ dataDir });
    await expect(start).rejects.toBeInstanceOf(EmbeddedPostgresBusyError);
    await expect(startEmbeddedPostgres({ dataDir })).rejects.toThrow(`embedded Postgres in ${dataDir}: in use by process ${process.ppid}`);
  });

  const waitGone = async (file: string) => {
    const until = Date.now() + 120_000;
    while (existsSync(file) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    return !existsSync(file);
  };

  it('an aborted first start still initializes the directory (then exits); an aborted later start is killed', async () => {
    const dataDir = join(dir, 'aborted');
    const first = new AbortController();
    const start = startEmbeddedPostgres({ dataDir, signal: first.signal });
    first.abort();
    await expect(start).rejects.toBeInstanceOf(EmbeddedPostgresError);
    expect(await waitGone(`${dataDir}.lock`)).toBe(true);
    expect(existsSync(`${dataDir}.initializing`)).toBe(false);
    expect(readdirSync(dataDir)).toContain('PG_VERSION');

    const later = new AbortController();
    const again = startEmbeddedPostgres({ dataDir, signal: later.signal });
    later.abort();
    await expect(again).rejects.toBeInstanceOf(EmbeddedPostgresError);
    expect(await waitGone(`${dataDir}.lock`)).toBe(true);
    const pg = await startEmbeddedPostgres({ dataDir });
    await pg.stop();
    expect(existsSync(`${dataDir}.lock`)).toBe(false);
  });

  it('initializes afresh a directory whose first initialization was cut short', async () => {
    const dataDir = join(dir, 'half');
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'half-written'), 'x');
    writeFileSync(`${dataDir}.initializing`, '');
    const pg = await startEmbeddedPostgres({ dataDir });
    try {
      expect(readdirSync(dataDir)).not.toContain('half-written');
      expect(existsSync(`${dataDir}.initializing`)).toBe(false);
    } finally {
      await pg.stop();
    }
  });
});
