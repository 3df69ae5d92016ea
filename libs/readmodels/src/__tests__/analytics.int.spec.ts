import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { project } from '..';
import { scenario, TEST_SIGNATURES } from '../testing/scenario';
import { openTestDb, type TestDb } from '../testing/test-db';

jest.setTimeout(30_000);

let t: TestDb;
beforeAll(async () => {
  t = await openTestDb('rm_analytics');
  await project(t.db, scenario().messages, { signatures: TEST_SIGNATURES });
});
afterAll(() => t.drop());

const rows = async (query: string) => (await sql.raw<Record<string, unknown>>(query).execute(t.db)).rows;

describe('docs/analytics.md', () => {
  const doc = readFileSync(join(__dirname, '../../../../docs/analytics.md'), 'utf8');
  const examples = [...doc.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]);

  it('has example queries', () => expect(examples.length).toBeGreaterThanOrEqual(5));

  it.each(examples.map((q, i) => [i + 1, q]))('example %d runs', async (_n, query) => {
    await expect(rows(String(query))).resolves.toBeInstanceOf(Array);
  });
});

describe('analyst views', () => {
  it('v_check_pass_rate', async () => {
    expect(await rows('select check_type, checks, passed, failed, errored, pass_rate::float8 as pass_rate from v_check_pass_rate order by check_type')).toEqual([
      { check_type: 'artifact', checks: 1, passed: 1, failed: 0, errored: 0, pass_rate: 1 },
      { check_type: 'checklist', checks: 2, passed: 0, failed: 2, errored: 0, pass_rate: 0 },
      { check_type: 'checkout_changes', checks: 2, passed: 2, failed: 0, errored: 0, pass_rate: 1 },
      { check_type: 'command', checks: 3, passed: 1, failed: 1, errored: 1, pass_rate: 0.3333 },
      { check_type: 'gate', checks: 1, passed: 1, failed: 0, errored: 0, pass_rate: 1 },
    ]);
  });

  it('v_repair_success', async () => {
    expect(await rows('select pipeline, stage_id, reason, repair_attempts, repaired, success_rate::float8 as success_rate from v_repair_success order by stage_id')).toEqual([
      { pipeline: 'ship', stage_id: 'build', reason: 'repair', repair_attempts: 1, repaired: 1, success_rate: 1 },
      { pipeline: 'ship', stage_id: 'review', reason: 'manual_retry', repair_attempts: 1, repaired: 0, success_rate: 0 },
    ]);
  });

  it('v_attempts_per_verified_stage and v_time_to_verified_success', async () => {
    expect(await rows('select run_id, stage_id, verified_attempt, attempts from v_attempts_per_verified_stage order by stage_id')).toEqual([
      { run_id: 'run-a', stage_id: 'build', verified_attempt: 2, attempts: 2 },
      { run_id: 'run-a', stage_id: 'plan', verified_attempt: 1, attempts: 1 },
    ]);
    expect(await rows('select stage_id, seconds from v_time_to_verified_success order by stage_id')).toEqual([
      { stage_id: 'build', seconds: 15 },
      { stage_id: 'plan', seconds: 8 },
    ]);
  });

  it('event_archive keeps the events of one decision under its seq, in order', async () => {
    const expected = scenario()
      .messages.filter((m) => m.data.events.length > 1)
      .map((m) => ({ seq: m.seq, types: m.data.events.map((e) => e.type).join(',') }));
    expect(expected.length).toBeGreaterThan(0);
    expect(await rows(`select seq::int as seq, string_agg(type, ',' order by position) as types from event_archive group by seq having count(*) > 1 order by seq`)).toEqual(expected);
  });

  it('v_operator_wait', async () => {
    expect(await rows('select run_id, exchange_id, kind, decision, pending, wait_seconds, answered_by from v_operator_wait order by run_id')).toEqual([
      { run_id: 'run-a', exchange_id: 'x1', kind: 'confirm', decision: 'accept', pending: false, wait_seconds: 1, answered_by: 'alice' },
      { run_id: 'run-b', exchange_id: 'q1', kind: 'free_text', decision: null, pending: true, wait_seconds: null, answered_by: null },
    ]);
  });
});
