import { foldRun, summarizeRun } from '@stageflow/domain';
import type { StoredMessage } from '@stageflow/eventlog';
import { sql } from 'kysely';
import { getRunSummary, project, Projector, readCheckpoint, rebuild, UndecodableMessageError } from '..';
import { dumpTables, resetTables, type Dump } from '../testing/dump';
import { MemoryLog } from '../testing/memory-log';
import { BIG_STDOUT, scenario, type DecisionBatch, TEST_SIGNATURES } from '../testing/scenario';
import { openTestDb, type TestDb } from '../testing/test-db';

jest.setTimeout(60_000);

let t: TestDb;
const { runs, messages } = scenario();
const eventCount = messages.reduce((n, m) => n + m.data.events.length, 0);
let once: Dump;

beforeAll(async () => {
  t = await openTestDb('rm_proj');
  await project(t.db, messages, { signatures: TEST_SIGNATURES });
  once = await dumpTables(t.db);
});
afterAll(() => t.drop());

async function freshProjection(batches: readonly (readonly StoredMessage[])[]): Promise<Dump> {
  await resetTables(t.db);
  for (const batch of batches) await project(t.db, batch, { signatures: TEST_SIGNATURES });
  return dumpTables(t.db);
}

function cut(list: readonly StoredMessage[], at: readonly number[]): StoredMessage[][] {
  const points = [0, ...at, list.length];
  return points.slice(1).map((end, i) => list.slice(points[i], end));
}

