// SQL of the raw-event segments (`analytics_segments`, migration 0016): one function per query, callers pass a
// Kysely instance or a transaction. The encoding is src/analytics/segments/codec.ts; this module only moves
// blobs. See tables.ts for what `seq` means.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.ts';

type Q = Kysely<DB>;

export interface StoredSegment {
  seq: number;
  events: number;
  data: Uint8Array;
}

export const segmentStore = {
  async insertSegment(db: Q, projectOrd: number, day: number, seq: number, events: number, data: Uint8Array): Promise<void> {
    await db.insertInto('analytics_segments').values({ project_ord: projectOrd, day, seq, events, data }).execute();
  },

  /** A (project, day)'s segments with a seq above `afterSeq`, in seq order. */
  async selectDaySegments(db: Q, projectOrd: number, day: number, afterSeq = -1): Promise<StoredSegment[]> {
    const rows = await db
      .selectFrom('analytics_segments')
      .select(['seq', 'events', 'data'])
      .where('project_ord', '=', projectOrd)
      .where('day', '=', day)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .execute();
    return rows.map((r) => ({ seq: Number(r.seq), events: Number(r.events), data: r.data }));
  },

  /** A (project, day)'s segments' seqs and event counts (not their bytes), in seq order (compaction's choice). */
  async selectDaySegmentSizes(db: Q, projectOrd: number, day: number): Promise<{ seq: number; events: number }[]> {
    const rows = await db
      .selectFrom('analytics_segments')
      .select(['seq', 'events'])
      .where('project_ord', '=', projectOrd)
      .where('day', '=', day)
      .orderBy('seq')
      .execute();
    return rows.map((r) => ({ seq: Number(r.seq), events: Number(r.events) }));
  },

  /** A (project, day)'s segments of these seqs (those still there), in seq order. */
  async selectSegmentsBySeq(db: Q, projectOrd: number, day: number, seqs: readonly number[]): Promise<StoredSegment[]> {
    if (seqs.length === 0) return [];
    const rows = await db
      .selectFrom('analytics_segments')
      .select(['seq', 'events', 'data'])
      .where('project_ord', '=', projectOrd)
      .where('day', '=', day)
      .where('seq', 'in', [...seqs])
      .orderBy('seq')
      .execute();
    return rows.map((r) => ({ seq: Number(r.seq), events: Number(r.events), data: r.data }));
  },

  /** The days a project has segments on, ascending. */
  async selectDays(db: Q, projectOrd: number): Promise<number[]> {
    const rows = await db.selectFrom('analytics_segments').select('day').distinct().where('project_ord', '=', projectOrd).orderBy('day').execute();
    return rows.map((r) => Number(r.day));
  },

  /** Deletes a (project, day)'s segments of these seqs; returns how many were deleted. */
  async deleteSegments(db: Q, projectOrd: number, day: number, seqs: number[]): Promise<number> {
    if (seqs.length === 0) return 0;
    const r = await db
      .deleteFrom('analytics_segments')
      .where('project_ord', '=', projectOrd)
      .where('day', '=', day)
      .where('seq', 'in', seqs)
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  },

  async countEvents(db: Q, projectOrd: number): Promise<number> {
    const r = await db
      .selectFrom('analytics_segments')
      .select(sql<number>`coalesce(sum(events), 0)`.as('n'))
      .where('project_ord', '=', projectOrd)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  },

  /**
   * Up to `limit` (project, day)s before `beforeDay` with more than `minSegments` segments whose stored summary
   * is of the day's current version or absent (compaction's candidates), with the day's version.
   */
  async selectCompactable(db: Q, beforeDay: number, minSegments: number, limit: number): Promise<{ projectOrd: number; day: number; version: number }[]> {
    const rows = await db
      .selectFrom('analytics_segments as g')
      .leftJoin('analytics_day_summaries as s', (j) => j.onRef('s.project_ord', '=', 'g.project_ord').onRef('s.day', '=', 'g.day'))
      .leftJoin('analytics_day_versions as v', (j) => j.onRef('v.project_ord', '=', 'g.project_ord').onRef('v.day', '=', 'g.day'))
      .select(['g.project_ord', 'g.day', sql<number>`max(v.version)`.as('version')])
      .where('g.day', '<', beforeDay)
      // A day whose stored summary is behind waits for the sealer: compaction carries only a current summary
      // (segment-days.ts compactDay), and one behind could then no longer be extended (a rebuild on its next read).
      .where((eb) => eb.or([eb('s.version', 'is', null), eb('s.version', '=', eb.ref('v.version'))]))
      .groupBy(['g.project_ord', 'g.day'])
      .having(sql`count(*)`, '>', minSegments)
      .orderBy('g.project_ord')
      .orderBy('g.day')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ projectOrd: Number(r.project_ord), day: Number(r.day), version: Number(r.version ?? 0) }));
  },

  /** Texts of dictionary paths by id. */
  async selectPathsById(db: Q, ids: number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (let i = 0; i < ids.length; i += 5000) {
      const rows = await db
        .selectFrom('analytics_paths')
        .select(['id', 'path'])
        .where('id', 'in', ids.slice(i, i + 5000))
        .execute();
      for (const r of rows) out.set(Number(r.id), r.path);
    }
    return out;
  },

  /** Texts of dictionary user agents by id. */
  async selectUserAgentsById(db: Q, ids: number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (let i = 0; i < ids.length; i += 5000) {
      const rows = await db
        .selectFrom('analytics_user_agents')
        .select(['id', 'user_agent'])
        .where('id', 'in', ids.slice(i, i + 5000))
        .execute();
      for (const r of rows) out.set(Number(r.id), r.user_agent);
    }
    return out;
  },

  /** Which of these project-wide dedup hashes (hex) are stored. */
  async selectDedupKeys(db: Q, projectOrd: number, hashes: string[]): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < hashes.length; i += 5000) {
      const rows = await db
        .selectFrom('analytics_dedup_keys')
        .select('hash')
        .where('project_ord', '=', projectOrd)
        .where('hash', 'in', hashes.slice(i, i + 5000))
        .execute();
      for (const r of rows) out.push(r.hash);
    }
    return out;
  },

  async insertDedupKeys(db: Q, projectOrd: number, hashes: string[]): Promise<void> {
    for (let i = 0; i < hashes.length; i += 5000) {
      await db
        .insertInto('analytics_dedup_keys')
        .values(hashes.slice(i, i + 5000).map((hash) => ({ project_ord: projectOrd, hash })))
        .onConflict((oc) => oc.columns(['project_ord', 'hash']).doNothing())
        .execute();
    }
  },

  /** Bumps the project's data version and returns the new one (takes the project's write lock). */
  async bumpVersionReturning(db: Q, projectOrd: number): Promise<number> {
    const r = await db
      .updateTable('analytics_projects')
      .set({ version: sql`version + 1` })
      .where('ord', '=', projectOrd)
      .returning('version')
      .executeTakeFirstOrThrow();
    return Number(r.version);
  },
};
