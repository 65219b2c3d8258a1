import { type Kysely, sql } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// `analytics_daily_facets`: per (project, day, facet, name, visitor) the views and requests of that visitor,
// for the agents (facet 1: AI assistants and crawlers by the name of their classification rule) and
// referrers (facet 2: qualifying views by referrer host) endpoints. Ingest adds to it in the same transaction
// as the raw events; reclassification rebuilds it. `analytics_day_facet_versions` versions each (project, day)
// of it (like analytics_day_versions for the visits, apart so that a crawler's request does not invalidate
// a day's visitor set). Deriving a row needs the rules' code (page-view shape,
// referrer host), not SQL, so existing events are counted by the service on first use (`facets_ready` = 0
// for the projects that have events now; new projects start ready).
export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  let facets = db.schema
    .createTable('analytics_daily_facets')
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('facet', 'smallint', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('visitor_ord', caps.bigintType, (c) => c.notNull())
    .addColumn('cls', 'smallint', (c) => c.notNull())
    .addColumn('views', caps.bigintType, (c) => c.notNull())
    .addColumn('requests', caps.bigintType, (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_daily_facets_pk', ['project_ord', 'day', 'facet', 'name', 'visitor_ord']);
  if (caps.withoutRowid) facets = facets.modifyEnd(sql`without rowid`);
  await facets.execute();

  let versions = db.schema
    .createTable('analytics_day_facet_versions')
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('version', caps.bigintType, (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_day_facet_versions_pk', ['project_ord', 'day']);
  if (caps.withoutRowid) versions = versions.modifyEnd(sql`without rowid`);
  await versions.execute();

  await db.schema
    .alterTable('analytics_projects')
    .addColumn('facets_ready', 'smallint', (c) => c.notNull().defaultTo(1))
    .execute();
  await sql`update analytics_projects set facets_ready = 0
    where exists (select 1 from analytics_events e where e.project_ord = analytics_projects.ord)`.execute(db);
}