describe('projection', () => {
  it('projects every run of the scenario and advances the checkpoint to the last sequence', () => {
    expect(messages.filter((m) => m.data.events.length > 1).length).toBeGreaterThanOrEqual(4);
    expect(once.runs).toHaveLength(3);
    expect(once.event_archive).toHaveLength(eventCount);
    expect(once.projector_checkpoints).toEqual([{ name: 'readmodels', last_seq: String(messages.length) }]);
  });

  it('builds each run summary from the tables equal to summarizeRun(foldRun(events))', async () => {
    await resetTables(t.db);
    await project(t.db, messages, { signatures: TEST_SIGNATURES });
    for (const events of runs) {
      const state = foldRun(events);
      expect(await getRunSummary(t.db, state.runId)).toEqual(summarizeRun(state));
      expect(await getRunSummary(t.db, state.runId, { includeEnvelopes: true })).toEqual(summarizeRun(state, { includeEnvelopes: true }));
    }
  });

  it('matches the domain summary after every prefix of the log', async () => {
    await resetTables(t.db);
    for (let i = 0; i < messages.length; i++) {
      await project(t.db, [messages[i]], { signatures: TEST_SIGNATURES });
      const runId = messages[i].data.events[0].runId;
      const events = messages.slice(0, i + 1).flatMap((m) => m.data.events).filter((e) => e.runId === runId);
      expect(await getRunSummary(t.db, runId, { includeEnvelopes: true })).toEqual(summarizeRun(foldRun(events), { includeEnvelopes: true }));
    }
  });

  it('skips redelivered messages: projecting the log again changes nothing', async () => {
    await freshProjection([messages]);
    const again = await project(t.db, messages, { signatures: TEST_SIGNATURES });
    expect(again).toEqual({ applied: 0, events: 0, skipped: messages.length, checkpoint: messages.length });
    for (const m of messages) await project(t.db, [m, m], { signatures: TEST_SIGNATURES });
    expect(await dumpTables(t.db)).toEqual(once);
  });

  it('keeps rows idempotent under a replay past the checkpoint, with or without the stored folds', async () => {
    await freshProjection([messages]);
    await sql`update projector_checkpoints set last_seq = 0`.execute(t.db);
    await project(t.db, messages, { signatures: TEST_SIGNATURES });
    expect(await dumpTables(t.db)).toEqual(once);
    await sql`update projector_checkpoints set last_seq = 0`.execute(t.db);
    await sql`delete from run_folds`.execute(t.db);
    await project(t.db, messages.slice(0, 17), { signatures: TEST_SIGNATURES });
    await project(t.db, messages.slice(17), { signatures: TEST_SIGNATURES });
    expect(await dumpTables(t.db)).toEqual(once);
  });

  it('projects every event applied twice (in its decision, and the decision again under a new sequence) to the same rows', async () => {
    const doubled: StoredMessage<DecisionBatch>[] = messages
      .flatMap((m) => [m, m])
      .map((m, i) => ({ ...m, seq: i + 1, data: { events: m.data.events.flatMap((e) => [e, e]) } }));
    const dump = await freshProjection([doubled]);
    const strip = (d: Dump): Dump => ({ ...d, event_archive: [], run_folds: [], projector_checkpoints: [] });
    // The last change to each run is the first copy of the event that made it: seq 2k-1 for original seq k.
    const onceWithDoubledSeqs = {
      ...once,
      runs: once.runs.map((r) => ({ ...(r as object), updated_seq: String(2 * Number((r as { updated_seq: string }).updated_seq) - 1) })),
    };
    expect(strip(dump)).toEqual(strip(onceWithDoubledSeqs));
    for (const events of runs) {
      const state = foldRun(events);
      expect(await getRunSummary(t.db, state.runId)).toEqual(summarizeRun(state));
    }
  });

  it('gives the same tables whatever the batch boundaries', async () => {
    const n = messages.length;
    const cuts: number[][] = [[], Array.from({ length: n - 1 }, (_, i) => i + 1), [1], [n - 1], [7, 8, 30], [3, 11, 19, 27, 35, n - 1]];
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let k = 0; k < 4; k++) cuts.push([...new Set(Array.from({ length: 5 }, () => 1 + Math.floor(random() * (n - 1))))].sort((a, b) => a - b));
    for (const at of cuts) expect(await freshProjection(cut(messages, at))).toEqual(once);
  });

  it('moves large evidence strings to evidence_blobs, stored once and referenced by digest', async () => {
    await freshProjection([messages]);
    const blobs = await t.db.selectFrom('evidence_blobs').selectAll().execute();
    const big = blobs.filter((b) => b.size === 10240);
    expect(big).toHaveLength(1);
    expect(big[0].content).toBe(BIG_STDOUT);
    const check = await t.db
      .selectFrom('checks')
      .select('evidence')
      .where('run_id', '=', 'run-a')
      .where('stage_id', '=', 'build')
      .where('attempt', '=', 1)
      .where('check_id', '=', 'tests')
      .executeTakeFirstOrThrow();
    expect(check.evidence).toMatchObject({ stdout: { $blob: big[0].digest }, literal: { $literal: { $blob: 'not-a-reference' } } });
    const archived = await sql<{ n: string }>`select count(*) as n from event_archive where body::text like ${'%' + big[0].digest + '%'}`.execute(t.db);
    expect(Number(archived.rows[0].n)).toBeGreaterThanOrEqual(3);
  });

  it('archives one row per event, keyed by its message sequence and position in the decision', async () => {
    const archive = once.event_archive as { seq: string; position: number; type: string }[];
    const expected = messages.flatMap((m) => m.data.events.map((e, position) => ({ seq: String(m.seq), position, type: e.type })));
    expect(archive.map(({ seq, position, type }) => ({ seq, position, type }))).toEqual(expected);
  });

  it('records a message with an event of an unknown version, passes it, and projects the rest (applied twice)', async () => {
    await freshProjection([messages.slice(0, 5)]);
    const bad = { seq: 100, subject: 'sf.evt.run.run-z', data: { events: [{ v: 99, type: 'RunRequested', runId: 'run-z' }] }, time: '' };
    await project(t.db, [messages[5], bad], { signatures: TEST_SIGNATURES });
    await project(t.db, [messages[5], bad], { signatures: TEST_SIGNATURES });
    expect(await readCheckpoint(t.db)).toBe(100);
    const recorded = await t.db.selectFrom('undecodable_messages').selectAll().execute();
    expect(recorded).toEqual([{ seq: '100', subject: 'sf.evt.run.run-z', run_id: 'run-z', reason: expect.stringMatching(/version 99/) }]);
    expect(await t.db.selectFrom('runs').select('run_id').where('run_id', '=', 'run-z').execute()).toEqual([]);
  });

  it('records a message that is not a decision batch, naming it, and the next message is projected', async () => {
    await freshProjection([messages.slice(0, 5)]);
    const bare = { seq: 6, subject: 'sf.evt.run.run-a', data: messages[5].data.events[0], time: '' };
    const next = { ...messages[6], seq: 7 };
    await project(t.db, [bare, next], { signatures: TEST_SIGNATURES });
    await project(t.db, [bare, next], { signatures: TEST_SIGNATURES });
    expect(await readCheckpoint(t.db)).toBe(7);
    const recorded = await t.db.selectFrom('undecodable_messages').select(['seq', 'reason']).execute();
    expect(recorded).toEqual([{ seq: '6', reason: 'message 6 on sf.evt.run.run-a: not a decision batch ({ events: [...] })' }]);
    expect(UndecodableMessageError.name).toBe('UndecodableMessageError');
  });

  it('a rebuild records the same undecodable messages as the live projection', async () => {
    const bare = { seq: messages.length + 1, subject: 'sf.evt.run.run-a', data: 'not json at all', time: '' };
    await resetTables(t.db);
    await project(t.db, [...messages, bare], { signatures: TEST_SIGNATURES });
    const live = await dumpTables(t.db);
    const log = new MemoryLog();
    for (const m of messages) await log.append(m.subject, m.data);
    await log.append(bare.subject, bare.data);
    await rebuild(t.db, log, { signatures: TEST_SIGNATURES });
    const rebuilt = await dumpTables(t.db, { omitColumns: { projector_checkpoints: ['updated_at'] } });
    expect(rebuilt.undecodable_messages).toEqual(live.undecodable_messages);
    expect(rebuilt.undecodable_messages).toHaveLength(1);
  });
});

