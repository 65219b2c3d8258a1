// SQL for per-day versions and persisted day sets (src/analytics/export/daysets.ts): one function per query.
// Callers pass a Kysely instance or a transaction.
import { type Kysely, sql } from 'kysely';
import type { DialectCaps } from '../../db/dialect.ts';
import type { DB } from '../../db/schema.ts';
import { dayVersionQueries } from './day-versions.ts';

export type { DayVersion } from './day-versions.ts';

type Q = Kysely<DB>;

export interface StoredDaySet {
  day: number;
  version: number;
  data: Uint8Array;
}

export interface StaleDay {
  projectOrd: number;
  day: number;
  version: number;
}

export const daysetStore = {
  /** Versions of the days' visits: bumped in the transaction that adds their daily visits, all of them by a rebuild. */
  ...dayVersionQueries('analytics_day_versions'),

  /** Creates version rows (at 1) for days that have daily visits but no version yet (after a rebuild). */
  async insertMissingDayVersions(db: Q, projectOrd: number): Promise<void> {
    await db
      .insertInto('analytics_day_versions')
      .columns(['project_ord', 'day', 'version'])
      .expression((eb) =>
        eb
          .selectFrom('analytics_daily_visits')
          .select(['project_ord', 'day', sql<number>`1`.as('version')])
          .where('project_ord', '=', projectOrd)
          .groupBy(['project_ord', 'day']),
      )
      .onConflict((oc) => oc.columns(['project_ord', 'day']).doNothing())
      .execute();
  },

  /** Persisted day sets of these days (whatever their version). */
  async selectDaySets(db: Q, projectOrd: number, days: readonly number[]): Promise<StoredDaySet[]> {
    if (days.length === 0) return [];
    const rows = await db
      .selectFrom('analytics_day_sets')
      .select(['day', 'version', 'data'])
      .where('project_ord', '=', projectOrd)
      .where('day', 'in', days as number[])
      .execute();
    return rows.map((r) => ({ day: Number(r.day), version: Number(r.version), data: r.data }));
  },

  /** One day's daily visits sorted by (path, visitor, class), as parallel arrays. */
  async selectDayVisits(db: Q, projectOrd: number, day: number): Promise<{ paths: number[]; visitors: number[]; classes: number[] }> {
    const rows = await db
      .selectFrom('analytics_daily_visits')
      .select(['path_id', 'visitor_ord', 'cls'])
      .where('project_ord', '=', projectOrd)
      .where('day', '=', day)
      .orderBy('path_id')
      .orderBy('visitor_ord')
      .orderBy('cls')
      .execute();
    const n = rows.length;
    const paths = new Array<number>(n);
    const visitors = new Array<number>(n);
    const classes = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      const r = rows[i] as (typeof rows)[number];
      paths[i] = Number(r.path_id);
      visitors[i] = Number(r.visitor_ord);
      classes[i] = Number(r.cls);
    }
    return { paths, visitors, classes };
  },

  /**
   * One day's daily visits as one row per path (ascending), with the path's `visitor_ord × 4 + cls` values
   * as a comma-separated list ascending — a fraction of the rows (and of the driver's work) of one per visit.
   */
  async selectDayVisitLists(db: Q, caps: DialectCaps, projectOrd: number, day: number): Promise<{ pathIds: number[]; lists: string[] }> {
    const rows = await db
      .selectFrom('analytics_daily_visits')
      .select(['path_id', caps.intListAgg(sql`visitor_ord * 4 + cls`, sql`visitor_ord, cls`).as('list')])
      .where('project_ord', '=', projectOrd)
      .where('day', '=', day)
      .groupBy('path_id')
      .orderBy('path_id')
      .execute();
    return { pathIds: rows.map((r) => Number(r.path_id)), lists: rows.map((r) => r.list) };
  },

  /** Stores a day set unless a set of the same or a newer version is stored already. */
  async upsertDaySet(db: Q, projectOrd: number, day: number, version: number, pairs: number, data: Uint8Array): Promise<void> {
    await db
      .insertInto('analytics_day_sets')
      .values({ project_ord: projectOrd, day, version, pairs, data })
      .onConflict((oc) =>
        oc
          .columns(['project_ord', 'day'])
          .doUpdateSet({ version: sql`excluded.version`, pairs: sql`excluded.pairs`, data: sql`excluded.data` })
          .where(sql.ref('analytics_day_sets.version'), '<', sql.ref('excluded.version')),
      )
      .execute();
  },

  /** Days (of any project) whose persisted set is missing or not of the day's current version. */
  async selectStaleDays(db: Q, limit: number): Promise<StaleDay[]> {
    const rows = await db
      .selectFrom('analytics_day_versions as v')
      .leftJoin('analytics_day_sets as s', (j) => j.onRef('s.project_ord', '=', 'v.project_ord').onRef('s.day', '=', 'v.day'))
      .select(['v.project_ord', 'v.day', 'v.version'])
      .where((eb) => eb.or([eb('s.version', 'is', null), eb('s.version', '<>', eb.ref('v.version'))]))
      .orderBy('v.project_ord')
      .orderBy('v.day')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ projectOrd: Number(r.project_ord), day: Number(r.day), version: Number(r.version) }));
  },

  /** Path texts of these path ids (of one project). */
  async selectPathTexts(db: Q, projectOrd: number, ids: readonly number[]): Promise<{ id: number; path: string }[]> {
    if (ids.length === 0) return [];
    const rows = await db
      .selectFrom('analytics_paths')
      .select(['id', 'path'])
      .where('project_ord', '=', projectOrd)
      .where('id', 'in', ids as number[])
      .execute();
    return rows.map((r) => ({ id: Number(r.id), path: r.path }));
  },

  /** Every path of a project (a cold cache about to need most of them). */
  async selectAllPathTexts(db: Q, projectOrd: number): Promise<{ id: number; path: string }[]> {
    const rows = await db.selectFrom('analytics_paths').select(['id', 'path']).where('project_ord', '=', projectOrd).execute();
    return rows.map((r) => ({ id: Number(r.id), path: r.path }));
  },
};

export type DaysetStore = typeof daysetStore;
