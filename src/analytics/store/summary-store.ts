// SQL of the per-day versions and the persisted day summaries (src/analytics/export/day-summary.ts): one
// function per query; callers pass a Kysely instance or a transaction.
//
// `analytics_day_versions` has one row per (project, day) that has segments: `version` is bumped by every
// transaction that changes the day's segments (ingest appends, reclassification and compaction replace);
// `rewritten` is the version a replacement set (the last time segments of the day were replaced, not only
// appended); `has_data` is 1 once the day had an event the series or the breakdowns count (a qualifying view, or
// an AI or crawler request with a rule), and stays 1 (the answers' "days with data", as the reference store has it).
import { type Kysely, sql } from 'kysely';
import type { DialectCaps } from '../../db/dialect.ts';
import type { DB } from '../../db/schema.ts';
import type { DayRange } from './store.ts';

type Q = Kysely<DB>;

export interface DayVersion {
  day: number;
  version: number;
  /** The version at which the day's segments were last replaced (0: never). */
  rewritten: number;
  hasData: boolean;
}

export interface StoredSummary {
  day: number;
  version: number;
  data: Uint8Array;
}

export interface StaleDay {
  projectOrd: number;
  day: number;
  version: number;
  /** The version of the stored summary (null: none stored). */
  storedVersion: number | null;
}

/** `has_data` after an upsert: 1 once it was 1 or the new value is. */
const stickyHasData = sql<number>`case when excluded.has_data > analytics_day_versions.has_data then excluded.has_data else analytics_day_versions.has_data end`;

/** A summary blob to store (upsertSummaries). */
export interface SummaryRow {
  projectOrd: number;
  day: number;
  version: number;
  data: Uint8Array;
}

