import { afterEach, beforeEach, expect, it } from 'vitest';
import { encodeSegment, type SegmentEvent } from '../../src/analytics/segments/codec.ts';
import { segmentStore } from '../../src/analytics/store/segment-store.ts';
import { analyticsStore as store } from '../../src/analytics/store/store.ts';
import { summaryStore } from '../../src/analytics/store/summary-store.ts';
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

    // Visitors: the ingest writer keeps keys unique itself (migration 0008, visitor-index.ts).
    await store.insertVisitors(t.db.kysely, [{ project_ord: ord, visitor_key: 'v:1' }]);
    await store.insertVisitors(t.db.kysely, [{ project_ord: ord, visitor_key: 'v:2' }]);
    const vs = await store.selectVisitorOrds(t.db.kysely, ord, ['v:1', 'v:2', 'v:3']);
    expect(vs.map((v) => v.visitor_key).sort()).toEqual(['v:1', 'v:2']);
    expect(new Set(vs.map((v) => v.ord)).size).toBe(2);
  });

  it('visitors: insert returning ordinals, read back by ordinal and in ordinal order after a watermark', async () => {
    await t.db.kysely
      .insertInto('projects')
      .values({ id: 'prj_b', name: 'b', repository: 'r', ref: 'main', model: null, settings: '{}', visitor_secret: 's', created_at: 1 })
      .execute();
    await store.insertProjectOrd(t.db.kysely, 'prj_b');
    const other = (await store.selectProjectOrd(t.db.kysely, 'prj_b')) as number;
    const keys = Array.from({ length: 150 }, (_, i) => `v:${i}`);
    const inserted = await t.db.kysely.transaction().execute(async (trx) => {
      const { createBulkWriter } = await import('../../src/db/bulk.ts');
      const bulk = createBulkWriter(t.db);
      const mine = await store.bulkInsertVisitorsReturning(
        bulk,
        trx,
        keys.map((k) => [ord, k]),
      );
      await store.bulkInsertVisitorsReturning(bulk, trx, [[other, 'v:elsewhere']]);
      return mine;
    });
    expect(inserted.map((r) => r.visitor_key).sort()).toEqual([...keys].sort());
    expect(new Set(inserted.map((r) => r.ord)).size).toBe(keys.length);
    const byOrd = new Map(inserted.map((r) => [r.ord, r.visitor_key]));

    const all = await store.selectVisitorsAfter(t.db.kysely, ord, 0, 1000);
    expect(all.map((r) => r.ord)).toEqual([...byOrd.keys()].sort((a, b) => a - b));
    for (const r of all) expect(r.visitor_key).toBe(byOrd.get(r.ord));
    const tail = await store.selectVisitorsAfter(t.db.kysely, ord, all[99]!.ord, 20);
    expect(tail).toEqual(all.slice(100, 120));
    expect((await store.selectVisitorsAfter(t.db.kysely, other, 0, 10)).map((r) => r.visitor_key)).toEqual(['v:elsewhere']);

    const some = [all[3]!.ord, all[77]!.ord, 10 ** 9];
    expect((await store.selectVisitorsByOrd(t.db.kysely, some)).sort((a, b) => a.ord - b.ord)).toEqual([all[3], all[77]]);
    expect(await store.selectVisitorsByOrd(t.db.kysely, [])).toEqual([]);
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
    expect(await segmentStore.selectCompactable(t.db.kysely, day + 2, 1, 10)).toEqual([{ projectOrd: ord, day }]);
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
