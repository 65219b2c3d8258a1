// SQL for analytics: one function per query. Callers pass a Kysely instance or a transaction.
import { type Kysely, sql } from 'kysely';
import type { BulkRow, BulkTable, BulkWriter } from '../../db/bulk.ts';
import type { DB } from '../../db/schema.ts';
import { decodeVisitorKey, encodeVisitorKey } from './visitor-key.ts';

type Q = Kysely<DB>;

export interface DayRange {
  /** Inclusive; null = from the first event. */
  fromDay: number | null;
  /** Exclusive; null = no upper bound. */
  toDay: number | null;
}

/** Splits rows into chunks whose bound parameters stay under `maxParams`. */
export function chunkRows<T>(rows: readonly T[], columns: number, maxParams: number, cap = 1000): T[][] {
  const size = Math.max(1, Math.min(cap, Math.floor(maxParams / columns)));
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

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
    { name: 'visitor_key', type: 'bytes' },
  ],
  onConflict: 'ignore',
};

/** A stored visitor row with its key as the text the writer compares (keys are stored as bytes: visitor-key.ts). */
function visitorRow(r: { ord: unknown; visitor_key: Uint8Array }): { ord: number; visitor_key: string } {
  return { ord: Number(r.ord), visitor_key: decodeVisitorKey(r.visitor_key) };
}

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
      .values(rows.map((r) => ({ project_ord: r.project_ord, visitor_key: encodeVisitorKey(r.visitor_key) })))
      // No conflict target: the key has no unique index (migration 0008); the ingest writer keeps keys unique.
      .onConflict((oc) => oc.doNothing())
      .execute();
  },

  async selectVisitorOrds(db: Q, projectOrd: number, keys: string[]): Promise<{ ord: number; visitor_key: string }[]> {
    if (keys.length === 0) return [];
    const rows = await db
      .selectFrom('analytics_visitors')
      .select(['ord', 'visitor_key'])
      .where('project_ord', '=', projectOrd)
      .where('visitor_key', 'in', keys.map(encodeVisitorKey))
      .execute();
    return rows.map(visitorRow);
  },

  // ---- bulk writes (ingest hot path; inside a transaction, see src/db/bulk.ts) --------------------------

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
    const stored = rows.map((r) => [r[0], encodeVisitorKey(r[1] as string)]);
    const out = await bulk.insertReturning(trx, VISITOR_TABLE, stored, ['ord', 'visitor_key']);
    return out.map((r) => visitorRow(r as { ord: unknown; visitor_key: Uint8Array }));
  },

  /** A project's visitors with an ordinal above `afterOrd`, in ordinal order (loading and catching up an in-memory index). */
  async selectVisitorsAfter(db: Q, projectOrd: number, afterOrd: number, limit: number): Promise<{ ord: number; visitor_key: string }[]> {
    const rows = await db
      .selectFrom('analytics_visitors')
      .select(['ord', 'visitor_key'])
      .where('ord', '>', afterOrd)
      // The upper bound selects nothing more (ordinals are safe integers) but keeps PostgreSQL on the ordinal
      // index. Without statistics on the table (a fresh, insert-only table autovacuum has not analysed yet) it
      // estimated `ord > $1` at a third of the rows, chose a parallel scan of the whole dictionary plus a sort
      // for every ingest transaction's catch-up, and ingest slowed as the dictionary grew; a two-sided range is
      // estimated small. Measured: catching up at 525k visitors 41 ms -> 0.2 ms (bench/README.md, "Visitor
      // dictionary as bytes").
      .where('ord', '<=', Number.MAX_SAFE_INTEGER)
      .where('project_ord', '=', projectOrd)
      .orderBy('ord')
      .limit(limit)
      .execute();
    return rows.map(visitorRow);
  },

  /** Visitors by ordinal (confirming in-memory index candidates). */
  async selectVisitorsByOrd(db: Q, ords: number[]): Promise<{ ord: number; visitor_key: string }[]> {
    if (ords.length === 0) return [];
    const rows = await db.selectFrom('analytics_visitors').select(['ord', 'visitor_key']).where('ord', 'in', ords).execute();
    return rows.map(visitorRow);
  },
};

export type AnalyticsStore = typeof analyticsStore;
