import type { Kysely } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// Dashboard sign-in (src/sessions/): server-side sessions behind an HttpOnly cookie, and one-time sign-in links.
export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', caps.bigintType, (c) => c.notNull())
    .addColumn('expires_at', caps.bigintType, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dashboard_sessions_expiry').on('dashboard_sessions').column('expires_at').execute();
  await db.schema
    .createTable('dashboard_signin_links')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id'))
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id'))
    .addColumn('created_at', caps.bigintType, (c) => c.notNull())
    .addColumn('expires_at', caps.bigintType, (c) => c.notNull())
    .addColumn('used_at', caps.bigintType)
    .execute();
  await db.schema.createIndex('dashboard_signin_links_expiry').on('dashboard_signin_links').column('expires_at').execute();
}
