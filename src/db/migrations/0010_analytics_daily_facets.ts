import { type Kysely, sql } from 'kysely';
import { FacetAccumulator } from '../../analytics/classify/facets.ts';
import { isStaticAsset } from '../../analytics/classify/normalize.ts';
import type { DialectCaps } from '../dialect.ts';

// `analytics_daily_facets`: per (project, day, facet, name, visitor) the views and requests of that visitor,
// for the agents (facet 1: AI assistants and crawlers by the name of their classification rule) and
// referrers (facet 2: qualifying views by referrer host) endpoints. Ingest adds to it in the same transaction
// as the raw events; reclassification rebuilds it. `analytics_day_facet_versions` versions each (project, day)
// of it (like analytics_day_versions for the visits, apart so that a crawler's request does not invalidate a
// day's visitor set). Deriving a row needs the rules' code (page-view shape, referrer host), not SQL: the
// events stored before this migration are derived below with that code.
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

  // Events stored before this table: derived with the same code as ingest and reclassification (the rules
  // need code, not SQL), one project at a time, while no service runs (migrations run at start).
  const projects = await db.selectFrom('analytics_projects').select('ord').orderBy('ord').execute();
  for (const { ord } of projects) {
    const acc = new FacetAccumulator();
    const days = new Set<number>();
    const flush = async () => {
      const values = acc.flat(Number(ord));
      for (let i = 0; i < values.length; i += FACET_COLUMNS.length * 500) await insertFacetRows(db, values.slice(i, i + FACET_COLUMNS.length * 500));
      for (const d of acc.days) days.add(d);
      acc.clear();
    };
    for await (const rows of eventRows(db, Number(ord))) {
      for (const r of rows) {
        acc.add({
          day: r.day,
          visitor: r.visitor_ord,
          cls: r.class,
          rule: r.rule,
          qualifying: Number(r.qualifying),
          method: r.method,
          status: r.status === null ? null : Number(r.status),
          referrer: r.referrer,
          staticAsset: () => isStaticAsset(r.path),
        });
      }
      if (acc.size >= 50_000) await flush();
    }
    await flush();
    for (const day of [...days].sort((a, b) => a - b)) {
      await db
        .insertInto('analytics_day_facet_versions')
        .values({ project_ord: Number(ord), day, version: 1 })
        .execute();
    }
  }
}

/** What the facets read of each stored event. */
interface FacetSourceRow {
  day: number;
  visitor_ord: number;
  class: 'human' | 'ai' | 'crawler';
  rule: string | null;
  qualifying: number;
  method: string | null;
  status: number | null;
  referrer: string | null;
  path: string;
}

/** The project's event rows (the table migration 0016 replaced by segments) in id order, a page at a time. */
async function* eventRows(db: Kysely<any>, projectOrd: number): AsyncGenerator<FacetSourceRow[]> {
  for (let afterId = 0; ; ) {
    const rows = await db
      .selectFrom('analytics_events as e')
      .innerJoin('analytics_paths as p', 'p.id', 'e.path_id')
      .select(['e.id', 'e.day', 'e.visitor_ord', 'e.class', 'e.rule', 'e.qualifying', 'e.method', 'e.status', 'e.referrer', 'p.path'])
      .where('e.project_ord', '=', projectOrd)
      .where('e.id', '>', afterId)
      .orderBy('e.id')
      .limit(5000)
      .execute();
    if (rows.length === 0) return;
    yield rows.map((r) => ({ ...r, day: Number(r.day), visitor_ord: Number(r.visitor_ord) }));
    afterId = Number(rows[rows.length - 1].id);
  }
}

const FACET_COLUMNS = ['project_ord', 'day', 'facet', 'name', 'visitor_ord', 'cls', 'views', 'requests'] as const;

/** Inserts rows (flat, FACET_COLUMNS order, distinct keys, none stored yet within one project's rebuild). */
async function insertFacetRows(db: Kysely<any>, values: unknown[]): Promise<void> {
  const rows: Record<string, unknown>[] = [];
  for (let i = 0; i < values.length; i += FACET_COLUMNS.length) rows.push(Object.fromEntries(FACET_COLUMNS.map((c, k) => [c, values[i + k]])));
  await db
    .insertInto('analytics_daily_facets')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['project_ord', 'day', 'facet', 'name', 'visitor_ord']).doUpdateSet({
        views: sql`analytics_daily_facets.views + excluded.views`,
        requests: sql`analytics_daily_facets.requests + excluded.requests`,
      }),
    )
    .execute();
}
