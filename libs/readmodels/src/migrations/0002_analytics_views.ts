/**
 * Analyst views over the read model (documented in docs/analytics.md). Views hold no data: a
 * rebuild of the tables refreshes them. Rates are numeric in [0, 1], rounded to 4 places.
 */
import { sql, type Kysely, type Migration } from 'kysely';

const views: Record<string, string> = {
  v_check_pass_rate: `
    select type as check_type,
           count(*)::int as checks,
           (count(*) filter (where status = 'passed'))::int as passed,
           (count(*) filter (where status = 'failed'))::int as failed,
           (count(*) filter (where status = 'error'))::int as errored,
           round((count(*) filter (where status = 'passed'))::numeric / count(*), 4) as pass_rate
      from checks
     group by type`,
  v_repair_success: `
    select r.pipeline, a.stage_id, a.reason,
           count(*)::int as repair_attempts,
           (count(*) filter (where a.disposition = 'passed'))::int as repaired,
           round((count(*) filter (where a.disposition = 'passed'))::numeric / count(*), 4) as success_rate
      from attempts a
      join runs r on r.run_id = a.run_id
     where a.reason in ('repair', 'manual_retry')
       and a.phase in ('verified', 'failed')
     group by r.pipeline, a.stage_id, a.reason`,
  v_attempts_per_verified_stage: `
    select s.run_id, r.pipeline, s.stage_id, e.attempt as verified_attempt,
           (select count(*) from attempts a
             where a.run_id = s.run_id and a.stage_id = s.stage_id and a.n <= e.attempt)::int as attempts
      from stages s
      join runs r on r.run_id = s.run_id
      join envelopes e on e.run_id = s.run_id and e.stage_id = s.stage_id and e.accepted
      join attempts va on va.run_id = s.run_id and va.stage_id = s.stage_id and va.n = e.attempt
     where s.status = 'succeeded' and va.disposition = 'passed'`,
  v_time_to_verified_success: `
    select s.run_id, r.pipeline, s.stage_id, e.attempt as verified_attempt,
           r.started_at as run_started_at, va.finished_at as verified_at,
           extract(epoch from (va.finished_at - r.started_at))::double precision as seconds
      from stages s
      join runs r on r.run_id = s.run_id
      join envelopes e on e.run_id = s.run_id and e.stage_id = s.stage_id and e.accepted
      join attempts va on va.run_id = s.run_id and va.stage_id = s.stage_id and va.n = e.attempt
     where s.status = 'succeeded' and va.disposition = 'passed' and va.finished_at is not null`,
  v_operator_wait: `
    select o.run_id, r.pipeline, o.stage_id, o.exchange_id, o.attempt, o.kind, o.decision,
           o.asked_at, o.answered_at, o.answered_by,
           o.answered_at is null as pending,
           extract(epoch from (o.answered_at - o.asked_at))::double precision as wait_seconds
      from operator_interactions o
      join runs r on r.run_id = o.run_id`,
};

export const analyticsViews: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    for (const [name, body] of Object.entries(views)) {
      await sql`create view ${sql.id(name)} as ${sql.raw(body)}`.execute(db);
    }
  },
  async down(db: Kysely<unknown>): Promise<void> {
    for (const name of Object.keys(views).reverse()) await sql`drop view if exists ${sql.id(name)}`.execute(db);
  },
};
