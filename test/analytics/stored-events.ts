// Tests' view of the stored raw events: decoded from the day segments (analytics_segments) into rows shaped as
// the old `analytics_events` rows were, in storage order (project, day, seq, then time), and a way to rewrite
// them (stale classes, as a rules change leaves them).
import { type Kysely, sql } from 'kysely';
import { decodeSegment, encodeSegment, readSegmentHeader, type SegmentEvent, segmentEvents } from '../../src/analytics/segments/codec.ts';
import { summaryStore } from '../../src/analytics/store/summary-store.ts';
import type { Database } from '../../src/db/index.ts';
import type { DB } from '../../src/db/schema.ts';

export interface StoredRow {
  project_ord: number;
  day: number;
  seq: number;
  ts: number;
  path_id: number;
  /** '' = the same as the normalised path. */
  raw_path: string;
  visitor_ord: number;
  ua_id: number | null;
  accept: string | null;
  method: string | null;
  status: number | null;
  referrer: string | null;
  class: 'human' | 'ai' | 'crawler';
  category: string | null;
  rule: string | null;
  rules_version: string;
  qualifying: number;
  source: string;
  dedup: bigint | null;
}

function toRow(projectOrd: number, day: number, seq: number, e: SegmentEvent): StoredRow {
  return {
    project_ord: projectOrd,
    day,
    seq,
    ts: e.ts,
    path_id: e.pathId,
    raw_path: e.rawPath ?? '',
    visitor_ord: e.visitor,
    ua_id: e.uaId,
    accept: e.accept,
    method: e.method,
    status: e.status,
    referrer: e.referrer,
    class: e.cls,
    category: e.category,
    rule: e.rule,
    rules_version: e.rulesVersion,
    qualifying: e.qualifying ? 1 : 0,
    source: e.source,
    dedup: e.dedup,
  };
}

async function segments(db: Kysely<DB>, projectOrd?: number) {
  return db
    .selectFrom('analytics_segments')
    .selectAll()
    .$if(projectOrd !== undefined, (q) => q.where('project_ord', '=', projectOrd as number))
    .orderBy('project_ord')
    .orderBy('day')
    .orderBy('seq')
    .execute();
}

/** Every stored raw event (of one project, or all), in storage order. */
export async function storedRows(db: Database | Kysely<DB>, projectOrd?: number): Promise<StoredRow[]> {
  const k = 'kysely' in db ? db.kysely : db;
  const out: StoredRow[] = [];
  for (const s of await segments(k, projectOrd)) {
    for (const e of segmentEvents(decodeSegment(s.data))) out.push(toRow(Number(s.project_ord), Number(s.day), Number(s.seq), e));
  }
  return out;
}

/**
 * Rewrites every stored event with `fn` (segment by segment, same seqs), and, as every writer that replaces
 * segments does, marks each day rewritten (a new day version, summary-store.ts) and bumps the project's version.
 */
export async function rewriteStoredEvents(db: Database | Kysely<DB>, fn: (e: SegmentEvent) => SegmentEvent, projectOrd?: number): Promise<void> {
  const k = 'kysely' in db ? db.kysely : db;
  const days = new Map<string, { ord: number; day: number }>();
  for (const s of await segments(k, projectOrd)) {
    days.set(`${s.project_ord}:${s.day}`, { ord: Number(s.project_ord), day: Number(s.day) });
    const data = encodeSegment(segmentEvents(decodeSegment(s.data)).map(fn));
    await k
      .updateTable('analytics_segments')
      .set({ data, events: readSegmentHeader(data).events })
      .where('project_ord', '=', s.project_ord)
      .where('day', '=', s.day)
      .where('seq', '=', s.seq)
      .execute();
  }
  for (const { ord, day } of days.values()) {
    await summaryStore.rewriteDay(k, ord, day, true);
    await k.updateTable('analytics_projects').set({ version: sql`version + 1` }).where('ord', '=', ord).execute();
  }
}

/** A raw event row as migration 0016 finds it in `analytics_events` (dedup_key: the import key itself). */
export type LegacyRow = Omit<StoredRow, 'seq' | 'dedup'> & { user_agent: string | null; dedup_key: string | null };

/**
 * Back to the schema before migration 0016: `analytics_events` (as migrations 0003 and 0007 left it, indexes
 * included) holding `rows` (default: the stored events, without their import keys, which segments keep only as
 * hashes), `analytics_segments` and `analytics_dedup_keys` gone, 0016 not applied. `migrate` then moves the rows into segments again.
 */
export async function rewindToEventRows(db: Database, rows?: LegacyRow[]): Promise<void> {
  const k = db.kysely as Kysely<any>;
  const legacy = rows ?? (await storedRows(db)).map(({ seq: _seq, dedup: _dedup, ...r }) => ({ ...r, user_agent: null, dedup_key: null }));
  await db.caps
    .autoIdColumn(k.schema.createTable('analytics_events'), 'id')
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('ts', db.caps.bigintType, (c) => c.notNull())
    .addColumn('day', 'integer', (c) => c.notNull())
    .addColumn('path_id', db.caps.bigintType, (c) => c.notNull())
    .addColumn('raw_path', 'text', (c) => c.notNull())
    .addColumn('visitor_ord', db.caps.bigintType, (c) => c.notNull())
    .addColumn('user_agent', 'text')
    .addColumn('accept', 'text')
    .addColumn('method', 'text')
    .addColumn('status', 'integer')
    .addColumn('referrer', 'text')
    .addColumn('class', 'text', (c) => c.notNull())
    .addColumn('category', 'text')
    .addColumn('rule', 'text')
    .addColumn('rules_version', 'text', (c) => c.notNull())
    .addColumn('qualifying', 'integer', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('dedup_key', 'text')
    .addColumn('ua_id', db.caps.bigintType)
    .execute();
  await k.schema.createIndex('analytics_events_day').on('analytics_events').columns(['project_ord', 'day']).execute();
  await k.schema.createIndex('analytics_events_project_id').on('analytics_events').columns(['project_ord', 'id']).execute();
  await k.schema.createIndex('analytics_events_dedup').unique().on('analytics_events').columns(['project_ord', 'dedup_key']).execute();
  for (let i = 0; i < legacy.length; i += 500)
    await k
      .insertInto('analytics_events')
      .values(legacy.slice(i, i + 500))
      .execute();
  await k.schema.dropTable('analytics_segments').execute();
  await k.schema.dropTable('analytics_dedup_keys').execute();
  await k.deleteFrom('kysely_migration').where('name', '=', '0016_analytics_segments').execute();
}
