import type { Kysely } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// Agent jobs: the job rows (with the run lease), the queue of turns, and the per-job event log.
export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('repository', 'text', (c) => c.notNull())
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('branch', 'text', (c) => c.notNull())
    .addColumn('draft', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('pr_url', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('input_tokens', caps.bigintType, (c) => c.notNull().defaultTo(0))
    .addColumn('output_tokens', caps.bigintType, (c) => c.notNull().defaultTo(0))
    .addColumn('conversation', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('event_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', caps.bigintType)
    .addColumn('created_at', caps.bigintType, (c) => c.notNull())
    .addColumn('updated_at', caps.bigintType, (c) => c.notNull())
    .addColumn('archived_at', caps.bigintType)
    .execute();
  await db.schema.createIndex('jobs_project_created').on('jobs').columns(['project_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('jobs_status_lease').on('jobs').columns(['status', 'lease_expires_at']).execute();

  await caps
    .autoIdColumn(db.schema.createTable('job_turns'), 'id')
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id'))
    .addColumn('turn_no', 'integer', (c) => c.notNull())
    .addColumn('prompt', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', caps.bigintType, (c) => c.notNull())
    .addColumn('started_at', caps.bigintType)
    .addColumn('finished_at', caps.bigintType)
    .addUniqueConstraint('job_turns_job_turn', ['job_id', 'turn_no'])
    .execute();

  await caps
    .autoIdColumn(db.schema.createTable('job_events'), 'id')
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('at', caps.bigintType, (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addUniqueConstraint('job_events_job_seq', ['job_id', 'seq'])
    .execute();
}
