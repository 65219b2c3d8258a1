// The day summaries at work (src/analytics/export/summary-service.ts) over both dialects: answers equal to the
// brute-force count over the stored events, across processes (own database handles), sealing, extension of a
// cached summary by later segments, and the cases that must rebuild instead (compaction, reclassification).
import fc from 'fast-check';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { visitorKey } from '../../src/analytics/classify/identity.ts';
import { countWindow } from '../../src/analytics/export/count-paths.ts';
import { type PathRow, sortRows } from '../../src/analytics/export/rows.ts';
import { createSummaryService, LONG_WINDOW_DAYS, SEAL_BEHIND } from '../../src/analytics/export/summary-service.ts';
import { encodeSegment } from '../../src/analytics/segments/codec.ts';
import { segmentStore } from '../../src/analytics/store/segment-store.ts';
import { analyticsStore } from '../../src/analytics/store/store.ts';
import { summaryStore } from '../../src/analytics/store/summary-store.ts';
import { testConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/index.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { createProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';
import { DAY_MS, START_MS } from './dataset.ts';
import { sqlAnalyticsService } from './services.ts';
import { rewriteStoredEvents, storedRows } from './stored-events.ts';

const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const AI_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';
const BOT_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const DAY0 = Math.floor(START_MS / DAY_MS);

interface Ev {
  day: number;
  page: number;
  visitor: number;
  ua: 0 | 1 | 2;
}

const wire = (e: Ev) => ({
  path: `/p${e.page}`,
  userAgent: [HUMAN_UA, AI_UA, BOT_UA][e.ua],
  visitorId: `v${e.visitor}`,
  timestamp: new Date(START_MS + e.day * DAY_MS + 1000 * e.visitor).toISOString(),
});

/** One process's analytics service over its own database handle. */
function serviceOn(db: Database) {
  const projects = createProjectService(createProjectsStore(db.kysely));
  const svc = sqlAnalyticsService({ config: { analytics: { ...testConfig().analytics, sealIntervalMs: 0 } }, db, projects, now: Date.now });
  return { projects, svc };
}

/** The visitors and views exports' first page, counted by brute force over the stored events. */
async function bruteForce(db: Database, projectId: string, fromDay: number | null, toDay: number | null) {
  const ord = (await analyticsStore.selectProjectOrd(db.kysely, projectId)) as number;
  const paths = new Map((await db.kysely.selectFrom('analytics_paths').select(['id', 'path']).execute()).map((r) => [Number(r.id), r.path]));
  const per = new Map<string, { h: Set<number>; a: Set<number>; vh: number; va: number }>();
  const all = { h: new Set<number>(), a: new Set<number>(), t: new Set<number>() };
  for (const e of await storedRows(db, ord)) {
    if (e.qualifying !== 1 || (fromDay !== null && e.day < fromDay) || (toDay !== null && e.day >= toDay)) continue;
    const path = paths.get(e.path_id) as string;
    const p = per.get(path) ?? { h: new Set(), a: new Set(), vh: 0, va: 0 };
    per.set(path, p);
    if (e.class === 'human') {
      p.h.add(e.visitor_ord);
      p.vh++;
      all.h.add(e.visitor_ord);
    } else {
      p.a.add(e.visitor_ord);
      p.va++;
      all.a.add(e.visitor_ord);
    }
    all.t.add(e.visitor_ord);
  }
  const page = (rows: PathRow[], totals: { human: number; ai: number; total: number }) => {
    const sorted = sortRows(rows);
    return { totals, rows: sorted.slice(0, 250), hasMore: sorted.length > 250 };
  };
  const visitors = page(
    [...per].map(([path, p]) => ({ path, human: p.h.size, ai: p.a.size, total: new Set([...p.h, ...p.a]).size })),
    { human: all.h.size, ai: all.a.size, total: all.t.size },
  );
  let vh = 0;
  let va = 0;
  for (const p of per.values()) {
    vh += p.vh;
    va += p.va;
  }
  const views = page(
    [...per].map(([path, p]) => ({ path, human: p.vh, ai: p.va, total: p.vh + p.va })),
    { human: vh, ai: va, total: vh + va },
  );
  return { visitors, views };
}

describeEachDialect('analytics day summaries', (dialect) => {
  let t: TestDb;
  let a: ReturnType<typeof serviceOn>;

  beforeAll(async () => {
    t = await openTestDb(dialect);
    a = serviceOn(t.db);
  });
  afterAll(async () => {
    await a?.svc.close();
    await t?.cleanup();
  });

  const all = (projectId: string, walkId: string, fromDay: number | null = null, toDay: number | null = null) =>
    ({ projectId, walkId, fromDay, toDay, offset: 0, limit: 250 }) as const;

  async function expectExact(s: ReturnType<typeof serviceOn>, projectId: string, walkId: string, f: number | null = null, to: number | null = null) {
    const want = await bruteForce(t.db, projectId, f, to);
    expect(await s.svc.store.visitors(all(projectId, walkId, f, to))).toEqual(want.visitors);
    expect(await s.svc.store.views(all(projectId, walkId, f, to))).toEqual(want.views);
  }

  it('answer exactly as the stored events count, for random datasets and windows, also after more events', async () => {
    const evArb = fc.record({
      day: fc.integer({ min: 0, max: 5 }),
      page: fc.integer({ min: 0, max: 6 }),
      visitor: fc.integer({ min: 0, max: 15 }),
      ua: fc.constantFrom(0, 1, 2) as fc.Arbitrary<0 | 1 | 2>,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(evArb, { minLength: 1, maxLength: 50 }),
        fc.array(evArb, { maxLength: 20 }),
        fc.integer({ min: 0, max: 5 }),
        fc.integer({ min: 1, max: 6 }),
        async (first, second, from, span) => {
          const p = await a.projects.createProject({ name: 'prop', repository: 'r' });
          await a.svc.ingest.ingest(p.id, first.map(wire), { source: 'api' });
          const windows: [number | null, number | null][] = [
            [null, null],
            [DAY0 + from, DAY0 + from + span],
          ];
          for (const [f, to] of windows) await expectExact(a, p.id, 'x', f, to);
          // More events (on days cached): the answer follows (the cached summaries extended).
          if (second.length > 0) {
            await a.svc.ingest.ingest(p.id, second.map(wire), { source: 'api' });
            for (const [f, to] of windows) await expectExact(a, p.id, 'y', f, to);
          }
        },
      ),
      { numRuns: 15 },
    );
  });

  it('another process extends its cached summary of an old day by the new segments; a restarted process reads persisted summaries', async () => {
    const p = await a.projects.createProject({ name: 'xproc', repository: 'r' });
    const events: Ev[] = [];
    for (let i = 0; i < 120; i++) events.push({ day: i % 4, page: i % 7, visitor: i % 23, ua: (i % 3) as 0 | 1 | 2 });
    await a.svc.ingest.ingest(p.id, events.map(wire), { source: 'api' });

    const b = serviceOn(t.reopen());
    await expectExact(b, p.id, 'b1');
    expect(b.svc.store.summaries.stats.rebuilt).toBe(4);
    // What a read rebuilt is persisted after it answered.
    await b.svc.store.summaries.persisted();
    expect(b.svc.store.summaries.stats.persistedOnRead).toBe(4);

    // New visitors on day 1 (old, cached in b) through process a, and a crawler's request on day 2.
    await a.svc.ingest.ingest(
      p.id,
      [
        { day: 1, page: 0, visitor: 500, ua: 0 },
        { day: 1, page: 99, visitor: 501, ua: 1 },
        { day: 2, page: 1, visitor: 600, ua: 2 },
      ].map((e) => wire(e as Ev)),
      { source: 'api' },
    );
    const before = { ...b.svc.store.summaries.stats };
    await expectExact(b, p.id, 'b2');
    expect(b.svc.store.summaries.stats.extended - before.extended).toBe(2);
    expect(b.svc.store.summaries.stats.rebuilt - before.rebuilt).toBe(0);
    expect((await b.svc.store.agents(p.id, { fromDay: null, toDay: null, offset: 0, limit: 10 })).rows.find((r) => r.agent === 'Googlebot')?.visitors).toBe(
      [...new Set(events.filter((e) => e.ua === 2).map((e) => e.visitor))].length + 1,
    );

    // Sealing: nothing on the first look (a day must keep its version for a whole interval), then every day
    // changed since (days 1 and 2: extended, which reads do not persist).
    expect(await b.svc.store.summaries.sealOnce()).toBe(0);
    let sealed = 0;
    for (let n = await b.svc.store.summaries.sealOnce(); n > 0; n = await b.svc.store.summaries.sealOnce()) sealed += n;
    expect(sealed).toBeGreaterThanOrEqual(2);
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    expect((await summaryStore.selectStaleDays(t.db.kysely, 1000)).filter((d) => d.projectOrd === ord)).toEqual([]);

    // A new process reads the persisted summaries and answers the same; then extends a blob by a new segment.
    const c = serviceOn(t.reopen());
    await expectExact(c, p.id, 'c1');
    expect(c.svc.store.summaries.stats.rebuilt).toBe(0);
    // Twice: the visitors export of an open window streams the blobs without caching them, the views export caches them.
    expect(c.svc.store.summaries.stats.fromBlob).toBe(8);
    c.svc.store.summaries.clear();
    await a.svc.ingest.ingest(p.id, [wire({ day: 3, page: 5, visitor: 700, ua: 1 })], { source: 'api' });
    await expectExact(c, p.id, 'c2');
    expect(c.svc.store.summaries.stats.extended).toBe(1);
    expect(c.svc.store.summaries.stats.rebuilt).toBe(0);
    await c.svc.close();
    await b.svc.close();
  });

  it('compaction and reclassification mark the day rewritten: a cached summary is never extended across them (no view counted twice)', async () => {
    const p = await a.projects.createProject({ name: 'rewrite', repository: 'r' });
    // Ten flushes on day 0 (ten segments: compactable), one on day 1.
    for (let i = 0; i < 10; i++) await a.svc.ingest.ingest(p.id, [wire({ day: 0, page: i % 3, visitor: i, ua: (i % 2) as 0 | 1 })], { source: 'api' });
    await a.svc.ingest.ingest(p.id, [wire({ day: 1, page: 1, visitor: 1, ua: 0 })], { source: 'api' });
    const b = serviceOn(t.reopen());
    await expectExact(b, p.id, 'r1');
    await b.svc.store.summaries.persisted();
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    const v0 = (await summaryStore.selectDayVersions(t.db.kysely, ord, { fromDay: DAY0, toDay: DAY0 + 1 }))[0];
    expect(await a.svc.store.compact()).toBeGreaterThanOrEqual(10);
    const v1 = (await summaryStore.selectDayVersions(t.db.kysely, ord, { fromDay: DAY0, toDay: DAY0 + 1 }))[0];
    expect(v1?.version).toBe((v0?.version as number) + 1);
    expect(v1?.rewritten).toBe(v1?.version);
    // b's summary of day 0 is stale in memory and may not be extended; the blob its read persisted was carried.
    let before = { ...b.svc.store.summaries.stats };
    await expectExact(b, p.id, 'r2');
    // Read by both exports (the visitors export of an open window does not cache what it streams).
    expect(b.svc.store.summaries.stats.fromBlob - before.fromBlob).toBe(2);
    expect(b.svc.store.summaries.stats.rebuilt - before.rebuilt).toBe(0);
    expect(b.svc.store.summaries.stats.extended - before.extended).toBe(0);

    // Sealed, then compacted again (more flushes first): the persisted summary is carried to the new version.
    for (let i = 0; i < 10; i++) await a.svc.ingest.ingest(p.id, [wire({ day: 0, page: 4, visitor: 50 + i, ua: 0 })], { source: 'api' });
    await a.svc.store.summaries.sealOnce();
    await a.svc.store.summaries.sealOnce();
    expect(await a.svc.store.compact()).toBeGreaterThanOrEqual(10);
    const v2 = (await summaryStore.selectDayVersions(t.db.kysely, ord, { fromDay: DAY0, toDay: DAY0 + 1 }))[0];
    expect((await summaryStore.selectSummaries(t.db.kysely, ord, [DAY0]))[0]?.version).toBe(v2?.version);
    const c = serviceOn(t.reopen());
    await expectExact(c, p.id, 'r2b');
    expect(c.svc.store.summaries.stats.rebuilt).toBe(0);
    // And extended from there by a later flush.
    await a.svc.ingest.ingest(p.id, [wire({ day: 0, page: 5, visitor: 99, ua: 1 })], { source: 'api' });
    await expectExact(c, p.id, 'r2c');
    expect(c.svc.store.summaries.stats.rebuilt).toBe(0);
    expect(c.svc.store.summaries.stats.extended).toBe(1);
    await c.svc.close();

    // Stale classes (every human stored as an AI assistant), then reclassify: the changed days are rewritten.
    await rewriteStoredEvents(t.db, (e) => (e.cls === 'human' ? { ...e, cls: 'ai', rule: 'ChatGPT-User' } : e), ord);
    const stale = await b.svc.store.visitors(all(p.id, 'r3'));
    expect(stale.totals.human).toBe(0);
    before = { ...b.svc.store.summaries.stats };
    const r = await a.svc.store.reclassify(p.id);
    expect(r.changed).toBeGreaterThan(0);
    await expectExact(b, p.id, 'r4');
    expect(b.svc.store.summaries.stats.rebuilt - before.rebuilt).toBe(2);
    expect(b.svc.store.summaries.stats.extended - before.extended).toBe(0);
    await b.svc.close();
  });

  it('the process that compacted a day keeps its cached summary, carried to the new version (not read again from the blob)', async () => {
    const p = await a.projects.createProject({ name: 'carry', repository: 'r' });
    for (let i = 0; i < 10; i++) await a.svc.ingest.ingest(p.id, [wire({ day: 0, page: i % 3, visitor: i, ua: (i % 2) as 0 | 1 })], { source: 'api' });
    await a.svc.ingest.ingest(p.id, [wire({ day: 1, page: 1, visitor: 1, ua: 0 })], { source: 'api' });
    await expectExact(a, p.id, 'k1', DAY0, DAY0 + 2);
    await a.svc.store.summaries.persisted();
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    const v0 = (await summaryStore.selectDayVersions(t.db.kysely, ord, { fromDay: DAY0, toDay: DAY0 + 1 }))[0]?.version as number;
    expect(await a.svc.store.compact()).toBeGreaterThanOrEqual(10);
    expect((await summaryStore.selectDayVersions(t.db.kysely, ord, { fromDay: DAY0, toDay: DAY0 + 1 }))[0]?.version).toBe(v0 + 1);
    const before = { ...a.svc.store.summaries.stats };
    await expectExact(a, p.id, 'k2', DAY0, DAY0 + 2);
    const st = a.svc.store.summaries.stats;
    // Both exports (visitors, views) over both days, all from memory: day 0 at its new version.
    expect(st.fromMemory - before.fromMemory).toBe(4);
    expect([st.fromBlob - before.fromBlob, st.extended - before.extended, st.rebuilt - before.rebuilt]).toEqual([0, 0, 0]);
    // Another process's cache is not carried: it reads the (carried) blob and answers the same.
    const b = serviceOn(t.reopen());
    await expectExact(b, p.id, 'k3', DAY0, DAY0 + 2);
    expect(b.svc.store.summaries.stats.rebuilt).toBe(0);
    await b.svc.close();
  });

  it(`windows over ${LONG_WINDOW_DAYS} days (visitor sets streamed from blobs) answer as the day-based count and the stored events, with days in memory, stored, extended, rebuilt and rewritten, across restarts`, async () => {
    const evArb = fc.record({
      day: fc.integer({ min: 0, max: 100 }),
      page: fc.integer({ min: 0, max: 5 }),
      visitor: fc.integer({ min: 0, max: 40 }),
      ua: fc.constantFrom(0, 1, 2) as fc.Arbitrary<0 | 1 | 2>,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(evArb, { minLength: 1, maxLength: 60 }),
        fc.array(evArb, { maxLength: 20 }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: LONG_WINDOW_DAYS + 1, max: 101 }),
        async (first, second, from, span) => {
          const p = await a.projects.createProject({ name: 'long', repository: 'r' });
          const ord = async () => (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
          const windows: [number | null, number | null][] = [
            [null, null],
            [DAY0 + from, DAY0 + from + span],
          ];
          /** The long window's visitors against the stored events and against the day-based count of the same days. */
          const check = async (s: ReturnType<typeof serviceOn>, walk: string) => {
            for (const [f, to] of windows) {
              await expectExact(s, p.id, walk, f, to);
              const o = await ord();
              const streamed = await s.svc.store.summaries.visitors(o, { fromDay: f, toDay: to });
              const days = (await s.svc.store.summaries.loadWindow(o, { fromDay: f, toDay: to })).days.map((d) => d.visitors);
              const byDay = countWindow(days);
              expect(streamed.totals).toEqual(byDay.totals);
              expect(streamed.rows.length).toBe(byDay.pathIds.length);
            }
          };
          // Ten flushes on the first event's day (compactable), the rest in one.
          const head = first[0] as Ev;
          for (let i = 0; i < 10; i++) await a.svc.ingest.ingest(p.id, [wire({ ...head, visitor: head.visitor + 100 * i })], { source: 'api' });
          await a.svc.ingest.ingest(p.id, first.map(wire), { source: 'api' });
          // A cold process (every day rebuilt), then one reading the blobs those reads persisted.
          const b = serviceOn(t.reopen());
          await check(b, 'l1');
          await b.svc.store.summaries.persisted();
          const c = serviceOn(t.reopen());
          await check(c, 'l2');
          // More events through another process: c extends what it holds; compaction rewrites the flushed day.
          await a.svc.ingest.ingest(p.id, second.map(wire), { source: 'api' });
          await check(c, 'l3');
          await a.svc.store.summaries.sealOnce({ all: true, batch: 1000 });
          await a.svc.store.compact();
          await check(c, 'l4');
          // Reclassification rewrites every day with humans (all stored as AI first): c may not extend across it.
          await rewriteStoredEvents(t.db, (e) => (e.cls === 'human' ? { ...e, cls: 'ai', rule: 'ChatGPT-User' } : e), await ord());
          await a.svc.store.reclassify(p.id);
          await check(c, 'l5');
          // A restart after all of it reads the stored blobs (carried, sealed or persisted by reads) or rebuilds.
          await c.svc.store.summaries.persisted();
          const d = serviceOn(t.reopen());
          await check(d, 'l6');
          for (const x of [b, c, d]) await x.svc.close();
        },
      ),
      { numRuns: 8 },
    );
  });

  it('a long window larger than its cache keeps at most the cache in memory (half the summaries cache) and answers the same from memory and blobs', async () => {
    const p = await a.projects.createProject({ name: 'bounded', repository: 'r' });
    const events: Ev[] = [];
    for (let i = 0; i < 800; i++) events.push({ day: i % 80, page: i % 9, visitor: i % 150, ua: (i % 2) as 0 | 1 });
    await a.svc.ingest.ingest(p.id, events.map(wire), { source: 'api' });
    await a.svc.store.summaries.sealOnce({ all: true, batch: 1000 });
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    const range = { fromDay: DAY0, toDay: DAY0 + 80 };
    const want = await a.svc.store.summaries.visitors(ord, range);
    // A cold process whose summaries cache is 8 KiB: the window's 80 visitor sets are larger than its 4 KiB.
    const db = t.reopen();
    const cold = createSummaryService({ db, cacheBytes: 8192 });
    const first = await cold.visitors(ord, range);
    expect({ totals: first.totals, rows: first.rows }).toEqual({ totals: want.totals, rows: want.rows });
    expect(first.stats).toMatchObject({ days: 80, fromBlob: 80, rebuilt: 0, fromMemory: 0 });
    expect(cold.cachedBytes).toBeGreaterThan(0);
    expect(cold.cachedBytes).toBeLessThanOrEqual(4096);
    // The next read finds what was kept and streams the rest again: same answer, memory still bounded.
    const again = await cold.visitors(ord, range);
    expect({ totals: again.totals, rows: again.rows }).toEqual({ totals: want.totals, rows: want.rows });
    expect(again.stats.fromMemory).toBeGreaterThan(0);
    expect(again.stats.fromMemory + again.stats.fromBlob).toBe(80);
    expect(cold.cachedBytes).toBeLessThanOrEqual(4096);
    await db.close();
  });

  it('a long window over its spill budget is counted a range of paths at a time (range-spill.ts): the same answer in one thread and two, from memory and blobs', async () => {
    const p = await a.projects.createProject({ name: 'ranges', repository: 'r' });
    const events: Ev[] = [];
    for (let i = 0; i < 1500; i++) events.push({ day: i % 90, page: (i * 7) % 23, visitor: (i * 13) % 211, ua: (i % 3) as 0 | 1 | 2 });
    await a.svc.ingest.ingest(p.id, events.map(wire), { source: 'api' });
    await a.svc.store.summaries.sealOnce({ all: true, batch: 1000 });
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    const db = t.reopen();
    const whole = createSummaryService({ db, countThreads: 1 });
    for (const [f, to] of [
      [null, null],
      [DAY0 + 3, DAY0 + 3 + LONG_WINDOW_DAYS + 10],
    ] as [number | null, number | null][]) {
      const want = await bruteForce(t.db, p.id, f, to);
      const held = await whole.visitors(ord, { fromDay: f, toDay: to });
      expect(held.totals).toEqual(want.visitors.totals);
      // A small cache (most days not resident) and a budget of a few bytes: many ranges, each read back from the file.
      for (const threads of [1, 2]) {
        const ranged = createSummaryService({ db, cacheBytes: 8192, spillBudget: 64, countThreads: threads, countMinPairs: 0 });
        for (let round = 0; round < 2; round++) {
          const got = await ranged.visitors(ord, { fromDay: f, toDay: to });
          expect({ totals: got.totals, rows: got.rows }).toEqual({ totals: held.totals, rows: held.rows });
        }
        expect(ranged.stats.rangedWindows).toBe(2);
        expect(ranged.countStats.threadFailed).toBe(0);
        if (threads === 2) expect(ranged.countStats.threaded).toBeGreaterThan(0);
        await ranged.stop();
      }
    }
    await whole.stop();
    await db.close();
  });

  it('a window counted in two threads (count-threads.ts) answers as one thread and the stored events, short and long, from memory and blobs', async () => {
    const evArb = fc.record({
      day: fc.integer({ min: 0, max: 90 }),
      page: fc.integer({ min: 0, max: 12 }),
      visitor: fc.integer({ min: 0, max: 60 }),
      ua: fc.constantFrom(0, 1, 2) as fc.Arbitrary<0 | 1 | 2>,
    });
    await fc.assert(
      fc.asyncProperty(fc.array(evArb, { minLength: 1, maxLength: 80 }), fc.integer({ min: 0, max: 20 }), async (events, from) => {
        const p = await a.projects.createProject({ name: 'threads', repository: 'r' });
        await a.svc.ingest.ingest(p.id, events.map(wire), { source: 'api' });
        await a.svc.store.summaries.sealOnce({ all: true, batch: 1000 });
        const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
        const db = t.reopen();
        const two = createSummaryService({ db, countThreads: 2, countMinPairs: 0 });
        const one = createSummaryService({ db, countThreads: 1 });
        for (const [f, to] of [
          [null, null],
          [DAY0 + from, DAY0 + from + 30],
          [DAY0 + from, DAY0 + from + LONG_WINDOW_DAYS + 5],
        ] as [number | null, number | null][]) {
          const want = await bruteForce(t.db, p.id, f, to);
          for (let round = 0; round < 2; round++) {
            const got = await two.visitors(ord, { fromDay: f, toDay: to });
            expect({ totals: got.totals, rows: got.rows }).toEqual(
              await one.visitors(ord, { fromDay: f, toDay: to }).then((r) => ({ totals: r.totals, rows: r.rows })),
            );
            expect(got.totals).toEqual(want.visitors.totals);
            expect(sortRows(got.rows).slice(0, 250)).toEqual(want.visitors.rows);
          }
        }
        expect(two.countStats.threadFailed).toBe(0);
        expect(two.countStats.threaded).toBeGreaterThan(0);
        expect(one.countStats.threaded).toBe(0);
        await two.stop();
        await one.stop();
        await db.close();
      }),
      { numRuns: 6 },
    );
  });

  it('visitor ordinals beyond 32 bits are counted from summaries too (same answer), and sealed', async () => {
    const p = await a.projects.createProject({ name: 'huge', repository: 'r' });
    await a.svc.ingest.ingest(p.id, [wire({ day: 0, page: 1, visitor: 1, ua: 0 })], { source: 'api' });
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    const project = await a.projects.getProject(p.id);
    for (const [n, at] of [
      [77, 2 ** 32 + 7],
      [78, 2 ** 32 + 1000],
      [79, 2 ** 40],
    ] as const) {
      const key = visitorKey({
        secret: project?.visitorSecret as string,
        rotation: 'none',
        visitorId: `v${n}`,
        ip: null,
        userAgent: HUMAN_UA,
        timestampMs: START_MS,
      });
      await analyticsStore.insertVisitors(t.db.kysely, ord, at, [key]);
    }
    // Day 1: two big visitors (one base for the day), day 2 a bigger one: the window spreads wider than a marks array.
    await a.svc.ingest.ingest(
      p.id,
      [wire({ day: 1, page: 2, visitor: 77, ua: 0 }), wire({ day: 1, page: 2, visitor: 78, ua: 1 }), wire({ day: 2, page: 2, visitor: 79, ua: 1 })],
      { source: 'api' },
    );
    const b = serviceOn(t.reopen());
    await expectExact(b, p.id, 'h');
    expect((await b.svc.store.visitors(all(p.id, 'h2'))).totals.total).toBe(4);
    await b.svc.store.summaries.sealOnce();
    for (let i = 0; i < 50 && (await b.svc.store.summaries.sealOnce()) > 0; i++);
    expect((await summaryStore.selectStaleDays(t.db.kysely, 1000)).filter((d) => d.projectOrd === ord)).toEqual([]);
    const c = serviceOn(t.reopen());
    await expectExact(c, p.id, 'h3');
    await b.svc.close();
    await c.svc.close();
  });

  it('a sealed summary never replaces a newer one', async () => {
    const p = await a.projects.createProject({ name: 'seal', repository: 'r' });
    await a.svc.ingest.ingest(p.id, [wire({ day: 0, page: 0, visitor: 0, ua: 0 })], { source: 'api' });
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    await summaryStore.upsertSummary(t.db.kysely, ord, DAY0, 5, new Uint8Array([1, 2, 3]));
    await summaryStore.upsertSummary(t.db.kysely, ord, DAY0, 4, new Uint8Array([9]));
    const stored = await summaryStore.selectSummaries(t.db.kysely, ord, [DAY0]);
    expect(stored.map((s) => [s.version, [...s.data]])).toEqual([[5, [1, 2, 3]]]);
  });
});

describeEachDialect('sealing changed days promptly (a database of its own: the sealer looks at every project)', (dialect) => {
  let t: TestDb;
  let a: ReturnType<typeof serviceOn>;
  beforeAll(async () => {
    t = await openTestDb(dialect);
    a = serviceOn(t.db);
  });
  afterAll(async () => {
    await a?.svc.close();
    await t?.cleanup();
  });

  /** A process that runs the background work (its timers never fire here: an hour) on an injected clock. */
  function backgroundProcess(clock: () => number) {
    const db = t.reopen();
    const projects = createProjectService(createProjectsStore(db.kysely));
    const svc = sqlAnalyticsService({ config: { analytics: { ...testConfig().analytics, sealIntervalMs: 3_600_000 } }, db, projects, now: clock });
    svc.startBackground();
    return svc;
  }
  const staleOf = async (ord: number) => (await summaryStore.selectStaleDays(t.db.kysely, 1000)).filter((d) => d.projectOrd === ord);
  const whole = (projectId: string, walkId: string) => ({ projectId, walkId, fromDay: null, toDay: null, offset: 0, limit: 250 }) as const;

  it('close() seals every day that changed, within its time bound; a restart then builds nothing from all its segments', async () => {
    const p = await a.projects.createProject({ name: 'close', repository: 'r' });
    const ord = async () => (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    const events: Ev[] = [];
    for (let i = 0; i < 60; i++) events.push({ day: i % 5, page: i % 7, visitor: i % 13, ua: (i % 3) as 0 | 1 | 2 });
    await a.svc.ingest.ingest(p.id, events.map(wire), { source: 'api' });
    expect((await staleOf(await ord())).length).toBe(5);

    // A clock that jumps past the bound at once: close() seals nothing.
    let t0 = 0;
    const jumping = backgroundProcess(() => (t0 += 60_000));
    await jumping.close();
    expect((await staleOf(await ord())).length).toBe(5);

    // A still clock: every changed day sealed by close(), none due to the timer (it never fired).
    const b = backgroundProcess(() => 0);
    const want = await a.svc.store.visitors(whole(p.id, 'w'));
    await b.close();
    expect(await staleOf(await ord())).toEqual([]);

    // More events on two days (stored summaries now one version behind), then a clean stop: sealed again.
    await a.svc.ingest.ingest(p.id, [wire({ day: 1, page: 0, visitor: 500, ua: 0 }), wire({ day: 3, page: 9, visitor: 501, ua: 1 })], { source: 'api' });
    expect((await staleOf(await ord())).map((d) => [d.day - DAY0, d.storedVersion])).toEqual([
      [1, 1],
      [3, 1],
    ]);
    const c = backgroundProcess(() => 0);
    await c.close();
    expect(await staleOf(await ord())).toEqual([]);

    // The restarted process reads blobs only.
    const d = serviceOn(t.reopen());
    const got = await d.svc.store.visitors(whole(p.id, 'w2'));
    expect(got.totals.total).toBe(want.totals.total + 2);
    expect(d.svc.store.summaries.stats.rebuilt).toBe(0);
    expect(d.svc.store.summaries.stats.extended).toBe(0);
    expect(d.svc.store.summaries.stats.fromBlob).toBe(5);
    await d.svc.close();
  });

  it(`the sealer persists a changing day with no stored summary at once, and again once it is ${SEAL_BEHIND} versions behind; a restart extends it`, async () => {
    const p = await a.projects.createProject({ name: 'busy', repository: 'r' });
    const ingestOne = (i: number) => a.svc.ingest.ingest(p.id, [wire({ day: 0, page: i % 5, visitor: i, ua: 0 })], { source: 'api' });
    await ingestOne(0);
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    const b = serviceOn(t.reopen());
    const sealer = b.svc.store.summaries;
    // No stored summary: due on the first look (it does not wait for the day to hold still).
    expect(await sealer.sealOnce()).toBe(1);
    expect(await staleOf(ord)).toEqual([]);
    // The current day of a busy site: a new version at every look, so it never holds still for a tick.
    for (let i = 1; i < SEAL_BEHIND; i++) {
      await ingestOne(i);
      expect(await sealer.sealOnce()).toBe(0);
    }
    expect((await staleOf(ord)).map((d) => d.version - (d.storedVersion as number))).toEqual([SEAL_BEHIND - 1]);
    await ingestOne(SEAL_BEHIND);
    expect(await sealer.sealOnce()).toBe(1);
    expect(await staleOf(ord)).toEqual([]);
    expect(sealer.stats.extended).toBeGreaterThan(0);
    expect(sealer.stats.rebuilt).toBe(1);

    // A restart while it keeps changing: its first read extends the blob by the segments since (no rebuild).
    for (let i = 0; i < 3; i++) await ingestOne(100 + i);
    const c = serviceOn(t.reopen());
    expect((await c.svc.store.visitors(whole(p.id, 'c'))).totals.total).toBe(SEAL_BEHIND + 4);
    expect(c.svc.store.summaries.stats.extended).toBe(1);
    expect(c.svc.store.summaries.stats.rebuilt).toBe(0);
    await c.svc.close();
    await b.svc.close();
  });
  it('compaction waits for the sealer on a day whose stored summary is behind, so it carries it instead of stranding it', async () => {
    const p = await a.projects.createProject({ name: 'compact-wait', repository: 'r' });
    for (let i = 0; i < 10; i++) await a.svc.ingest.ingest(p.id, [wire({ day: 0, page: i % 3, visitor: i, ua: 0 })], { source: 'api' });
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    const segments = async () => (await segmentStore.selectDaySegments(t.db.kysely, ord, DAY0)).length;
    const b = serviceOn(t.reopen());
    await b.svc.store.visitors(whole(p.id, 'b'));
    await b.svc.store.summaries.persisted();
    // One more flush: the stored summary is one version behind; compaction leaves the day alone.
    await a.svc.ingest.ingest(p.id, [wire({ day: 0, page: 4, visitor: 10, ua: 1 })], { source: 'api' });
    await a.svc.store.compact();
    expect(await segments()).toBe(11);
    // Sealed (held for a tick), then compacted, the summary carried to the new version.
    await b.svc.store.summaries.sealOnce();
    await b.svc.store.summaries.sealOnce();
    expect(await staleOf(ord)).toEqual([]);
    expect(await a.svc.store.compact()).toBeGreaterThanOrEqual(11);
    expect(await segments()).toBe(1);
    expect(await staleOf(ord)).toEqual([]);
    const c = serviceOn(t.reopen());
    expect((await c.svc.store.visitors(whole(p.id, 'c'))).totals.total).toBe(11);
    expect(c.svc.store.summaries.stats.fromBlob).toBe(1);
    expect(c.svc.store.summaries.stats.rebuilt).toBe(0);
    await c.svc.close();
    await b.svc.close();
  });

  it('the sealer keeps in memory only days it held or that still change fast: a finished day it sealed is read from its blob', async () => {
    const p = await a.projects.createProject({ name: 'finished', repository: 'r' });
    const events: Ev[] = [];
    for (let day = 0; day < 3; day++) for (let v = 0; v < 4; v++) events.push({ day, page: v % 2, visitor: 10 * day + v, ua: 0 });
    await a.svc.ingest.ingest(p.id, events.map(wire), { source: 'api' });
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    const b = serviceOn(t.reopen());
    const sealer = b.svc.store.summaries;
    for (let i = 0; i < 50 && (await sealer.sealOnce()) > 0; i++);
    expect(await staleOf(ord)).toEqual([]);
    const range = { fromDay: DAY0, toDay: DAY0 + 3 };
    const first = await sealer.loadWindow(ord, range);
    expect(first.stats).toMatchObject({ days: 3, fromMemory: 0, fromBlob: 3, rebuilt: 0 });
    expect(first.days.map((d) => d.day)).toEqual([DAY0, DAY0 + 1, DAY0 + 2]);
    // A read keeps what it loaded.
    expect((await sealer.loadWindow(ord, range)).stats).toMatchObject({ days: 3, fromMemory: 3 });
    // A day memory holds is kept fresh by the sealer: one more event, sealed, then read from memory.
    await a.svc.ingest.ingest(p.id, [wire({ day: 1, page: 0, visitor: 99, ua: 0 })], { source: 'api' });
    // Due once it held still for a look.
    await sealer.sealOnce();
    expect(await sealer.sealOnce()).toBe(1);
    expect(await staleOf(ord)).toEqual([]);
    const after = await sealer.loadWindow(ord, range);
    expect(after.stats).toMatchObject({ days: 3, fromMemory: 3 });
    expect((await b.svc.store.visitors(whole(p.id, 'fin'))).totals.total).toBe(13);
    await b.svc.close();
  });

  it('nor a day it sealed for changing fast that no read asked for: its next read comes from the blob', async () => {
    const p = await a.projects.createProject({ name: 'replayed', repository: 'r' });
    const ingestOne = (i: number) => a.svc.ingest.ingest(p.id, [wire({ day: 0, page: i % 3, visitor: i, ua: 0 })], { source: 'api' });
    await ingestOne(0);
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    const b = serviceOn(t.reopen());
    const sealer = b.svc.store.summaries;
    expect(await sealer.sealOnce()).toBe(1);
    // SEAL_BEHIND versions more: sealed at once, as a day still changing fast (extended from its blob).
    for (let i = 1; i <= SEAL_BEHIND; i++) await ingestOne(i);
    const extended = sealer.stats.extended;
    expect(await sealer.sealOnce()).toBe(1);
    expect(sealer.stats.extended).toBe(extended + 1);
    expect(await staleOf(ord)).toEqual([]);
    const day = await sealer.loadWindow(ord, { fromDay: DAY0, toDay: DAY0 + 1 });
    expect(day.stats).toMatchObject({ days: 1, fromMemory: 0, fromBlob: 1, extended: 0, rebuilt: 0 });
    expect((await b.svc.store.visitors(whole(p.id, 'replayed'))).totals.total).toBe(SEAL_BEHIND + 1);
    await b.svc.close();
  });
});

describeEachDialect('migration 0017 (day summaries)', (dialect) => {
  it('keeps the days with data, gives every day with segments a version and drops the per-event derived tables', async () => {
    const t = await openTestDb(dialect, { migrated: false });
    try {
      const k = t.db.kysely;
      for (const [name, up] of Object.entries(MIGRATIONS)) if (name < '0017') await up(k, t.db.caps);
      const project = await createProjectService(createProjectsStore(k)).createProject({ name: 'm', repository: 'r' });
      await k.insertInto('analytics_projects').values({ project_id: project.id, version: 9 }).execute();
      const ord = Number((await k.selectFrom('analytics_projects').select('ord').executeTakeFirstOrThrow()).ord);
      const seg = encodeSegment([
        {
          ts: (DAY0 + 3) * DAY_MS,
          pathId: 1,
          rawPath: null,
          visitor: 1,
          uaId: null,
          accept: null,
          method: 'GET',
          status: 404,
          referrer: null,
          cls: 'human',
          category: null,
          rule: null,
          rulesVersion: 'x',
          qualifying: false,
          source: 'api',
          dedup: null,
        },
      ]);
      for (const day of [DAY0 + 1, DAY0 + 2, DAY0 + 3])
        await k
          .insertInto('analytics_segments')
          .values({ project_ord: ord, day, seq: day - DAY0, events: 1, data: seg })
          .execute();
      // Day 1 had visits (version 4), day 2 facets only, day 3 neither.
      // Tables and columns of the schema before 0017.
      const before = k as unknown as Kysely<any>;
      await before
        .insertInto('analytics_day_versions')
        .values({ project_ord: ord, day: DAY0 + 1, version: 4 })
        .execute();
      await before
        .insertInto('analytics_day_facet_versions')
        .values({ project_ord: ord, day: DAY0 + 2, version: 7 })
        .execute();
      await (MIGRATIONS['0017_analytics_day_summaries'] as (typeof MIGRATIONS)[string])(k, t.db.caps);
      expect(await summaryStore.selectDayVersions(k, ord, { fromDay: null, toDay: null })).toEqual([
        { day: DAY0 + 1, version: 4, rewritten: 0, hasData: true },
        { day: DAY0 + 2, version: 1, rewritten: 0, hasData: true },
        { day: DAY0 + 3, version: 1, rewritten: 0, hasData: false },
      ]);
      for (const table of ['analytics_daily_visits', 'analytics_daily_views', 'analytics_daily_facets', 'analytics_day_facet_versions', 'analytics_day_sets']) {
        await expect((k as unknown as Kysely<any>).selectFrom(table).selectAll().execute(), table).rejects.toThrow();
      }
      expect(await summaryStore.selectSummaries(k, ord, [DAY0 + 1])).toEqual([]);
    } finally {
      await t.cleanup();
    }
  });
});
