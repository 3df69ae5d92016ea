import { foldRun, summarizeRun, type RunEvent } from '@stageflow/domain';
import { getEnvelope, getRunSummary, getStageVerification, InvalidCursorError, listRuns, project, type RunListItem } from '..';
import { BIG_STDOUT, clock, interleave, NUL_OUTPUT, pipelineOf, scenario, TEST_SIGNATURES } from '../testing/scenario';
import { openTestDb, type TestDb } from '../testing/test-db';

jest.setTimeout(60_000);

let t: TestDb;
const { runs, messages } = scenario();

/** 25 small runs: pipelines alpha/beta, outcomes succeeded/failed/running, several sharing a start time. */
function manyRuns(): RunEvent[][] {
  return Array.from({ length: 25 }, (_, i) => {
    const runId = `bulk-${String(i).padStart(2, '0')}`;
    const start = new Date(Date.parse('2025-04-01T00:00:00.000Z') + Math.floor(i / 3) * 60_000).toISOString();
    const at = clock(start);
    const base = { v: 1 as const, runId };
    const events: RunEvent[] = [
      { ...base, type: 'RunRequested', at: at(), pipeline: pipelineOf(i % 2 ? 'beta' : 'alpha', ['only']), input: {}, checkout: { kind: 'fresh' }, labels: { i: String(i) }, requestedBy: 'test' },
    ];
    if (i % 3 === 0) events.push({ ...base, type: 'RunSucceeded', at: at() });
    if (i % 3 === 1) events.push({ ...base, type: 'RunFailed', at: at(), reason: 'boom' });
    return events;
  });
}
const bulk = manyRuns();

beforeAll(async () => {
  t = await openTestDb('rm_query');
  await project(t.db, messages, { signatures: TEST_SIGNATURES });
  await project(t.db, interleave(bulk, messages.length + 1), { signatures: TEST_SIGNATURES });
});
afterAll(() => t.drop());

async function allPages(query: Parameters<typeof listRuns>[1]): Promise<{ items: RunListItem[]; pages: number }> {
  const items: RunListItem[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await listRuns(t.db, { ...query, cursor });
    items.push(...page.runs);
    cursor = page.next_cursor;
    pages += 1;
  } while (cursor && pages < 100);
  return { items, pages };
}

const expectedOrder = (events: RunEvent[][]) =>
  events
    .map((e) => foldRun(e))
    .sort((a, b) => (a.requestedAt === b.requestedAt ? (a.runId < b.runId ? 1 : -1) : a.requestedAt < b.requestedAt ? 1 : -1));

describe('listRuns', () => {
  it('pages through every run newest first, without repeats or gaps', async () => {
    const { items, pages } = await allPages({ limit: 4 });
    expect(pages).toBe(7);
    const expected = expectedOrder([...bulk, ...runs]).map((s) => s.runId);
    expect(items.map((r) => r.run_id)).toEqual(expected);
    const b = items.find((r) => r.run_id === 'bulk-04')!;
    expect(b).toEqual({ run_id: 'bulk-04', pipeline: 'alpha', status: 'failed', reason: 'boom', labels: { i: '4' }, started_at: '2025-04-01T00:01:00.000Z', finished_at: '2025-04-01T00:01:01.000Z' });
  });

  it('filters by status, pipeline and start time across pages', async () => {
    const failedAlpha = await allPages({ limit: 2, status: 'failed', pipeline: 'alpha' });
    const expected = expectedOrder(bulk).filter((s) => s.outcome === 'failed' && s.pipeline.id === 'alpha').map((s) => s.runId);
    expect(failedAlpha.items.map((r) => r.run_id)).toEqual(expected);
    expect(expected.length).toBeGreaterThan(2);

    const open = await allPages({ limit: 3, status: ['running', 'waiting'] });
    expect(open.items.every((r) => r.status === 'running' || r.status === 'waiting')).toBe(true);
    expect(open.items.map((r) => r.run_id)).toContain('run-b');

    const since = await allPages({ limit: 5, since: '2025-04-01T00:05:00.000Z' });
    expect(since.items.map((r) => r.run_id)).toEqual(['bulk-24', 'bulk-23', 'bulk-22', 'bulk-21', 'bulk-20', 'bulk-19', 'bulk-18', 'bulk-17', 'bulk-16', 'bulk-15']);
    expect((await listRuns(t.db, { status: [] })).runs).toEqual([]);
  });

  it('rejects a cursor it did not issue', async () => {
    await expect(listRuns(t.db, { cursor: 'garbage' })).rejects.toBeInstanceOf(InvalidCursorError);
    const forged = Buffer.from(JSON.stringify(["1; drop table runs", 'x'])).toString('base64url');
    await expect(listRuns(t.db, { cursor: forged })).rejects.toBeInstanceOf(InvalidCursorError);
  });
});