export const summaryStore = {
  /** Bumps the versions of days whose segments a transaction appended to (creating them at 1); `days` ascending (PostgreSQL takes the row locks in that order). */
  async bumpDayVersions(db: Q, projectOrd: number, days: readonly { day: number; hasData: boolean }[]): Promise<void> {
    if (days.length === 0) return;
    await db
      .insertInto('analytics_day_versions')
      .values(days.map((d) => ({ project_ord: projectOrd, day: d.day, version: 1, rewritten: 0, has_data: d.hasData ? 1 : 0 })))
      .onConflict((oc) => oc.columns(['project_ord', 'day']).doUpdateSet({ version: sql`analytics_day_versions.version + 1`, has_data: stickyHasData }))
      .execute();
  },

  /** Bumps a day's version and records it as the day's last rewrite (its segments were replaced). */
  async rewriteDay(db: Q, projectOrd: number, day: number, hasData: boolean): Promise<void> {
    await db
      .insertInto('analytics_day_versions')
      .values({ project_ord: projectOrd, day, version: 1, rewritten: 1, has_data: hasData ? 1 : 0 })
      .onConflict((oc) =>
        oc.columns(['project_ord', 'day']).doUpdateSet({
          version: sql`analytics_day_versions.version + 1`,
          rewritten: sql`analytics_day_versions.version + 1`,
          has_data: stickyHasData,
        }),
      )
      .execute();
  },

  /** The versions of a project's days in a range, ascending by day. */
  async selectDayVersions(db: Q, projectOrd: number, range: DayRange): Promise<DayVersion[]> {
    const rows = await db
      .selectFrom('analytics_day_versions')
      .select(['day', 'version', 'rewritten', 'has_data'])
      .where('project_ord', '=', projectOrd)
      .$if(range.fromDay !== null, (q) => q.where('day', '>=', range.fromDay as number))
      .$if(range.toDay !== null, (q) => q.where('day', '<', range.toDay as number))
      .orderBy('day')
      .execute();
    return rows.map((r) => ({ day: Number(r.day), version: Number(r.version), rewritten: Number(r.rewritten), hasData: Number(r.has_data) === 1 }));
  },

  /**
   * Persisted summaries of these days (whatever their version). `blob`: how the dialect reads large blobs fastest
   * (DialectCaps.selectBinary; without it, the plain select).
   */
  async selectSummaries(db: Q, projectOrd: number, days: readonly number[], blob?: Pick<DialectCaps, 'selectBinary'>): Promise<StoredSummary[]> {
    const out: StoredSummary[] = [];
    for (let i = 0; i < days.length; i += 1000) {
      const q = db
        .selectFrom('analytics_day_summaries')
        .select(['day', 'version', 'data'])
        .where('project_ord', '=', projectOrd)
        .where('day', 'in', days.slice(i, i + 1000) as number[]);
      if (blob) {
        for (const r of await blob.selectBinary(db, q.compile(), { day: 'int', version: 'int', data: 'bytes' })) out.push(r);
        continue;
      }
      for (const r of await q.execute()) out.push({ day: Number(r.day), version: Number(r.version), data: r.data as Uint8Array });
    }
    return out;
  },

  /** The version of a day's persisted summary, if it has one (without its blob). */
  async selectSummaryVersion(db: Q, projectOrd: number, day: number): Promise<number | undefined> {
    const r = await db.selectFrom('analytics_day_summaries').select('version').where('project_ord', '=', projectOrd).where('day', '=', day).executeTakeFirst();
    return r === undefined ? undefined : Number(r.version);
  },

  /** Stores a summary unless one of the same or a newer version is stored already. */
  async upsertSummary(db: Q, projectOrd: number, day: number, version: number, data: Uint8Array): Promise<void> {
    await db
      .insertInto('analytics_day_summaries')
      .values({ project_ord: projectOrd, day, version, data })
      .onConflict((oc) =>
        oc
          .columns(['project_ord', 'day'])
          .doUpdateSet({ version: sql`excluded.version`, data: sql`excluded.data` })
          .where(sql.ref('analytics_day_summaries.version'), '<', sql.ref('excluded.version')),
      )
      .execute();
  },

  /** Stores several summaries (upsertSummary each) in one transaction: the sealer's batch, one commit. */
  async upsertSummaries(db: Q, rows: readonly SummaryRow[]): Promise<void> {
    if (rows.length === 0) return;
    await db.transaction().execute(async (trx) => {
      for (const r of rows) await summaryStore.upsertSummary(trx, r.projectOrd, r.day, r.version, r.data);
    });
  },

  /** Moves a persisted summary from version `from` to `to` (compaction: same content); nothing when it is not at `from`. */
  async carrySummary(db: Q, projectOrd: number, day: number, from: number, to: number): Promise<void> {
    await db
      .updateTable('analytics_day_summaries')
      .set({ version: to })
      .where('project_ord', '=', projectOrd)
      .where('day', '=', day)
      .where('version', '=', from)
      .execute();
  },

  /** Days (of any project) whose persisted summary is missing or not of the day's current version. */
  async selectStaleDays(db: Q, limit: number): Promise<StaleDay[]> {
    const rows = await db
      .selectFrom('analytics_day_versions as v')
      .leftJoin('analytics_day_summaries as s', (j) => j.onRef('s.project_ord', '=', 'v.project_ord').onRef('s.day', '=', 'v.day'))
      .select(['v.project_ord', 'v.day', 'v.version', 's.version as stored_version'])
      .where((eb) => eb.or([eb('s.version', 'is', null), eb('s.version', '<>', eb.ref('v.version'))]))
      .orderBy('v.project_ord')
      .orderBy('v.day')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      projectOrd: Number(r.project_ord),
      day: Number(r.day),
      version: Number(r.version),
      storedVersion: r.stored_version === null ? null : Number(r.stored_version),
    }));
  },

  /**
   * Path texts of these path ids (of one project). By id alone (ids are unique across projects): with the
   * project too, SQLite may walk the project's (project_ord, path_hash) index over all its paths per query
   * (bench:scale, a cold 30-day export: 2 s of 2.4 in this query before).
   */
  async selectPathTexts(db: Q, _projectOrd: number, ids: readonly number[]): Promise<{ id: number; path: string }[]> {
    if (ids.length === 0) return [];
    const rows = await db
      .selectFrom('analytics_paths')
      .select(['id', 'path'])
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

export type SummaryStore = typeof summaryStore;
