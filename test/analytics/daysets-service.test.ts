import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { visitorKey } from '../../src/analytics/classify/identity.ts';
import { sortRows } from '../../src/analytics/export/rows.ts';
import { daysetStore } from '../../src/analytics/store/dayset-store.ts';
import { analyticsStore } from '../../src/analytics/store/store.ts';
import { testConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/index.ts';
import * as m0006 from '../../src/db/migrations/0006_analytics_daysets.ts';
import { createProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';
import { DAY_MS, START_MS } from './dataset.ts';
import { sqlAnalyticsService } from './services.ts';

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

describeEachDialect('analytics day sets', (dialect) => {
  let t: TestDb;
  let a: ReturnType<typeof serviceOn>;

  beforeAll(async () => {
    t = await openTestDb(dialect);
    a = serviceOn(t.db);
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  const all = (projectId: string, walkId: string, fromDay: number | null = null, toDay: number | null = null) =>
    ({ projectId, walkId, fromDay, toDay, offset: 0, limit: 250 }) as const;

  /** The same answer with one SQL aggregation over the daily visits (the engine the day sets replace). */
  async function sqlAnswer(db: Database, projectId: string, fromDay: number | null, toDay: number | null) {
    const ord = (await analyticsStore.selectProjectOrd(db.kysely, projectId)) as number;
    const totals = await analyticsStore.visitorTotals(db.kysely, ord, { fromDay, toDay });
    const rows = sortRows(await analyticsStore.visitorsByPathNamed(db.kysely, ord, { fromDay, toDay }));
    return { totals, rows: rows.slice(0, 250), hasMore: rows.length > 250 };
  }

  it('gives exactly the SQL aggregation’s answer for random datasets and windows', async () => {
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
          const fromDay = DAY0 + from;
          const windows: [number | null, number | null][] = [
            [null, null],
            [fromDay, fromDay + span],
          ];
          for (const [f, to] of windows) expect(await a.svc.store.visitors(all(p.id, 'x', f, to))).toEqual(await sqlAnswer(t.db, p.id, f, to));
          // More events (on days already cached): the answer follows.
          if (second.length > 0) {
            await a.svc.ingest.ingest(p.id, second.map(wire), { source: 'api' });
            for (const [f, to] of windows) expect(await a.svc.store.visitors(all(p.id, 'y', f, to))).toEqual(await sqlAnswer(t.db, p.id, f, to));
          }
        },
      ),
      { numRuns: 15 },
    );
  });

  it('another process (own database handle) sees new events on an old, cached day; a restarted process reads persisted sets', async () => {
    const p = await a.projects.createProject({ name: 'xproc', repository: 'r' });
    const events: Ev[] = [];
    for (let i = 0; i < 120; i++) events.push({ day: i % 4, page: i % 7, visitor: i % 23, ua: (i % 3) as 0 | 1 | 2 });
    await a.svc.ingest.ingest(p.id, events.map(wire), { source: 'api' });

    const b = serviceOn(t.reopen());
    const first = await b.svc.store.visitors(all(p.id, 'b1'));
    expect(first).toEqual(await sqlAnswer(t.db, p.id, null, null));
    expect(b.svc.store.daySets.stats.rebuilt).toBe(4);

    // New visitors on day 1 (old, cached in b) through process a.
    await a.svc.ingest.ingest(
      p.id,
      [
        { day: 1, page: 0, visitor: 500, ua: 0 },
        { day: 1, page: 99, visitor: 501, ua: 1 },
      ].map((e) => wire(e as Ev)),
      { source: 'api' },
    );
    const rebuiltBefore = b.svc.store.daySets.stats.rebuilt;
    const second = await b.svc.store.visitors(all(p.id, 'b2'));
    expect(b.svc.store.daySets.stats.rebuilt - rebuiltBefore).toBe(1);
    expect(second.totals.total).toBe(first.totals.total + 2);
    expect(second.rows.find((r) => r.path === '/p99')).toEqual({ path: '/p99', human: 0, ai: 1, total: 1 });
    expect(second).toEqual(await sqlAnswer(t.db, p.id, null, null));

    // A crawler event changes no visits: no day version moves, nothing is rebuilt.
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    const versions = await daysetStore.selectDayVersions(t.db.kysely, ord, { fromDay: null, toDay: null });
    await a.svc.ingest.ingest(p.id, [wire({ day: 2, page: 1, visitor: 600, ua: 2 })], { source: 'api' });
    expect(await daysetStore.selectDayVersions(t.db.kysely, ord, { fromDay: null, toDay: null })).toEqual(versions);

    // Sealing: nothing on the first look (a day must keep its version for a whole interval), then every day.
    expect(await b.svc.store.daySets.sealOnce()).toBe(0);
    let sealed = 0;
    for (let n = await b.svc.store.daySets.sealOnce(); n > 0; n = await b.svc.store.daySets.sealOnce()) sealed += n;
    expect(sealed).toBeGreaterThanOrEqual(4);
    expect((await daysetStore.selectStaleDays(t.db.kysely, 1000)).filter((d) => d.projectOrd === ord)).toEqual([]);

    // A new process reads the persisted sets (no visit rows) and answers the same.
    const c = serviceOn(t.reopen());
    const third = await c.svc.store.visitors(all(p.id, 'c1'));
    expect(third).toEqual(second);
    expect(c.svc.store.daySets.stats.rebuilt).toBe(0);
    expect(c.svc.store.daySets.stats.fromBlob).toBe(4);
    await c.svc.close();
    await b.svc.close();
  });

  it('migration 0006 on existing data gives every (project, day) with visits a version, and the export works at once', async () => {
    const p = await a.projects.createProject({ name: 'migrate', repository: 'r' });
    await a.svc.ingest.ingest(
      p.id,
      [0, 2, 3].map((d) => wire({ day: d, page: d, visitor: d, ua: (d % 2) as 0 | 1 })),
      { source: 'api' },
    );
    // As if the data had been written before 0006: drop its tables and run it again.
    await t.db.kysely.schema.dropTable('analytics_day_sets').execute();
    await t.db.kysely.schema.dropTable('analytics_day_versions').execute();
    await m0006.up(t.db.kysely, t.db.caps);
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    expect(await daysetStore.selectDayVersions(t.db.kysely, ord, { fromDay: null, toDay: null })).toEqual(
      [0, 2, 3].map((d) => ({ day: DAY0 + d, version: 1 })),
    );
    const fresh = serviceOn(t.reopen());
    expect(await fresh.svc.store.visitors(all(p.id, 'm'))).toEqual(await sqlAnswer(t.db, p.id, null, null));
  });

  it('visitor ordinals beyond 32 bits fall back to the SQL count (same answer), and sealing skips those days', async () => {
    const p = await a.projects.createProject({ name: 'huge', repository: 'r' });
    await a.svc.ingest.ingest(p.id, [wire({ day: 0, page: 1, visitor: 1, ua: 0 })], { source: 'api' });
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    const project = await a.projects.getProject(p.id);
    const key = visitorKey({
      secret: project?.visitorSecret as string,
      rotation: 'none',
      visitorId: 'v77',
      ip: null,
      userAgent: HUMAN_UA,
      timestampMs: START_MS,
    });
    await t.db.kysely
      .insertInto('analytics_visitors')
      .values({ ord: 2 ** 32 + 7, project_ord: ord, visitor_key: key })
      .execute();
    await a.svc.ingest.ingest(p.id, [wire({ day: 0, page: 2, visitor: 77, ua: 0 })], { source: 'api' });
    const b = serviceOn(t.reopen());
    const page = await b.svc.store.visitors(all(p.id, 'h'));
    expect(page.totals.total).toBe(2);
    expect(page).toEqual(await sqlAnswer(t.db, p.id, null, null));
    // Day 1 has only small ids (a visitor known before): it is sealed; day 0 is skipped (no error).
    await a.svc.ingest.ingest(p.id, [wire({ day: 1, page: 2, visitor: 1, ua: 1 })], { source: 'api' });
    await b.svc.store.daySets.sealOnce();
    for (let i = 0; i < 50 && (await b.svc.store.daySets.sealOnce()) > 0; i++);
    expect((await daysetStore.selectStaleDays(t.db.kysely, 1000)).filter((d) => d.projectOrd === ord).map((d) => d.day)).toEqual([DAY0]);
  });

  it('a sealed set never replaces a newer one, and reclassify invalidates every day', async () => {
    const p = await a.projects.createProject({ name: 'seal', repository: 'r' });
    await a.svc.ingest.ingest(
      p.id,
      [0, 1, 2].map((d) => wire({ day: d, page: d, visitor: d, ua: 0 })),
      { source: 'api' },
    );
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    await daysetStore.upsertDaySet(t.db.kysely, ord, DAY0, 5, 1, new Uint8Array([1, 2, 3]));
    await daysetStore.upsertDaySet(t.db.kysely, ord, DAY0, 4, 1, new Uint8Array([9]));
    expect((await daysetStore.selectDaySets(t.db.kysely, ord, [DAY0]))[0]?.version).toBe(5);
    expect([...((await daysetStore.selectDaySets(t.db.kysely, ord, [DAY0]))[0]?.data ?? [])]).toEqual([1, 2, 3]);

    const before = await daysetStore.selectDayVersions(t.db.kysely, ord, { fromDay: null, toDay: null });
    await a.svc.store.reclassify(p.id);
    const after = await daysetStore.selectDayVersions(t.db.kysely, ord, { fromDay: null, toDay: null });
    expect(after.map((v) => v.day)).toEqual(before.map((v) => v.day));
    for (let i = 0; i < after.length; i++) expect(after[i]?.version).toBe((before[i]?.version as number) + 1);
    expect(await a.svc.store.visitors(all(p.id, 'r'))).toEqual(await sqlAnswer(t.db, p.id, null, null));
  });
});
