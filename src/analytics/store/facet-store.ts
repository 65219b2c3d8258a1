// SQL for the daily facets (analytics_daily_facets, migration 0010): the agents and referrers breakdowns.
// One function per query; callers pass a Kysely instance or a transaction.
import type { Kysely } from 'kysely';
import type { BulkTable, BulkWriter } from '../../db/bulk.ts';
import type { DB } from '../../db/schema.ts';
import { dayVersionQueries } from './day-versions.ts';

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
  /** Versions of the days' facets: bumped in the transaction that changes them, all of them by a rebuild. */
  ...dayVersionQueries('analytics_day_facet_versions'),

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
};