describe('getRunSummary', () => {
  it('equals the domain summary for every run, and is undefined for an unknown run', async () => {
    for (const events of [...runs, ...bulk]) {
      const state = foldRun(events);
      expect(await getRunSummary(t.db, state.runId, { includeEnvelopes: true })).toEqual(summarizeRun(state, { includeEnvelopes: true }));
    }
    const c = await getRunSummary(t.db, 'run-c');
    expect(c?.status).toBe('waiting');
    expect(c?.stages[0].waiting_for).toBe('recovery_decision');
    expect(await getRunSummary(t.db, 'nope')).toBeUndefined();
  });
});

describe('getStageVerification', () => {
  it('returns every attempt with its checks and full evidence, blob references resolved', async () => {
    const v = await getStageVerification(t.db, 'run-a', 'build');
    expect(v).toMatchObject({ run_id: 'run-a', stage_id: 'build', status: 'succeeded' });
    expect(v!.attempts.map((a) => [a.n, a.reason, a.disposition])).toEqual([[1, 'initial', 'failed'], [2, 'repair', 'passed']]);
    const tests = v!.attempts[0].checks[0];
    expect(tests).toMatchObject({ id: 'tests', type: 'command', status: 'failed', message: 'exit code 1' });
    expect(tests.evidence).toEqual({ exit_code: 1, stdout: BIG_STDOUT, stderr: NUL_OUTPUT, literal: { $blob: 'not-a-reference' } });
    const domain = foldRun(runs[0]).stages.build.attempts.map((a) => a.checks);
    expect(v!.attempts.map((a) => a.checks)).toEqual(domain);
    expect(v!.attempts[1].deadline_at).toBe('2025-03-01T11:00:00.000Z');
  });

  it('reports a stage with no attempts, and undefined for an unknown stage', async () => {
    expect(await getStageVerification(t.db, 'run-a', 'publish')).toEqual({ run_id: 'run-a', stage_id: 'publish', status: 'skipped', attempts: [] });
    expect(await getStageVerification(t.db, 'run-a', 'nope')).toBeUndefined();
  });
});

describe('getEnvelope', () => {
  it('returns the accepted envelope, else the last captured one, else undefined', async () => {
    expect(await getEnvelope(t.db, 'run-a', 'build')).toEqual({
      run_id: 'run-a', stage_id: 'build', attempt: 2, accepted: true,
      envelope: { status: 'success', summary: 'build-2', artifacts: ['build-2.md'], payload: { summary: 'build-2', n: 1 } },
    });
    expect(await getEnvelope(t.db, 'run-a', 'review')).toMatchObject({ attempt: 2, accepted: false, envelope: { summary: 'review-2' } });
    expect(await getEnvelope(t.db, 'run-c', 's1')).toMatchObject({ attempt: 1, accepted: false, envelope: { status: 'failure', summary: 's1-gave-up' } });
    expect(await getEnvelope(t.db, 'run-a', 'publish')).toBeUndefined();
  });
});
