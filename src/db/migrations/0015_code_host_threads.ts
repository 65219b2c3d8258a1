import type { Kysely } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// The thread a job started or continued from a code-host comment replies in when a turn ends (src/code-host-events/).
export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  await db.schema
    .createTable('code_host_threads')
    .addColumn('job_id', 'text', (c) => c.primaryKey().references('jobs.id'))
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('repo', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('number', caps.bigintType, (c) => c.notNull())
    .addColumn('updated_at', caps.bigintType, (c) => c.notNull())
    .execute();
}
