// SQL for analytics: one function per query. Callers pass a Kysely instance or a transaction.
import { type Kysely, sql } from 'kysely';
import type { BulkRow, BulkTable, BulkWriter } from '../../db/bulk.ts';
import type { DB } from '../../db/schema.ts';
import { type AnalyticsTables, CLS_AI, CLS_HUMAN } from './tables.ts';

type Q = Kysely<DB>;
export type VisitRow = AnalyticsTables['analytics_daily_visits'];

export interface DayRange {
  /** Inclusive; null = from the first event. */
  fromDay: number | null;
  /** Exclusive; null = no upper bound. */
  toDay: number | null;
}

export interface NamedCounts {
  path: string;
  human: number;
  ai: number;
  total: number;
}

/** Splits rows into chunks whose bound parameters stay under `maxParams`. */
export function chunkRows<T>(rows: readonly T[], columns: number, maxParams: number, cap = 1000): T[][] {
  const size = Math.max(1, Math.min(cap, Math.floor(maxParams / columns)));
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

export const VISIT_TABLE: BulkTable = {
  table: 'analytics_daily_visits',
  columns: [
    { name: 'project_ord', type: 'integer' },
    { name: 'day', type: 'integer' },
    { name: 'path_id', type: 'bigint' },
    { name: 'visitor_ord', type: 'bigint' },
    { name: 'cls', type: 'smallint' },
  ],
  onConflict: 'ignore',
};

/** Rows [project_ord, day, path_id, human, ai], one per (day, path) in a call: added to the stored counts. */
const VIEW_TABLE: BulkTable = {
  table: 'analytics_daily_views',
  columns: [
    { name: 'project_ord', type: 'integer' },
    { name: 'day', type: 'integer' },
    { name: 'path_id', type: 'bigint' },
    { name: 'human', type: 'bigint' },
    { name: 'ai', type: 'bigint' },
  ],
  onConflict: { key: ['project_ord', 'day', 'path_id'], add: ['human', 'ai'] },
};

const PATH_TABLE: BulkTable = {
  table: 'analytics_paths',
  columns: [
    { name: 'project_ord', type: 'integer' },
    { name: 'path_hash', type: 'text' },
    { name: 'path', type: 'text' },
  ],
  onConflict: 'ignore',
};

const USER_AGENT_TABLE: BulkTable = {
  table: 'analytics_user_agents',
  columns: [
    { name: 'project_ord', type: 'integer' },
    { name: 'ua_hash', type: 'text' },
    { name: 'user_agent', type: 'text' },
  ],
  onConflict: 'ignore',
};

const VISITOR_TABLE: BulkTable = {
  table: 'analytics_visitors',
  columns: [
    { name: 'project_ord', type: 'integer' },
    { name: 'visitor_key', type: 'text' },
  ],
  onConflict: 'ignore',
};

export const analyticsStore = {
  // ---- projects: ordinal and data version ----------------------------------------------------------

  async insertProjectOrd(db: Q, projectId: string): Promise<void> {
    await db
      .insertInto('analytics_projects')
      .values({ project_id: projectId, version: 0 })
      .onConflict((oc) => oc.column('project_id').doNothing())
      .execute();
  },

  async selectProjectOrd(db: Q, projectId: string): Promise<number | undefined> {
    const r = await db.selectFrom('analytics_projects').select('ord').where('project_id', '=', projectId).executeTakeFirst();
    return r?.ord;
  },

  async bumpVersion(db: Q, projectOrd: number): Promise<void> {
    await db.updateTable('analytics_projects').set({ version: sql`version + 1` }).where('ord', '=', projectOrd).execute();
  },

  async selectVersion(db: Q, projectOrd: number): Promise<number> {
    const r = await db.selectFrom('analytics_projects').select('version').where('ord', '=', projectOrd).executeTakeFirst();
    return r ? Number(r.version) : 0;
  },

  // ---- dictionaries --------------------------------------------------------------------------------

  async insertPaths(db: Q, rows: { project_ord: number; path_hash: string; path: string }[]): Promise<void> {
    if (rows.length === 0) return;
    await db
      .insertInto('analytics_paths')
      .values(rows)
      .onConflict((oc) => oc.columns(['project_ord', 'path_hash']).doNothing())
      .execute();
  },

  async selectPathIds(db: Q, projectOrd: number, hashes: string[]): Promise<{ id: number; path_hash: string }[]> {
    if (hashes.length === 0) return [];
    return db.selectFrom('analytics_paths').select(['id', 'path_hash']).where('project_ord', '=', projectOrd).where('path_hash', 'in', hashes).execute();
  },

  async insertVisitors(db: Q, rows: { project_ord: number; visitor_key: string }[]): Promise<void> {
    if (rows.length === 0) return;
    await db
      .insertInto('analytics_visitors')
      .values(rows)
      // No conflict target: the key has no unique index (migration 0008); the ingest writer keeps keys unique.
      .onConflict((oc) => oc.doNothing())
      .execute();
  },

  async selectVisitorOrds(db: Q, projectOrd: number, keys: string[]): Promise<{ ord: number; visitor_key: string }[]> {
    if (keys.length === 0) return [];
    return db.selectFrom('analytics_visitors').select(['ord', 'visitor_key']).where('project_ord', '=', projectOrd).where('visitor_key', 'in', keys).execute();
  },

  // ---- bulk writes (ingest hot path; inside a transaction, see src/db/bulk.ts) --------------------------

  /** Inserts daily visits (values row after row in VISIT_TABLE order); existing ones are skipped. */
  async bulkInsertVisits(bulk: BulkWriter, trx: Q, values: readonly unknown[]): Promise<number> {
    return bulk.insertFlat(trx, VISIT_TABLE, values);
  },

  /** Adds view counts (values row after row: project_ord, day, path_id, human, ai; distinct (day, path) per call) to the stored ones. */
  async bulkAddViews(bulk: BulkWriter, trx: Q, values: readonly unknown[]): Promise<number> {
    return bulk.insertFlat(trx, VIEW_TABLE, values);
  },

  /** Inserts dictionary paths [project_ord, path_hash, path]; existing ones are skipped. */
  async bulkInsertPaths(bulk: BulkWriter, trx: Q, rows: readonly BulkRow[]): Promise<number> {
    return bulk.insert(trx, PATH_TABLE, rows);
  },

  /** Inserts dictionary user agents [project_ord, ua_hash, user_agent]; existing ones are skipped. */
  async bulkInsertUserAgents(bulk: BulkWriter, trx: Q, rows: readonly BulkRow[]): Promise<number> {
    return bulk.insert(trx, USER_AGENT_TABLE, rows);
  },

  async selectUserAgentIds(db: Q, projectOrd: number, hashes: string[]): Promise<{ id: number; ua_hash: string }[]> {
    if (hashes.length === 0) return [];
    return db.selectFrom('analytics_user_agents').select(['id', 'ua_hash']).where('project_ord', '=', projectOrd).where('ua_hash', 'in', hashes).execute();
  },

  /**
   * Inserts dictionary visitors [project_ord, visitor_key] and returns the ordinals given to those inserted
   * (where a unique index exists, existing ones are skipped and return nothing).
   */
  async bulkInsertVisitorsReturning(bulk: BulkWriter, trx: Q, rows: readonly BulkRow[]): Promise<{ ord: number; visitor_key: string }[]> {
    const out = await bulk.insertReturning(trx, VISITOR_TABLE, rows, ['ord', 'visitor_key']);
    return out.map((r) => ({ ord: Number(r.ord), visitor_key: r.visitor_key as string }));
  },

  /** A project's visitors with an ordinal above `afterOrd`, in ordinal order (loading and catching up an in-memory index). */
  async selectVisitorsAfter(db: Q, projectOrd: number, afterOrd: number, limit: number): Promise<{ ord: number; visitor_key: string }[]> {
    const rows = await db
      .selectFrom('analytics_visitors')
      .select(['ord', 'visitor_key'])
      .where('ord', '>', afterOrd)
      .where('project_ord', '=', projectOrd)
      .orderBy('ord')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ ord: Number(r.ord), visitor_key: r.visitor_key }));
  },

  /** Visitors by ordinal (confirming in-memory index candidates). */
  async selectVisitorsByOrd(db: Q, ords: number[]): Promise<{ ord: number; visitor_key: string }[]> {
    if (ords.length === 0) return [];
    const rows = await db.selectFrom('analytics_visitors').select(['ord', 'visitor_key']).where('ord', 'in', ords).execute();
    return rows.map((r) => ({ ord: Number(r.ord), visitor_key: r.visitor_key }));
  },

  // ---- events and daily visits ---------------------------------------------------------------------

  async insertVisits(db: Q, rows: VisitRow[]): Promise<void> {
    if (rows.length === 0) return;
    await db
      .insertInto('analytics_daily_visits')
      .values(rows)
      .onConflict((oc) => oc.columns(['project_ord', 'day', 'path_id', 'visitor_ord', 'cls']).doNothing())
      .execute();
  },

  // ---- export --------------------------------------------------------------------------------------

  /** Exact distinct visitors per path (human, ai, and their union) over a day range, with the path text. */
  async visitorsByPathNamed(db: Q, projectOrd: number, range: DayRange): Promise<NamedCounts[]> {
    const counts = db
      .selectFrom('analytics_daily_visits')
      .select([
        'path_id',
        sql<number>`count(distinct case when cls = ${sql.lit(CLS_HUMAN)} then visitor_ord end)`.as('human'),
        sql<number>`count(distinct case when cls = ${sql.lit(CLS_AI)} then visitor_ord end)`.as('ai'),
        sql<number>`count(distinct visitor_ord)`.as('total'),
      ])
      .where('project_ord', '=', projectOrd)
      .$if(range.fromDay !== null, (q) => q.where('day', '>=', range.fromDay as number))
      .$if(range.toDay !== null, (q) => q.where('day', '<', range.toDay as number))
      .groupBy('path_id');
    const rows = await db
      .selectFrom(counts.as('v'))
      .innerJoin('analytics_paths as p', 'p.id', 'v.path_id')
      .select(['p.path', 'v.human', 'v.ai', 'v.total'])
      .execute();
    return rows.map((r) => ({ path: r.path, human: Number(r.human), ai: Number(r.ai), total: Number(r.total) }));
  },

  /** Exact site-wide distinct visitors over a day range. */
  async visitorTotals(db: Q, projectOrd: number, range: DayRange): Promise<{ human: number; ai: number; total: number }> {
    const r = await db
      .selectFrom('analytics_daily_visits')
      .select([
        sql<number>`count(distinct case when cls = ${sql.lit(CLS_HUMAN)} then visitor_ord end)`.as('human'),
        sql<number>`count(distinct case when cls = ${sql.lit(CLS_AI)} then visitor_ord end)`.as('ai'),
        sql<number>`count(distinct visitor_ord)`.as('total'),
      ])
      .where('project_ord', '=', projectOrd)
      .$if(range.fromDay !== null, (q) => q.where('day', '>=', range.fromDay as number))
      .$if(range.toDay !== null, (q) => q.where('day', '<', range.toDay as number))
      .executeTakeFirst();
    return { human: Number(r?.human ?? 0), ai: Number(r?.ai ?? 0), total: Number(r?.total ?? 0) };
  },

  /** Qualifying view counts per path and class over a day range (from the daily counts), with the path text. */
  async viewsByPathNamed(db: Q, projectOrd: number, range: DayRange): Promise<{ path: string; human: number; ai: number }[]> {
    const counts = db
      .selectFrom('analytics_daily_views')
      .select(['path_id', sql<number>`sum(human)`.as('human'), sql<number>`sum(ai)`.as('ai')])
      .where('project_ord', '=', projectOrd)
      .$if(range.fromDay !== null, (q) => q.where('day', '>=', range.fromDay as number))
      .$if(range.toDay !== null, (q) => q.where('day', '<', range.toDay as number))
      .groupBy('path_id');
    const rows = await db.selectFrom(counts.as('v')).innerJoin('analytics_paths as p', 'p.id', 'v.path_id').select(['p.path', 'v.human', 'v.ai']).execute();
    return rows.map((r) => ({ path: r.path, human: Number(r.human), ai: Number(r.ai) }));
  },

  async deleteVisits(db: Q, projectOrd: number): Promise<void> {
    await db.deleteFrom('analytics_daily_visits').where('project_ord', '=', projectOrd).execute();
    await db.deleteFrom('analytics_daily_views').where('project_ord', '=', projectOrd).execute();
  },
};

export type AnalyticsStore = typeof analyticsStore;
