/**
 * The read-model tables. Created in the schema on the connection's search_path (see
 * `createDb`), so tests and deployments can keep several read models side by side.
 */
import { sql, type Kysely, type Migration } from 'kysely';

const tstz = 'timestamptz' as const;

export const init: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('runs')
      .addColumn('run_id', 'text', (c) => c.primaryKey())
      .addColumn('pipeline', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('reason', 'text')
      .addColumn('labels', 'jsonb', (c) => c.notNull())
      .addColumn('idempotency_key', 'text')
      .addColumn('stage_order', 'jsonb', (c) => c.notNull())
      .addColumn('started_at', tstz, (c) => c.notNull())
      .addColumn('finished_at', tstz)
      .addColumn('updated_seq', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('runs_started_idx').on('runs').columns(['started_at desc', 'run_id desc']).execute();
    await db.schema.createIndex('runs_status_idx').on('runs').columns(['status', 'started_at desc']).execute();
    await db.schema.createIndex('runs_pipeline_idx').on('runs').columns(['pipeline', 'started_at desc']).execute();

    await db.schema
      .createTable('stages')
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('stage_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('skip_reason', 'text')
      .addColumn('skip_detail', 'text')
      .addColumn('failure_kind', 'text')
      .addColumn('failure', 'text')
      .addColumn('attempt_count', 'integer', (c) => c.notNull())
      .addColumn('pending_recovery_attempt', 'integer')
      .addColumn('started_at', tstz)
      .addColumn('finished_at', tstz)
      .addPrimaryKeyConstraint('stages_pk', ['run_id', 'stage_id'])
      .execute();

    await db.schema
      .createTable('attempts')
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('stage_id', 'text', (c) => c.notNull())
      .addColumn('n', 'integer', (c) => c.notNull())
      .addColumn('ordinal', 'integer', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('phase', 'text', (c) => c.notNull())
      .addColumn('disposition', 'text', (c) => c.notNull())
      .addColumn('failure', 'text')
      .addColumn('failure_kind', 'text')
      .addColumn('guidance', 'text')
      .addColumn('rejections', 'integer', (c) => c.notNull())
      .addColumn('reminders', 'integer', (c) => c.notNull())
      .addColumn('started_at', tstz, (c) => c.notNull())
      .addColumn('finished_at', tstz)
      .addColumn('deadline_at', tstz, (c) => c.notNull())
      .addPrimaryKeyConstraint('attempts_pk', ['run_id', 'stage_id', 'n'])
      .execute();

    await db.schema
      .createTable('checks')
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('stage_id', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('check_id', 'text', (c) => c.notNull())
      .addColumn('ordinal', 'integer', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('phase', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('message', 'text')
      .addColumn('evidence', 'jsonb', (c) => c.notNull())
      .addColumn('started_at', tstz, (c) => c.notNull())
      .addColumn('finished_at', tstz, (c) => c.notNull())
      .addPrimaryKeyConstraint('checks_pk', ['run_id', 'stage_id', 'attempt', 'ordinal'])
      .execute();
    await db.schema.createIndex('checks_type_idx').on('checks').columns(['type', 'status']).execute();

    await db.schema
      .createTable('evidence_blobs')
      .addColumn('digest', 'text', (c) => c.primaryKey())
      .addColumn('encoding', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('content', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('operator_interactions')
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('stage_id', 'text', (c) => c.notNull())
      .addColumn('exchange_id', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('question', 'text', (c) => c.notNull())
      .addColumn('question_detail', 'jsonb', (c) => c.notNull())
      .addColumn('answer', 'jsonb')
      .addColumn('decision', 'text')
      .addColumn('asked_at', tstz, (c) => c.notNull())
      .addColumn('answered_at', tstz)
      .addColumn('answered_by', 'text')
      .addPrimaryKeyConstraint('operator_interactions_pk', ['run_id', 'stage_id', 'exchange_id'])
      .execute();

    await db.schema
      .createTable('recovery_decisions')
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('stage_id', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('opened_at', tstz, (c) => c.notNull())
      .addColumn('decision', 'text')
      .addColumn('guidance', 'text')
      .addColumn('decided_by', 'text')
      .addColumn('decided_at', tstz)
      .addPrimaryKeyConstraint('recovery_decisions_pk', ['run_id', 'stage_id', 'attempt'])
      .execute();

    await db.schema
      .createTable('envelopes')
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('stage_id', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('envelope', 'jsonb', (c) => c.notNull())
      .addColumn('accepted', 'boolean', (c) => c.notNull())
      .addPrimaryKeyConstraint('envelopes_pk', ['run_id', 'stage_id', 'attempt'])
      .execute();

    await db.schema
      .createTable('event_archive')
      .addColumn('seq', 'bigint', (c) => c.primaryKey())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('run_id', 'text', (c) => c.notNull())
      .addColumn('at', tstz, (c) => c.notNull())
      .addColumn('body', 'jsonb', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('event_archive_run_idx').on('event_archive').columns(['run_id', 'seq']).execute();
    await db.schema.createIndex('event_archive_type_idx').on('event_archive').columns(['type', 'at']).execute();

    await db.schema
      .createTable('run_folds')
      .addColumn('run_id', 'text', (c) => c.primaryKey())
      .addColumn('last_seq', 'bigint', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('projector_checkpoints')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('last_seq', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', tstz, (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    for (const table of [
      'projector_checkpoints', 'run_folds', 'event_archive', 'envelopes', 'recovery_decisions',
      'operator_interactions', 'evidence_blobs', 'checks', 'attempts', 'stages', 'runs',
    ]) {
      await db.schema.dropTable(table).ifExists().execute();
    }
  },
};
