import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeSegment, type SegmentEvent } from '../../src/analytics/segments/codec.ts';
import { segmentStore } from '../../src/analytics/store/segment-store.ts';
import { reclaimDue } from '../../src/analytics/store/sql-analytics-store.ts';
import { analyticsStore as store } from '../../src/analytics/store/store.ts';
import { summaryStore } from '../../src/analytics/store/summary-store.ts';
import { createBulkWriter } from '../../src/db/bulk.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';

describeEachDialect('analytics store', (dialect) => {
  let t: TestDb;
  let ord: number;

  beforeEach(async () => {
    t = await openTestDb(dialect);
    await t.db.kysely
      .insertInto('projects')
      .values({ id: 'prj_a', name: 'a', repository: 'r', ref: 'main', model: null, settings: '{}', visitor_secret: 's', created_at: 1 })
      .execute();
    await store.insertProjectOrd(t.db.kysely, 'prj_a');
    await store.insertProjectOrd(t.db.kysely, 'prj_a');
    ord = (await store.selectProjectOrd(t.db.kysely, 'prj_a')) as number;
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('gives a project one ordinal and bumps its data version', async () => {
    expect(typeof ord).toBe('number');
    expect(await store.selectProjectOrd(t.db.kysely, 'prj_missing')).toBeUndefined();
    expect(await store.selectVersion(t.db.kysely, ord)).toBe(0);
    await store.bumpVersion(t.db.kysely, ord);
    await store.bumpVersion(t.db.kysely, ord);
    expect(await store.selectVersion(t.db.kysely, ord)).toBe(2);
  });

  it('dictionaries are insert-or-select: the same key keeps its id', async () => {
    await store.insertPaths(t.db.kysely, [
      { project_ord: ord, path_hash: 'h1', path: '/a' },
      { project_ord: ord, path_hash: 'h2', path: '/b' },
    ]);
    const first = await store.selectPathIds(t.db.kysely, ord, ['h1', 'h2']);
    await store.insertPaths(t.db.kysely, [
      { project_ord: ord, path_hash: 'h2', path: '/b' },
      { project_ord: ord, path_hash: 'h3', path: '/c' },
    ]);
    const second = await store.selectPathIds(t.db.kysely, ord, ['h1', 'h2', 'h3']);
    expect(second).toHaveLength(3);
    for (const r of first) expect(second.find((s) => s.path_hash === r.path_hash)?.id).toBe(r.id);
  });

  it('visitors: chunks of consecutive ordinals per project, read back in ordinal order after a watermark and by ordinal', async () => {
    await t.db.kysely
      .insertInto('projects')
      .values({ id: 'prj_b', name: 'b', repository: 'r', ref: 'main', model: null, settings: '{}', visitor_secret: 's', created_at: 1 })
      .execute();
    await store.insertProjectOrd(t.db.kysely, 'prj_b');
    const other = (await store.selectProjectOrd(t.db.kysely, 'prj_b')) as number;
    // Keys of every stored form: hashes (18 bytes), UUIDs (17), texts of several lengths; more than one chunk's worth.
    const keys = Array.from({ length: 300 }, (_, i) =>
      i % 3 === 0 ? `h:${String(i).padStart(22, 'A')}` : i % 3 === 1 ? `v:00000000-0000-4000-8000-${String(i).padStart(12, '0')}` : `v:text-${i}`,
    );
    keys.push(`v:${'x'.repeat(3000)}`);
    const { visitors: inserted, chunkStarts } = await t.db.kysely.transaction().execute(async (trx) => {
      const mine = await store.insertVisitors(trx, ord, 1, keys);
      await store.insertVisitors(trx, other, 1, ['v:elsewhere']);
      return mine;
    });
    expect(inserted.map((r) => r.visitor_key).sort()).toEqual([...keys].sort());
    expect(inserted.map((r) => r.ord).sort((a, b) => a - b)).toEqual(keys.map((_, i) => i + 1));
    // One width per chunk, each within the bound: hashes 2 chunks (100 × 18 bytes fit one), UUIDs 1, texts by length, the long one alone.
    expect(chunkStarts.length).toBeGreaterThan(3);
    expect(chunkStarts[0]).toBe(1);
    const byOrd = new Map(inserted.map((r) => [r.ord, r.visitor_key]));

    const all = await store.selectVisitorsAfter(t.db.kysely, ord, 0);
    expect(all.map((r) => r.ord)).toEqual(keys.map((_, i) => i + 1));
    for (const r of all) expect(r.visitor_key).toBe(byOrd.get(r.ord));
    const chunks = await store.selectVisitorChunksAfter(t.db.kysely, ord, 0, 1000);
    expect(chunks.map((c) => c.firstOrd)).toEqual(chunkStarts);
    const tail = await store.selectVisitorChunksAfter(t.db.kysely, ord, chunks[0]!.firstOrd + chunks[0]!.keys.length - 1, 2);
    expect(tail).toEqual(chunks.slice(1, 3));
    expect(await store.selectVisitorsAfter(t.db.kysely, other, 0)).toEqual([{ ord: 1, visitor_key: 'v:elsewhere' }]);

    const startOf = (o: number) => Math.max(...chunkStarts.filter((s) => s <= o));
    const some = [all[3]!.ord, all[77]!.ord, all[299]!.ord, all[300]!.ord, all[150]!.ord];
    const found = await store.selectVisitorsByOrd(
      createBulkWriter(t.db),
      t.db.kysely,
      ord,
      some.map((o) => ({ first: startOf(o), ord: o })),
    );
    expect(found.sort((a, b) => a.ord - b.ord)).toEqual(some.sort((a, b) => a - b).map((o) => ({ ord: o, visitor_key: byOrd.get(o) })));
    // An ordinal past its chunk's end, or of a chunk that is not there, is left out; other projects' chunks are not read.
    expect(
      await store.selectVisitorsByOrd(createBulkWriter(t.db), t.db.kysely, ord, [
        { first: 301, ord: 302 },
        { first: 10 ** 9, ord: 10 ** 9 },
      ]),
    ).toEqual([]);
    expect(await store.selectVisitorsByOrd(createBulkWriter(t.db), t.db.kysely, other, [{ first: 1, ord: 1 }])).toEqual([
      { ord: 1, visitor_key: 'v:elsewhere' },
    ]);
    expect(await store.selectVisitorsByOrd(createBulkWriter(t.db), t.db.kysely, ord, [])).toEqual([]);
  });

  it('reclaimSpace: vacuums the rewritten tables on PostgreSQL, nothing to do on SQLite', async () => {
    const db = t.db.kysely;
    // Whether the dead rows' space then becomes free depends on the oldest snapshot of the whole database (tests
    // share one), so this checks that the vacuum ran; bench/README.md ("Scale") measures the space it gives back.
    const vacuums = async () =>
      Number(
        (await sql<{ n: string }>`select coalesce(sum(vacuum_count), 0) as n from pg_stat_all_tables where relid = 'analytics_segments'::regclass`.execute(db))
          .rows[0]?.n,
      );
    for (let seq = 1; seq <= 4; seq++) await segmentStore.insertSegment(db, ord, 1, seq, 1, crypto.randomBytes(32 * 1024));
    await segmentStore.deleteSegments(db, ord, 1, [1, 2]);
    const before = dialect === 'postgres' ? await vacuums() : 0;
    await t.db.caps.reclaimSpace(db, ['analytics_segments', 'analytics_day_summaries']);
    if (dialect === 'postgres') expect(await vacuums()).toBe(before + 1);
    expect(await segmentStore.countEvents(db, ord)).toBe(2);
  });

  it('keeps raw events as day segments and counts them', async () => {
    const ev = (ts: number, dedup: bigint | null): SegmentEvent => ({
      ts,
      pathId: 1,
      rawPath: null,
      visitor: 1,
      uaId: null,
      accept: null,
      method: 'GET',
      status: 200,
      referrer: null,
      cls: 'human',
      category: null,
      rule: null,
      rulesVersion: 'r',
      qualifying: true,
      source: 'import',
      dedup,
    });
    const day = 3;
    await segmentStore.insertSegment(t.db.kysely, ord, day, 1, 2, encodeSegment([ev(day * 86_400_000, 1n), ev(day * 86_400_000 + 1, null)]));
    await segmentStore.insertSegment(t.db.kysely, ord, day, 2, 1, encodeSegment([ev(day * 86_400_000 + 2, 2n)]));
    await segmentStore.insertSegment(t.db.kysely, ord, day + 1, 2, 1, encodeSegment([ev((day + 1) * 86_400_000, null)]));
    expect(await segmentStore.countEvents(t.db.kysely, ord)).toBe(4);
    expect(await segmentStore.selectDays(t.db.kysely, ord)).toEqual([day, day + 1]);
    expect((await segmentStore.selectDaySegments(t.db.kysely, ord, day, 1)).map((s) => s.seq)).toEqual([2]);
    // With the day's version (0: none recorded here); then what compaction reads of it: sizes, and picked segments by seq.
    expect(await segmentStore.selectCompactable(t.db.kysely, day + 2, 1, 10)).toEqual([{ projectOrd: ord, day, version: 0 }]);
    expect(await segmentStore.selectDaySegmentSizes(t.db.kysely, ord, day)).toEqual([
      { seq: 1, events: 2 },
      { seq: 2, events: 1 },
    ]);
    expect((await segmentStore.selectSegmentsBySeq(t.db.kysely, ord, day, [2, 7])).map((s) => [s.seq, s.events])).toEqual([[2, 1]]);
    expect(await segmentStore.deleteSegments(t.db.kysely, ord, day, [1, 2, 9])).toBe(2);
    expect(await segmentStore.countEvents(t.db.kysely, ord)).toBe(1);
  });

  it('day versions: one upsert per touched day, has_data stays 1 once set, a rewrite records its version', async () => {
    const all = { fromDay: null, toDay: null };
    await summaryStore.bumpDayVersions(t.db.kysely, ord, [
      { day: 100, hasData: false },
      { day: 101, hasData: true },
    ]);
    await summaryStore.bumpDayVersions(t.db.kysely, ord, [
      { day: 100, hasData: true },
      { day: 101, hasData: false },
      { day: 102, hasData: false },
    ]);
    expect(await summaryStore.selectDayVersions(t.db.kysely, ord, all)).toEqual([
      { day: 100, version: 2, rewritten: 0, hasData: true },
      { day: 101, version: 2, rewritten: 0, hasData: true },
      { day: 102, version: 1, rewritten: 0, hasData: false },
    ]);
    await summaryStore.rewriteDay(t.db.kysely, ord, 101, false);
    await summaryStore.rewriteDay(t.db.kysely, ord, 103, false);
    await summaryStore.bumpDayVersions(t.db.kysely, ord, [{ day: 101, hasData: false }]);
    expect(await summaryStore.selectDayVersions(t.db.kysely, ord, { fromDay: 101, toDay: 104 })).toEqual([
      { day: 101, version: 4, rewritten: 3, hasData: true },
      { day: 102, version: 1, rewritten: 0, hasData: false },
      { day: 103, version: 1, rewritten: 1, hasData: false },
    ]);
    expect((await summaryStore.selectStaleDays(t.db.kysely, 100)).filter((d) => d.projectOrd === ord).map((d) => [d.day, d.version])).toEqual([
      [100, 2],
      [101, 4],
      [102, 1],
      [103, 1],
    ]);
    await summaryStore.upsertSummary(t.db.kysely, ord, 101, 4, new Uint8Array([1]));
    expect((await summaryStore.selectStaleDays(t.db.kysely, 100)).filter((d) => d.projectOrd === ord).map((d) => d.day)).toEqual([100, 102, 103]);
  });
});

describe('reclaimDue (when the background work vacuums)', () => {
  it('only after rows were replaced since the last reclaim, and at most once a minute', () => {
    const never = Number.NEGATIVE_INFINITY;
    // An idle or read-only process (nothing merged or sealed) never vacuums.
    expect(reclaimDue({ replaced: 0, replacedAtLast: 0, now: 0, last: never })).toBe(false);
    expect(reclaimDue({ replaced: 7, replacedAtLast: 7, now: 10 * 60_000, last: 0 })).toBe(false);
    // Rows replaced: the first time at once, then not before a minute has passed.
    expect(reclaimDue({ replaced: 3, replacedAtLast: 0, now: 0, last: never })).toBe(true);
    expect(reclaimDue({ replaced: 9, replacedAtLast: 3, now: 59_999, last: 0 })).toBe(false);
    expect(reclaimDue({ replaced: 9, replacedAtLast: 3, now: 60_000, last: 0 })).toBe(true);
  });
});
