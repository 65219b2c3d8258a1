import { afterEach, beforeEach, expect, it } from 'vitest';
import { encodeSegment, type SegmentEvent } from '../../src/analytics/segments/codec.ts';
import { segmentStore } from '../../src/analytics/store/segment-store.ts';
import { chunkRows, analyticsStore as store, type VisitRow } from '../../src/analytics/store/store.ts';
import { CLS_AI, CLS_HUMAN } from '../../src/analytics/store/tables.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';

/** A tiny deterministic PRNG (mulberry32). */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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

  it('counts exact distinct visitors per path and site-wide over day ranges', async () => {
    const rnd = prng(7);
    const paths = ['/a', '/b', '/c', '/d'];
    await store.insertPaths(
      t.db.kysely,
      paths.map((p) => ({ project_ord: ord, path_hash: `h${p}`, path: p })),
    );
    const ids = new Map(
      (
        await store.selectPathIds(
          t.db.kysely,
          ord,
          paths.map((p) => `h${p}`),
        )
      ).map((r) => [r.id, r.path_hash.slice(1)]),
    );
    const idList = [...ids.keys()];
    const visits: VisitRow[] = [];
    for (let i = 0; i < 600; i++) {
      visits.push({
        project_ord: ord,
        day: 100 + Math.floor(rnd() * 10),
        path_id: idList[Math.floor(rnd() * idList.length)] as number,
        visitor_ord: 1 + Math.floor(rnd() * 40),
        cls: rnd() < 0.7 ? CLS_HUMAN : CLS_AI,
      });
    }
    for (const c of chunkRows(visits, 5, t.db.caps.maxParams, 100)) await store.insertVisits(t.db.kysely, c);
    await store.insertVisits(t.db.kysely, visits.slice(0, 50)); // duplicates change nothing

    for (const [fromDay, toDay] of [
      [null, null],
      [102, 105],
      [100, 101],
      [109, null],
      [null, 103],
    ] as [number | null, number | null][]) {
      const inRange = visits.filter((v) => (fromDay === null || v.day >= fromDay) && (toDay === null || v.day < toDay));
      const expected = new Map<string, { h: Set<number>; a: Set<number>; t: Set<number> }>();
      const site = { h: new Set<number>(), a: new Set<number>(), t: new Set<number>() };
      for (const v of inRange) {
        const p = ids.get(v.path_id) as string;
        let e = expected.get(p);
        if (!e) {
          e = { h: new Set(), a: new Set(), t: new Set() };
          expected.set(p, e);
        }
        (v.cls === CLS_HUMAN ? e.h : e.a).add(v.visitor_ord);
        e.t.add(v.visitor_ord);
        (v.cls === CLS_HUMAN ? site.h : site.a).add(v.visitor_ord);
        site.t.add(v.visitor_ord);
      }
      const range = { fromDay, toDay };
      const rows = await store.visitorsByPathNamed(t.db.kysely, ord, range);
      expect(rows.map((r) => r.path).sort()).toEqual([...expected.keys()].sort());
      for (const r of rows) {
        const e = expected.get(r.path)!;
        expect([r.human, r.ai, r.total]).toEqual([e.h.size, e.a.size, e.t.size]);
      }
      expect(await store.visitorTotals(t.db.kysely, ord, range)).toEqual({ human: site.h.size, ai: site.a.size, total: site.t.size });
    }
  });
});
