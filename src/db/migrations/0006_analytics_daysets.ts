import { type Kysely, sql } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// Analytics day sets (see src/analytics/export/daysets.ts):
// - `analytics_day_versions`: a data version per (project, day), bumped in every transaction that adds daily
//   visits of that day (ingest) or rebuilds them (reclassify). Day sets are valid for one version.
// - `analytics_day_sets`: the persisted, encoded visitor set of a (project, day) and the version it was built from.
// Existing data gets version 1 for every (project, day) that has visits.
export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  let versions = db.schema
    .createTable('analytics_day_versions')
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('version', caps.bigintType, (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_day_versions_pk', ['project_ord', 'day']);
  if (caps.withoutRowid) versions = versions.modifyEnd(sql`without rowid`);
  await versions.execute();

  await db.schema
    .createTable('analytics_day_sets')
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('version', caps.bigintType, (c) => c.notNull())
    .addColumn('pairs', 'integer', (c) => c.notNull())
    .addColumn('data', caps.blobType, (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_day_sets_pk', ['project_ord', 'day'])
    .execute();

  await sql`insert into analytics_day_versions (project_ord, day, version)
    select project_ord, day, 1 from analytics_daily_visits group by project_ord, day`.execute(db);
}
