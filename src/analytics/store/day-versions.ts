// Per-(project, day) data versions: the same three queries for each table of them (analytics_day_versions for
// the daily visits, analytics_day_facet_versions for the daily facets). A version is bumped in the transaction
// that changes its day; whatever is derived from a day (a day set, a day's facets) is valid for one version.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';
import type { DayRange } from './store.ts';

type Q = Kysely<DB>;

export interface DayVersion {
  day: number;
  version: number;
}

export function dayVersionQueries(table: 'analytics_day_versions' | 'analytics_day_facet_versions') {
  return {
    /** Bumps the version of these days of a project (creating them at 1); `days` ascending (PostgreSQL takes the row locks in that order). */
    async bumpDayVersions(db: Q, projectOrd: number, days: readonly number[]): Promise<void> {
      if (days.length === 0) return;
      await db
        .insertInto(table)
        .values(days.map((day) => ({ project_ord: projectOrd, day, version: 1 })))
        .onConflict((oc) => oc.columns(['project_ord', 'day']).doUpdateSet({ version: sql`${sql.ref(`${table}.version`)} + 1` }))
        .execute();
    },

    /** Bumps every day version of a project (what they version was rebuilt). */
    async bumpAllDayVersions(db: Q, projectOrd: number): Promise<void> {
      await db.updateTable(table).set({ version: sql`version + 1` }).where('project_ord', '=', projectOrd).execute();
    },

    /** The version of every day of a project in a range that has (or had) one, ascending by day. */
    async selectDayVersions(db: Q, projectOrd: number, range: DayRange): Promise<DayVersion[]> {
      const rows = await db
        .selectFrom(table)
        .select(['day', 'version'])
        .where('project_ord', '=', projectOrd)
        .$if(range.fromDay !== null, (q) => q.where('day', '>=', range.fromDay as number))
        .$if(range.toDay !== null, (q) => q.where('day', '<', range.toDay as number))
        .orderBy('day')
        .execute();
      return rows.map((r) => ({ day: Number(r.day), version: Number(r.version) }));
    },
  };
}
