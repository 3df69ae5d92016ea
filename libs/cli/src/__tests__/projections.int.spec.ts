/**
 * `sf projections rebuild` against real runs: the engine runs hello and the CI example while its
 * background read models project live (into Postgres, and in the embedded default into PGlite);
 * a rebuild into a second schema then equals the live tables.
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { decideRequest, summarizeRun } from '@stageflow/domain';
import { parseAgentSpec } from '@stageflow/runtime';
import { createDb, getRunSummary, openReadModelDb, quoteIdent, readCheckpoint, rebuild, type Database } from '@stageflow/readmodels';
import { loadConfig, openInfrastructure, silentLogger, type StageflowConfig } from '@stageflow/runtime';
import { sql, type Kysely } from 'kysely';
import { dumpTables } from '../../../readmodels/src/testing/dump';
import { testDatabaseUrl } from '../../../readmodels/src/testing/test-db';
import { startEngine, type Engine } from '../engine';
import { followRun } from '../follow';
import { main } from '../main';
import type { Output } from '../output';
import { loadValidPipeline } from '../run-request';

jest.setTimeout(240_000);

const ROOT = path.resolve(__dirname, '../../../..');
const RUNS = [
  { pipeline: 'examples/hello/hello.pipeline.yaml', agent: 'examples/hello/agent.script.yaml', outcome: 'succeeded' },
  { pipeline: 'examples/ci/release-notes.pipeline.yaml', agent: 'examples/ci/agent.script.yaml', outcome: 'succeeded' },
  { pipeline: 'examples/ci/release-notes.pipeline.yaml', agent: 'examples/ci/agent.no-changes.script.yaml', outcome: 'succeeded' },
  { pipeline: 'examples/hello/hello.pipeline.yaml', agent: 'examples/ci/agent.no-changes.script.yaml', outcome: 'failed' },
] as const;

/** Runs each pipeline on its own engine (each with its agent) over one home; returns the run ids. */
async function runAll(config: StageflowConfig, readModels: { schema?: string; startDelayMs?: number }, runs: readonly (typeof RUNS)[number][] = RUNS): Promise<string[]> {
  const ids: string[] = [];
  for (const [i, spec] of runs.entries()) {
    const engine: Engine = await startEngine({ config, agent: parseAgentSpec(`script:${path.join(ROOT, spec.agent)}`), readModels, logger: silentLogger });
    try {
      expect(await engine.readModels.started).toBe(true);
      const runId = `run_rm_${i}_${randomBytes(4).toString('hex')}`;
      const pipeline = loadValidPipeline(path.join(ROOT, spec.pipeline));
      await engine.infra.runs.execute(runId, (state) =>
        decideRequest({ type: 'RequestRun', runId, pipeline, input: {}, checkout: { kind: 'fresh' }, requestedBy: 'test', now: new Date().toISOString() }, state),
      );
      expect((await followRun(engine.infra.runs, runId, () => undefined)).status).toBe(spec.outcome);
      ids.push(runId);
    } finally {
      await engine.stop();
    }
  }
  return ids;
}

const captured = (): Output & { stdout: string[]; stderr: string[] } => {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => void stdout.push(t), err: (t) => void stderr.push(t), isTTY: false };
};

function withEnv<T>(env: NodeJS.ProcessEnv, fn: () => Promise<T>): Promise<T> {
  const saved = { ...process.env };
  delete process.env.NATS_URL;
  delete process.env.DATABASE_URL;
  Object.assign(process.env, env);
  return fn().finally(() => {
    process.env = saved;
  });
}

describe('sf projections rebuild (Postgres at DATABASE_URL)', () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-projections-'));
  const live = `cli_live_${randomBytes(5).toString('hex')}`;
  const rebuilt = `cli_rebuilt_${randomBytes(5).toString('hex')}`;
  const config = loadConfig({ STAGEFLOW_HOME: home, DATABASE_URL: testDatabaseUrl() });
  const dbs: Kysely<Database>[] = [];
  const open = (schema: string) => {
    const db = createDb(testDatabaseUrl(), { schema, maxConnections: 2 });
    dbs.push(db);
    return db;
  };

  afterAll(async () => {
    for (const db of dbs) {
      await sql.raw(`drop schema if exists ${quoteIdent(live)} cascade; drop schema if exists ${quoteIdent(rebuilt)} cascade`).execute(db);
      await db.destroy();
    }
    fs.rmSync(home, { recursive: true, force: true });
  });

  it('projects real runs live, and a rebuild into a second schema equals the live tables', async () => {
    const ids = await runAll(config, { schema: live, startDelayMs: 0 });
    const liveDb = open(live);
    const infra = await openInfrastructure(config);
    try {
      for (const runId of ids) {
        const { state } = await infra.runs.load(runId);
        expect(await getRunSummary(liveDb, runId, { includeEnvelopes: true })).toEqual(summarizeRun(state, { includeEnvelopes: true }));
      }
      expect(await readCheckpoint(liveDb)).toBe(await infra.log.lastSequence());
    } finally {
      await infra.close();
    }

    const out = captured();
    const code = await withEnv({ STAGEFLOW_HOME: home, DATABASE_URL: testDatabaseUrl() }, () =>
      main(['node', 'sf', 'projections', 'rebuild', '--json', '--schema', rebuilt], out),
    );
    expect(out.stderr).toEqual([]);
    expect(code).toBe(0);
    const report = JSON.parse(out.stdout.join(''));
    const archived = await liveDb.selectFrom('event_archive').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    expect(report).toMatchObject({ database: 'postgres', schema: rebuilt, events: Number(archived.n) });
    expect(report.messages).toBeLessThan(report.events);
    expect(report.events_per_second).toBeGreaterThan(0);
    console.log(`[projections] rebuild of ${report.events} events (${report.messages} decisions): ${report.events_per_second} events/s`);

    expect(await dumpTables(open(rebuilt))).toEqual(await dumpTables(liveDb));
  });
});

describe('embedded default: read models in PGlite under STAGEFLOW_HOME', () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-projections-embedded-'));
  const config = loadConfig({ STAGEFLOW_HOME: home });
  afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

  it('the engine projects its runs in the background, and a rebuild there equals the live tables', async () => {
    const ids = await runAll(config, { startDelayMs: 0 }, [RUNS[1]]);
    const infra = await openInfrastructure(config);
    const pg = await openReadModelDb({ embeddedDir: path.join(home, 'postgres') });
    try {
      expect(pg.kind).toBe('embedded');
      const { state } = await infra.runs.load(ids[0]);
      expect(await getRunSummary(pg.db, ids[0], { includeEnvelopes: true })).toEqual(summarizeRun(state, { includeEnvelopes: true }));
      expect(await readCheckpoint(pg.db)).toBe(await infra.log.lastSequence());
      const live = await dumpTables(pg.db);
      await rebuild(pg.db, infra.log, { signatures: infra.runs.signatures });
      expect(await dumpTables(pg.db)).toEqual(live);
    } finally {
      await pg.close();
      await infra.close();
    }
    expect(fs.existsSync(path.join(home, 'postgres.lock'))).toBe(false);
  });
});
