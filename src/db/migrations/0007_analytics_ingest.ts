import type { Kysely } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// Narrower raw events for ingest throughput (see src/analytics/store/tables.ts):
// - `analytics_user_agents`: a per-project dictionary of user agents (sha256 of the text → id). New raw
//   events store `ua_id` and leave `user_agent` null, which takes the largest column out of every row.
//   Rows stored before keep their `user_agent` text (and a null `ua_id`); readers take whichever is set.
// - From now on `raw_path` is '' when the path as sent equals its normalised form (the path dictionary has
//   it). A raw path is never empty (the ingest schema requires at least one character), so '' is unambiguous.
// Nothing existing is rewritten: the migration is instant on any amount of data.
export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  await caps
    .autoIdColumn(db.schema.createTable('analytics_user_agents'), 'id')
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('ua_hash', 'text', (c) => c.notNull())
    .addColumn('user_agent', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('analytics_user_agents_key').unique().on('analytics_user_agents').columns(['project_ord', 'ua_hash']).execute();
  await db.schema.alterTable('analytics_events').addColumn('ua_id', caps.bigintType).execute();
}
