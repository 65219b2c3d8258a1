import { type Kysely, sql } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// Day summaries (src/analytics/export/day-summary.ts) replace the per-event derived tables: the segments are
// the only per-event storage, and what the answers read of a (project, day) is derived from its segments,
// valid for one version of the day (src/analytics/store/summary-store.ts says what the columns mean).
// - `analytics_day_versions` gains `rewritten` (the version at the day's last segment replacement; 0: none
//   known, which is safe: a summary built before this migration does not exist) and `has_data` (the days with
//   data: those that had daily visits or facets), and gets a row for every (project, day) with segments.
// - `analytics_day_summaries`: one persisted summary blob per (project, day), at the version it was built for.
//   None is built here: a day's summary is built from its segments when first read, and persisted by the API
//   process's sealer (every sealIntervalMs) once the day holds still, so this migration does no per-event work
//   (bounded memory and time whatever the database's size; bench/README.md, Decisions, "Day summaries" has its time).
// - dropped: analytics_daily_visits, analytics_daily_views, analytics_daily_facets, analytics_day_facet_versions
//   and analytics_day_sets (the visitor sets are part of the summaries now).
export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  await db.schema
    .alterTable('analytics_day_versions')
    .addColumn('rewritten', caps.bigintType, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('analytics_day_versions')
    .addColumn('has_data', 'smallint', (c) => c.notNull().defaultTo(0))
    .execute();
  // Existing rows are the days that had daily visits (or had them before a reclassification): days with data.
  await db.updateTable('analytics_day_versions').set({ has_data: 1 }).execute();
  // Days with facets (agent or referrer requests) are days with data too.
  await sql`insert into analytics_day_versions (project_ord, day, version, rewritten, has_data)
    select project_ord, day, 1, 0, 1 from analytics_day_facet_versions where true
    on conflict (project_ord, day) do update set has_data = 1`.execute(db);
  // Every other day with segments (events that are neither: a 404, a HEAD request, a human's asset).
  await sql`insert into analytics_day_versions (project_ord, day, version, rewritten, has_data)
    select project_ord, day, 1, 0, 0 from analytics_segments group by project_ord, day
    on conflict (project_ord, day) do nothing`.execute(db);

  await db.schema
    .createTable('analytics_day_summaries')
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('version', caps.bigintType, (c) => c.notNull())
    .addColumn('data', caps.blobType, (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_day_summaries_pk', ['project_ord', 'day'])
    .execute();

  for (const table of ['analytics_day_sets', 'analytics_daily_visits', 'analytics_daily_views', 'analytics_daily_facets', 'analytics_day_facet_versions']) {
    await db.schema.dropTable(table).execute();
  }
}
