import type { Kysely } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// Deliveries received from code hosts (src/code-host-events/): a redelivery of one id acts once.
export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  await db.schema
    .createTable('code_host_deliveries')
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('received_at', caps.bigintType, (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('job_id', 'text')
    .addColumn('reason', 'text')
    .addPrimaryKeyConstraint('code_host_deliveries_pk', ['project_id', 'host', 'delivery_id'])
    .execute();
}
