import type { Kysely } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// The diff of each job's branch against its base, stored by the worker after a turn pushed (src/jobs/diff.ts):
// the API serves it without the git mirror, which lives with the workers.
export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  await db.schema
    .createTable('job_diffs')
    .addColumn('job_id', 'text', (c) => c.primaryKey().references('jobs.id'))
    .addColumn('base_sha', 'text', (c) => c.notNull())
    .addColumn('head_sha', 'text', (c) => c.notNull())
    .addColumn('files', 'text', (c) => c.notNull())
    .addColumn('diff', 'text', (c) => c.notNull())
    .addColumn('truncated', 'integer', (c) => c.notNull())
    .addColumn('updated_at', caps.bigintType, (c) => c.notNull())
    .execute();
}
