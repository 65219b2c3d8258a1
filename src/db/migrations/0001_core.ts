import type { Kysely } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  await db.schema
    .createTable('projects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('repository', 'text', (c) => c.notNull())
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('model', 'text')
    .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('visitor_secret', 'text', (c) => c.notNull())
    .addColumn('created_at', caps.bigintType, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', caps.bigintType, (c) => c.notNull())
    .addColumn('last_used_at', caps.bigintType)
    .addColumn('revoked_at', caps.bigintType)
    .execute();
  await db.schema.createIndex('api_keys_project').on('api_keys').column('project_id').execute();
}
