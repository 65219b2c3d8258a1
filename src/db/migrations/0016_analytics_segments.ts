import crypto from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { encodeSegment, type SegmentEvent } from '../../analytics/segments/codec.ts';
import { dedupHash, dedupHashHex, dedupKeyDay } from '../../analytics/segments/dedup.ts';
import type { DialectCaps } from '../dialect.ts';

// `analytics_segments`: raw events as compressed columnar segments per (project, day) (src/analytics/segments,
// src/analytics/store/segment-store.ts) instead of one `analytics_events` row each (~300 bytes an event with
// its indexes). The rows stored so far are moved here, then the table and its indexes are dropped.
// `analytics_dedup_keys`: the hashes of import keys that name no day (dedup.ts dedupKeyDay), which the writer
// looks up project-wide; a key with a day is looked up among its day's segments.
//
// Bounded memory on a big table: rows are read in id order a page at a time and buffered per (project, day);
// when MOVE_BUFFER events are buffered, every buffer becomes a segment. A day can so end up in several
// segments; compaction (the store's background work) merges them later. User agents of rows from before
// migration 0007 (text, no ua_id) join the dictionary here, as segments refer to them by id. A moved
// segment's seq is a counter of its project; the project's data version is raised to at least that counter
// so that a later ingest transaction (whose segment takes the new version as seq) stays above it.
export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  await db.schema
    .createTable('analytics_segments')
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('seq', caps.bigintType, (c) => c.notNull())
    .addColumn('events', 'integer', (c) => c.notNull())
    .addColumn('data', caps.blobType, (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_segments_pk', ['project_ord', 'day', 'seq'])
    .execute();
  let dedup = db.schema
    .createTable('analytics_dedup_keys')
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_dedup_keys_pk', ['project_ord', 'hash']);
  if (caps.withoutRowid) dedup = dedup.modifyEnd(sql`without rowid`);
  await dedup.execute();

  const seqs = new Map<number, number>();
  const buffers = new Map<string, { ord: number; day: number; events: SegmentEvent[] }>();
  let buffered = 0;
  const flush = async () => {
    for (const b of buffers.values()) {
      const seq = (seqs.get(b.ord) ?? 0) + 1;
      seqs.set(b.ord, seq);
      const data = encodeSegment(b.events);
      await db.insertInto('analytics_segments').values({ project_ord: b.ord, day: b.day, seq, events: b.events.length, data }).execute();
    }
    buffers.clear();
    buffered = 0;
  };

  for (let afterId = 0; ; ) {
    const rows = await db.selectFrom('analytics_events').selectAll().where('id', '>', afterId).orderBy('id').limit(MOVE_PAGE).execute();
    if (rows.length === 0) break;
    const legacyUa = await legacyUserAgentIds(db, rows);
    const unscoped: { project_ord: number; hash: string }[] = [];
    for (const r of rows) {
      const ord = Number(r.project_ord);
      const day = Number(r.day);
      const key = `${ord}:${day}`;
      let b = buffers.get(key);
      if (!b) {
        b = { ord, day, events: [] };
        buffers.set(key, b);
      }
      const uaId = r.ua_id !== null ? Number(r.ua_id) : r.user_agent !== null ? (legacyUa.get(`${ord}\n${r.user_agent}`) as number) : null;
      b.events.push({
        ts: Number(r.ts),
        pathId: Number(r.path_id),
        rawPath: r.raw_path === '' ? null : r.raw_path,
        visitor: Number(r.visitor_ord),
        uaId,
        accept: r.accept,
        method: r.method,
        status: r.status === null ? null : Number(r.status),
        referrer: r.referrer,
        cls: r.class,
        category: r.category,
        rule: r.rule,
        rulesVersion: r.rules_version,
        qualifying: Number(r.qualifying) === 1,
        source: r.source,
        dedup: r.dedup_key === null ? null : dedupHash(r.dedup_key),
      });
      if (r.dedup_key !== null && dedupKeyDay(r.dedup_key) !== day) unscoped.push({ project_ord: ord, hash: dedupHashHex(dedupHash(r.dedup_key)) });
      buffered++;
    }
    for (let i = 0; i < unscoped.length; i += 500) {
      await db
        .insertInto('analytics_dedup_keys')
        .values(unscoped.slice(i, i + 500))
        .onConflict((oc) => oc.columns(['project_ord', 'hash']).doNothing())
        .execute();
    }
    if (buffered >= MOVE_BUFFER) await flush();
    afterId = Number(rows[rows.length - 1].id);
  }
  await flush();
  for (const [ord, seq] of seqs) {
    await db
      .updateTable('analytics_projects')
      .set({ version: sql`case when version < ${seq} then ${seq} else version end` })
      .where('ord', '=', ord)
      .execute();
  }
  await db.schema.dropTable('analytics_events').execute();
}

/** Rows read per query. */
const MOVE_PAGE = 10_000;
/** Events buffered before they are written as segments. */
const MOVE_BUFFER = 200_000;

/** Dictionary ids of the user agents stored as text (rows from before migration 0007), by `ord\nuser agent`. */
async function legacyUserAgentIds(db: Kysely<any>, rows: Record<string, any>[]): Promise<Map<string, number>> {
  const byHash = new Map<string, { ord: number; ua: string }>();
  for (const r of rows) {
    if (r.ua_id !== null || r.user_agent === null) continue;
    const ord = Number(r.project_ord);
    byHash.set(`${ord}:${crypto.createHash('sha256').update(r.user_agent).digest('hex')}`, { ord, ua: r.user_agent });
  }
  const out = new Map<string, number>();
  for (const [key, { ord, ua }] of byHash) {
    const hash = key.slice(key.indexOf(':') + 1);
    await db
      .insertInto('analytics_user_agents')
      .values({ project_ord: ord, ua_hash: hash, user_agent: ua })
      .onConflict((oc) => oc.columns(['project_ord', 'ua_hash']).doNothing())
      .execute();
    const r = await db.selectFrom('analytics_user_agents').select('id').where('project_ord', '=', ord).where('ua_hash', '=', hash).executeTakeFirstOrThrow();
    out.set(`${ord}\n${ua}`, Number(r.id));
  }
  return out;
}