describe('projector loop and rebuild', () => {
  it('follows the log live, reports lag, wakes on demand and stops gracefully', async () => {
    await resetTables(t.db);
    const log = new MemoryLog();
    for (const m of messages.slice(0, 20)) await log.append(m.subject, m.data);
    await log.append('sf.evt.idem.abc', { not: 'a run event' });
    const lags: number[] = [];
    const projector = new Projector(t.db, log, { batchSize: 7, pollMs: 5_000, onLag: (lag) => lags.push(lag), signatures: TEST_SIGNATURES });
    expect(await projector.lag()).toBe(21);
    projector.start();
    await waitFor(async () => (await projector.lag()) === 0);
    for (const m of messages.slice(20)) await log.append(m.subject, m.data);
    expect(await projector.lag()).toBe(messages.length - 20);
    projector.wake();
    await waitFor(async () => (await projector.lag()) === 0);
    await projector.stop();
    expect(projector.metrics()).toMatchObject({ lag: 0, messages: messages.length, events: eventCount, errors: 0 });
    expect(lags[lags.length - 1]).toBe(0);
    const live = await dumpTables(t.db, { exclude: ['event_archive', 'projector_checkpoints'] });

    const result = await rebuild(t.db, log, { batchSize: 9, signatures: TEST_SIGNATURES });
    expect(result).toMatchObject({ messages: messages.length, events: eventCount });
    expect(result.checkpoint).toBe(messages.length + 1);
    expect(await dumpTables(t.db, { exclude: ['event_archive', 'projector_checkpoints'] })).toEqual(live);
    const { event_archive: liveArchive } = await dumpTables(t.db);
    expect(liveArchive).toHaveLength(eventCount);
  });

  it('rebuilds to the same tables as live projection, from scratch and over stale rows', async () => {
    const log = new MemoryLog();
    for (const m of messages) await log.append(m.subject, m.data);
    await freshProjection([messages]);
    await sql`update runs set status = 'garbage'`.execute(t.db);
    await rebuild(t.db, log, { batchSize: 4, signatures: TEST_SIGNATURES });
    expect(await dumpTables(t.db)).toEqual(once);
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
