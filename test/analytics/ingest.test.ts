import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { analyticsStore } from '../../src/analytics/store/store.ts';
import { testConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/index.ts';
import { createProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';
import { DAY_MS, expectedVisitors, generate, START_MS } from './dataset.ts';
import { sqlAnalyticsService } from './services.ts';
import { storedRows } from './stored-events.ts';

function services(db: Database, dictionaryCacheEntries = 200_000) {
  const projects = createProjectService(createProjectsStore(db.kysely));
  const config = testConfig();
  return { projects, svc: sqlAnalyticsService({ config: { analytics: { ...config.analytics, dictionaryCacheEntries } }, db, projects, now: Date.now }) };
}

const all = { walkId: 't', fromDay: null, toDay: null, offset: 0, limit: 250 };

describeEachDialect('analytics ingest', (dialect) => {
  let t: TestDb;
  beforeEach(async () => {
    t = await openTestDb(dialect);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('accepted events are durable when ingest resolves: another connection sees them at once', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    const data = generate({ seed: 3, events: 300, days: 3 });
    const r = await svc.ingest.ingest(
      p.id,
      data.map((d) => d.wire),
      { source: 'api' },
    );
    expect(r).toEqual({ accepted: 300, inserted: 300, rejected: [] });
    const other = t.reopen();
    expect((await storedRows(other)).length).toBe(300);
    const fresh = services(other).svc;
    const page = await fresh.store.visitors({ projectId: p.id, ...all });
    const expected = expectedVisitors(
      data.map((d) => d.truth),
      null,
      null,
    );
    expect(page.totals).toEqual(expected.totals);
  });

  it('stores no raw IP address anywhere', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    await svc.ingest.ingest(p.id, [{ path: '/x', ip: '198.51.100.77', userAgent: 'Mozilla/5.0 Firefox/125.0' }], { source: 'api' });
    await svc.store.summaries.sealOnce();
    await svc.store.summaries.sealOnce();
    for (const table of ['analytics_visitor_chunks', 'analytics_paths', 'analytics_day_versions', 'analytics_day_summaries'] as const) {
      const rows = await t.db.kysely.selectFrom(table).selectAll().execute();
      expect(JSON.stringify(rows)).not.toContain('198.51.100.77');
    }
    const events = await storedRows(t.db);
    expect(events).toHaveLength(1);
    expect(JSON.stringify(events)).not.toContain('198.51.100.77');
  });

  it('tiny dictionary caches (constant eviction) and two services on separate connections agree on ids', async () => {
    const a = services(t.db, 100);
    const b = services(t.reopen(), 100);
    const p = await a.projects.createProject({ name: 'd', repository: 'r' });
    const data = generate({ seed: 5, events: 1200, days: 4, pages: 400, visitors: 500 });
    const batches = [];
    for (let i = 0; i < data.length; i += 150) batches.push(data.slice(i, i + 150).map((d) => d.wire));
    // Alternate between the two "processes"; with concurrent writers (PostgreSQL) two batches are in flight at
    // a time. (Two SQLite connections in one thread cannot wait for each other: busy_timeout blocks the thread.)
    for (let i = 0; i < batches.length; i += 2) {
      const first = a.svc.ingest.ingest(p.id, batches[i]!, { source: 'api' });
      if (!t.db.caps.concurrentWriters) await first;
      await Promise.all([first, batches[i + 1] ? b.svc.ingest.ingest(p.id, batches[i + 1]!, { source: 'api' }) : Promise.resolve()]);
    }
    const expected = expectedVisitors(
      data.map((d) => d.truth),
      null,
      null,
    );
    const rows = [];
    for (let offset = 0; ; offset += 250) {
      const page = await a.svc.store.visitors({ projectId: p.id, ...all, offset });
      expect(page.totals).toEqual(expected.totals);
      rows.push(...page.rows);
      if (!page.hasMore) break;
    }
    expect(rows).toEqual(expected.rows);
    const dupes = await t.db.kysely
      .selectFrom('analytics_paths')
      .select(['path', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('path')
      .having((eb) => eb.fn.countAll(), '>', 1)
      .execute();
    expect(dupes).toEqual([]);
    // Visitors too (on SQLite no unique index guards them: the writers' own protocol does).
    const visitors = await analyticsStore.selectVisitorsAfter(t.db.kysely, (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number, 0);
    expect(visitors.length).toBeGreaterThan(0);
    expect(new Set(visitors.map((v) => v.visitor_key)).size).toBe(visitors.length);
    // Ordinals are dense: the writers take turns and each continues after the other's.
    expect(visitors.map((v) => v.ord)).toEqual(visitors.map((_, i) => i + 1));
  });

  it('a batch that fails rolls back whole and leaves no stale dictionary ids in the cache', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    const ev = { path: '/brand-new', ip: '192.0.2.1', userAgent: 'Mozilla/5.0 Firefox/125.0', timestamp: new Date(START_MS).toISOString() };
    // The day-version upsert is the transaction's last write: without its table, everything before rolls back.
    await sql`alter table analytics_day_versions rename to analytics_day_versions_away`.execute(t.db.kysely);
    await expect(svc.ingest.ingest(p.id, [ev], { source: 'api' })).rejects.toThrow();
    await sql`alter table analytics_day_versions_away rename to analytics_day_versions`.execute(t.db.kysely);
    expect(await t.db.kysely.selectFrom('analytics_paths').selectAll().execute()).toEqual([]);
    expect(await storedRows(t.db)).toEqual([]);
    const r = await svc.ingest.ingest(p.id, [ev], { source: 'api' });
    expect(r.inserted).toBe(1);
    const page = await svc.store.visitors({ projectId: p.id, ...all });
    expect(page.rows).toEqual([{ path: '/brand-new', human: 1, ai: 0, total: 1 }]);
  });

  it('deduplicates daily visits: one visitor viewing a page many times a day is one pair per class in the day set', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    const at = (h: number) => new Date(START_MS + h * 3_600_000).toISOString();
    const ev = (h: number, path = '/p') => ({ path, ip: '192.0.2.9', userAgent: 'Mozilla/5.0 Firefox/125.0', timestamp: at(h) });
    await svc.ingest.ingest(p.id, [ev(1), ev(2), ev(3), ev(4, '/p.md'), ev(25)], { source: 'api' });
    await svc.ingest.ingest(p.id, [ev(5), ev(26)], { source: 'api' });
    const ord = (await t.db.kysely.selectFrom('analytics_projects').select('ord').where('project_id', '=', p.id).executeTakeFirstOrThrow()).ord;
    const day0 = Math.floor(START_MS / DAY_MS);
    const days = (await svc.store.summaries.loadWindow(ord, { fromDay: null, toDay: null })).days;
    // Day 0: one (path, visitor) pair flagged human and AI (the .md view is the AI's); day 1: one human pair.
    expect(days.map((d) => [d.day - day0, d.visitors.pairs.length, [...d.visitors.pairs].map((x) => x & 3)])).toEqual([
      [0, 1, [3]],
      [1, 1, [1]],
    ]);
    const page = await svc.store.visitors({ projectId: p.id, ...all });
    expect(page.rows).toEqual([{ path: '/p', human: 1, ai: 1, total: 1 }]);
    const views = await svc.store.views({ projectId: p.id, ...all });
    expect(views.rows).toEqual([{ path: '/p', human: 6, ai: 1, total: 7 }]);
  });

  it('concurrent batches are committed together and each reports its own inserted count; one import key is stored once', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    const data = generate({ seed: 21, events: 800, days: 3 });
    const batches = Array.from({ length: 8 }, (_, i) => data.slice(i * 100, i * 100 + 100).map((d) => d.wire));
    // Batches 0 and 1 carry the same import keys: only one copy of each may be stored.
    const keys = batches[0]!.map((_, i) => `k${i}`);
    const results = await Promise.all(
      batches.map((b, i) => svc.ingest.ingest(p.id, i === 1 ? batches[0]! : b, { source: i < 2 ? 'import' : 'api', ...(i < 2 ? { dedupKeys: keys } : {}) })),
    );
    expect(results.map((r) => r.accepted)).toEqual(Array(8).fill(100));
    expect(results[0]!.inserted + results[1]!.inserted).toBe(100);
    for (const r of results.slice(2)) expect(r.inserted).toBe(100);
    const truths = data.filter((_, i) => i < 100 || i >= 200).map((d) => d.truth);
    const page = await svc.store.views({ projectId: p.id, ...all });
    const expectedViewsTotal = truths.filter((x) => x.qualifying).length;
    expect(page.totals.total).toBe(expectedViewsTotal);
    expect((await svc.store.visitors({ projectId: p.id, ...all })).totals).toEqual(expectedVisitors(truths, null, null).totals);
  });

  it('refuses NUL characters per event (PostgreSQL text cannot store them)', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    const r = await svc.ingest.ingest(p.id, [{ path: '/ok', userAgent: 'a\u0000b' }, { path: '/ok' }], { source: 'api' });
    expect(r.accepted).toBe(1);
    expect(r.rejected).toEqual([{ index: 0, error: expect.stringMatching(/userAgent/) }]);
  });

  it('an unknown project is refused', async () => {
    const { svc } = services(t.db);
    await expect(svc.ingest.ingest('prj_missing', [{ path: '/' }], { source: 'api' })).rejects.toThrow(/not found/);
  });
});
