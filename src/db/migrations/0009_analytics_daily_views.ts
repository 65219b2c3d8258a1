import { type Kysely, sql } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// `analytics_daily_views`: qualifying page views counted per (project, day, path), human and AI apart. Ingest
// adds to it in the same transaction as the raw events; reclassification rebuilds it. The views export sums
// it over the window instead of scanning every raw event. Existing events are counted once here.
export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  let views = db.schema
    .createTable('analytics_daily_views')
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('path_id', caps.bigintType, (c) => c.notNull())
    .addColumn('human', caps.bigintType, (c) => c.notNull())
    .addColumn('ai', caps.bigintType, (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_daily_views_pk', ['project_ord', 'day', 'path_id']);
  if (caps.withoutRowid) views = views.modifyEnd(sql`without rowid`);
  await views.execute();

  await sql`insert into analytics_daily_views (project_ord, day, path_id, human, ai)
    select project_ord, day, path_id,
      sum(case when class = 'human' then 1 else 0 end),
      sum(case when class = 'ai' then 1 else 0 end)
    from analytics_events
    where qualifying = 1 and class in ('human', 'ai')
    group by project_ord, day, path_id`.execute(db);
}
