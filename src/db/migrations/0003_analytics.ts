import { type Kysely, sql } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// Analytics storage: project ordinals + data version, path and visitor dictionaries, raw events, and the
// deduplicated daily visits the export reads. See src/analytics/store/tables.ts for the design.
export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  await caps
    .autoIdColumn(db.schema.createTable('analytics_projects'), 'ord')
    .addColumn('project_id', 'text', (c) => c.notNull().unique().references('projects.id'))
    .addColumn('version', caps.bigintType, (c) => c.notNull().defaultTo(0))
    .execute();

  await caps
    .autoIdColumn(db.schema.createTable('analytics_paths'), 'id')
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('path_hash', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('analytics_paths_key').unique().on('analytics_paths').columns(['project_ord', 'path_hash']).execute();

  await caps
    .autoIdColumn(db.schema.createTable('analytics_visitors'), 'ord')
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('visitor_key', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('analytics_visitors_key').unique().on('analytics_visitors').columns(['project_ord', 'visitor_key']).execute();

  await caps
    .autoIdColumn(db.schema.createTable('analytics_events'), 'id')
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('ts', caps.bigintType, (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('path_id', caps.bigintType, (c) => c.notNull())
    .addColumn('raw_path', 'text', (c) => c.notNull())
    .addColumn('visitor_ord', caps.bigintType, (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('accept', 'text')
    .addColumn('method', 'text')
    .addColumn('status', 'integer')
    .addColumn('referrer', 'text')
    .addColumn('class', 'text', (c) => c.notNull())
    .addColumn('category', 'text')
    .addColumn('rule', 'text')
    .addColumn('rules_version', 'text', (c) => c.notNull())
    .addColumn('qualifying', 'integer', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('dedup_key', 'text')
    .execute();
  await db.schema.createIndex('analytics_events_day').on('analytics_events').columns(['project_ord', 'day']).execute();
  // Keyset pages by id within a project (reclassify); ids only grow, so inserts append at the index's end.
  await db.schema.createIndex('analytics_events_project_id').on('analytics_events').columns(['project_ord', 'id']).execute();
  await db.schema
    .createIndex('analytics_events_dedup')
    .unique()
    .on('analytics_events')
    .columns(['project_ord', 'dedup_key'])
    .where(sql.ref('dedup_key'), 'is not', null)
    .execute();

  let visits = db.schema
    .createTable('analytics_daily_visits')
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('path_id', caps.bigintType, (c) => c.notNull())
    .addColumn('visitor_ord', caps.bigintType, (c) => c.notNull())
    .addColumn('cls', 'smallint', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_daily_visits_pk', ['project_ord', 'day', 'path_id', 'visitor_ord', 'cls']);
  if (caps.withoutRowid) visits = visits.modifyEnd(sql`without rowid`);
  await visits.execute();
}
