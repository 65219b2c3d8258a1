import type { Kysely } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// Webhook deliveries: the outbox the dispatcher drains, and the delivery log.
export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', caps.bigintType)
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', caps.bigintType, (c) => c.notNull())
    .addColumn('updated_at', caps.bigintType, (c) => c.notNull())
    .addColumn('delivered_at', caps.bigintType)
    .execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_project').on('webhook_deliveries').columns(['project_id', 'created_at']).execute();
}
