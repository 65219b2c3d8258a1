// SQL for the daily facets (analytics_daily_facets, migration 0010): the agents and referrers breakdowns.
// One function per query; callers pass a Kysely instance or a transaction.
import { type Kysely, sql } from 'kysely';
import type { BulkTable, BulkWriter } from '../../db/bulk.ts';
import type { DB } from '../../db/schema.ts';
import type { DayVersion } from './dayset-store.ts';
import type { DayRange } from './store.ts';

type Q = Kysely<DB>;

/** Rows [project_ord, day, facet, name, visitor_ord, cls, views, requests], distinct keys per call: added to the stored counts. */
const FACET_TABLE: BulkTable = {
  table: 'analytics_daily_facets',
  columns: [
    { name: 'project_ord', type: 'integer' },
    { name: 'day', type: 'integer' },
    { name: 'facet', type: 'smallint' },
    { name: 'name', type: 'text' },
    { name: 'visitor_ord', type: 'bigint' },
    { name: 'cls', type: 'smallint' },
    { name: 'views', type: 'bigint' },
    { name: 'requests', type: 'bigint' },
  ],
  onConflict: { key: ['project_ord', 'day', 'facet', 'name', 'visitor_ord'], add: ['views', 'requests'] },
};

/** One stored facet row of a day (without its project and day). */
export interface FacetRow {
  facet: number;
  name: string;
  visitor: number;
  cls: number;
  views: number;
  requests: number;
}

/** What rebuilding the facets reads of each stored event. */
export interface FacetSourceRow {
  id: number;
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

export const facetStore = {
  /** Bumps the facet version of these days (creating them at 1); `days` ascending. In the transaction that changes their facets. */
  async bumpDayVersions(trx: Q, projectOrd: number, days: readonly number[]): Promise<void> {
    if (days.length === 0) return;
    await trx
      .insertInto('analytics_day_facet_versions')
      .values(days.map((day) => ({ project_ord: projectOrd, day, version: 1 })))
      .onConflict((oc) => oc.columns(['project_ord', 'day']).doUpdateSet({ version: sql`analytics_day_facet_versions.version + 1` }))
      .execute();
  },

  /** Bumps every facet version of a project (its facets were rebuilt). */
  async bumpAllDayVersions(trx: Q, projectOrd: number): Promise<void> {
    await trx.updateTable('analytics_day_facet_versions').set({ version: sql`version + 1` }).where('project_ord', '=', projectOrd).execute();
  },

  /** The facet version of every day of a project in a range that has (or had) facets, ascending by day. */
  async selectDayVersions(db: Q, projectOrd: number, range: DayRange): Promise<DayVersion[]> {
    const rows = await db
      .selectFrom('analytics_day_facet_versions')
      .select(['day', 'version'])
      .where('project_ord', '=', projectOrd)
      .$if(range.fromDay !== null, (q) => q.where('day', '>=', range.fromDay as number))
      .$if(range.toDay !== null, (q) => q.where('day', '<', range.toDay as number))
      .orderBy('day')
      .execute();
    return rows.map((r) => ({ day: Number(r.day), version: Number(r.version) }));
  },

  /** Adds facet rows (flat, FACET_TABLE order) to the stored counts. */
  async bulkAddFacets(bulk: BulkWriter, trx: Q, values: readonly unknown[]): Promise<number> {
    return bulk.insertFlat(trx, FACET_TABLE, values);
  },

  /** The facet rows of one (project, day), ordered by facet, name, visitor. */
  async selectDayFacets(db: Q, projectOrd: number, day: number): Promise<FacetRow[]> {
    const rows = await db
      .selectFrom('analytics_daily_facets')
      .select(['facet', 'name', 'visitor_ord', 'cls', 'views', 'requests'])
      .where('project_ord', '=', projectOrd)
      .where('day', '=', day)
      .orderBy('facet')
      .orderBy('name')
      .orderBy('visitor_ord')
      .execute();
    return rows.map((r) => ({
      facet: Number(r.facet),
      name: r.name,
      visitor: Number(r.visitor_ord),
      cls: Number(r.cls),
      views: Number(r.views),
      requests: Number(r.requests),
    }));
  },

  async deleteFacets(trx: Q, projectOrd: number): Promise<void> {
    await trx.deleteFrom('analytics_daily_facets').where('project_ord', '=', projectOrd).execute();
  },

  /** A page of a project's stored events in id order, with what their facets derive from. */
  async selectEventsForFacets(db: Q, projectOrd: number, afterId: number, limit: number): Promise<FacetSourceRow[]> {
    const rows = await db
      .selectFrom('analytics_events as e')
      .innerJoin('analytics_paths as p', 'p.id', 'e.path_id')
      .select(['e.id', 'e.day', 'e.visitor_ord', 'e.class', 'e.rule', 'e.qualifying', 'e.method', 'e.status', 'e.referrer', 'p.path'])
      .where('e.project_ord', '=', projectOrd)
      .where('e.id', '>', afterId)
      .orderBy('e.id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ ...r, id: Number(r.id), day: Number(r.day), visitor_ord: Number(r.visitor_ord) }));
  },
};
