// Raw events as day segments inside the SQL analytics store (migration 0016): moving the rows stored before it,
// import dedup by the segments' 64-bit hashes (across flushes, processes and compaction), compaction, and a
// transaction that fails between two segments leaving nothing behind.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { encodeSegment } from '../../src/analytics/segments/codec.ts';
import { dedupHash } from '../../src/analytics/segments/dedup.ts';
import { segmentStore } from '../../src/analytics/store/segment-store.ts';
import { analyticsStore as store } from '../../src/analytics/store/store.ts';
import { migrate } from '../../src/db/index.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';
import { services } from './services.ts';
import { rewindToEventRows, storedRows } from './stored-events.ts';

const DAY = Date.UTC(2026, 4, 1);
const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

/** `n` page views on the day starting at `dayMs`, from `offset` on (distinct times, paths and visitors). */
const views = (n: number, offset = 0, dayMs = DAY) =>
  Array.from({ length: n }, (_, i) => ({
    path: `/docs/p${(offset + i) % 7}`,
    timestamp: new Date(dayMs + (offset + i) * 1000).toISOString(),
    userAgent: UA,
    visitorId: `v${(offset + i) % 5}`,
  }));
const keys = (n: number, offset = 0) => Array.from({ length: n }, (_, i) => `key-${offset + i}`);
const all = { walkId: 'w', fromDay: null, toDay: null, offset: 0, limit: 250 };
/** Stored rows without their storage position (seq), in time order: what a move or a merge must keep. */
const content = async (t: TestDb) =>
  (await storedRows(t.db)).map(({ seq: _seq, ...r }) => r).sort((a, b) => a.project_ord - b.project_ord || a.ts - b.ts || a.visitor_ord - b.visitor_ord);

describeEachDialect('analytics raw events as day segments', (dialect) => {
  let t: TestDb;
  beforeEach(async () => {
    t = await openTestDb(dialect);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('migration 0016 moves the stored rows into segments: same events, same answers, and a re-import still adds nothing', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'm', repository: 'r' });
    const events = [...views(30), ...views(20, 0, DAY + 86_400_000)];
    const k = keys(events.length);
    await svc.ingest.ingest(p.id, events, { source: 'import', dedupKeys: k });
    await svc.ingest.ingest(p.id, views(10, 100), { source: 'api' });
    const before = await content(t);
    const visitors = await svc.store.visitors({ projectId: p.id, ...all });
    const viewsPage = await svc.store.views({ projectId: p.id, ...all });
    await svc.close();

    // Back to rows (with their import keys, as the old table kept them), then migrate.
    const keyOf = new Map(k.map((key) => [dedupHash(key), key]));
    const rows = (await storedRows(t.db)).map(({ seq: _s, dedup, ...r }) => ({
      ...r,
      user_agent: null,
      dedup_key: dedup === null ? null : (keyOf.get(dedup) as string),
    }));
    await rewindToEventRows(t.db, rows);
    expect(await migrate(t.db)).toEqual(['0016_analytics_segments']);
    expect(await content(t)).toEqual(before);

    const after = services(t.db);
    expect(await after.svc.store.visitors({ projectId: p.id, ...all })).toEqual(visitors);
    expect(await after.svc.store.views({ projectId: p.id, ...all })).toEqual(viewsPage);
    expect((await after.svc.ingest.ingest(p.id, events, { source: 'import', dedupKeys: k })).inserted).toBe(0);
    // New segments land above the moved ones (the project's version was raised past their seqs).
    expect((await after.svc.ingest.ingest(p.id, views(3, 200), { source: 'api' })).inserted).toBe(3);
    expect((await storedRows(t.db)).length).toBe(before.length + 3);
    await after.svc.close();
  });

  it('one segment per (project, day) a flush touched; compaction merges a complete day, keeping events and answers', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'c', repository: 'r' });
    for (let i = 0; i < 10; i++) await svc.ingest.ingest(p.id, views(5, i * 5), { source: 'import', dedupKeys: keys(5, i * 5) });
    await svc.ingest.ingest(p.id, [...views(2, 50), ...views(2, 0, DAY + 86_400_000)], { source: 'api' });
    const ord = (await store.selectProjectOrd(t.db.kysely, p.id)) as number;
    const day = DAY / 86_400_000;
    expect((await segmentStore.selectDaySegments(t.db.kysely, ord, day)).length).toBe(11);
    expect((await segmentStore.selectDaySegments(t.db.kysely, ord, day + 1)).length).toBe(1);
    const before = await content(t);
    const visitors = await svc.store.visitors({ projectId: p.id, ...all });

    expect(await svc.store.compact()).toBe(11);
    const merged = await segmentStore.selectDaySegments(t.db.kysely, ord, day);
    expect(merged.map((s) => s.events)).toEqual([52]);
    expect((await segmentStore.selectDaySegments(t.db.kysely, ord, day + 1)).length).toBe(1);
    expect(await content(t)).toEqual(before);
    expect(await svc.store.visitors({ projectId: p.id, walkId: 'w2', fromDay: null, toDay: null, offset: 0, limit: 250 })).toEqual(visitors);
    // Nothing left to do.
    expect(await svc.store.compact()).toBe(0);

    // A re-import after compaction adds nothing: in this process (cached hashes) and in a fresh one (read back).
    const all50 = views(50);
    expect((await svc.ingest.ingest(p.id, all50, { source: 'import', dedupKeys: keys(50) })).inserted).toBe(0);
    await svc.close();
    const fresh = services(t.reopen());
    expect((await fresh.svc.ingest.ingest(p.id, all50, { source: 'import', dedupKeys: keys(50) })).inserted).toBe(0);
    // And the lines it has not seen are added, once.
    expect((await fresh.svc.ingest.ingest(p.id, views(5, 60), { source: 'import', dedupKeys: keys(5, 60) })).inserted).toBe(5);
    expect((await fresh.svc.ingest.ingest(p.id, views(5, 60), { source: 'import', dedupKeys: keys(5, 60) })).inserted).toBe(0);
    await fresh.svc.close();
    expect((await storedRows(t.db)).length).toBe(before.length + 5);
  });

  it('dedup sees lines another process imported after this one cached the day', async () => {
    const a = services(t.db);
    const b = services(t.reopen());
    const p = await a.projects.createProject({ name: 'd', repository: 'r' });
    expect((await a.svc.ingest.ingest(p.id, views(5), { source: 'import', dedupKeys: keys(5) })).inserted).toBe(5);
    expect((await b.svc.ingest.ingest(p.id, views(10), { source: 'import', dedupKeys: keys(10) })).inserted).toBe(5);
    // `a` cached the day after its own flush; `b`'s lines are read from the segment it appended.
    expect((await a.svc.ingest.ingest(p.id, views(12), { source: 'import', dedupKeys: keys(12) })).inserted).toBe(2);
    await a.svc.close();
    await b.svc.close();
    expect((await storedRows(t.db)).length).toBe(12);
  });

  it('a transaction that fails between two segments leaves nothing: no segment, no day version, no project version', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'f', repository: 'r' });
    await svc.ingest.ingest(p.id, views(1, 500), { source: 'api' });
    const ord = (await store.selectProjectOrd(t.db.kysely, p.id)) as number;
    const version = await store.selectVersion(t.db.kysely, ord);
    const before = await storedRows(t.db);
    const daysBefore = await t.db.kysely.selectFrom('analytics_day_versions').selectAll().execute();
    // The next transaction's segment of the second day is taken already: its insert fails after the first day's.
    const day2 = DAY / 86_400_000 + 1;
    const blocker = encodeSegment([]);
    await segmentStore.insertSegment(t.db.kysely, ord, day2, version + 1, 0, blocker);
    const batch = [...views(4, 0), ...views(4, 0, DAY + 86_400_000)];
    await expect(svc.ingest.ingest(p.id, batch, { source: 'import', dedupKeys: keys(8) })).rejects.toThrow();
    expect(await storedRows(t.db)).toEqual(before);
    expect(await t.db.kysely.selectFrom('analytics_day_versions').selectAll().execute()).toEqual(daysBefore);
    expect(await store.selectVersion(t.db.kysely, ord)).toBe(version);

    // Without the blocker the same lines go in whole, once.
    await segmentStore.deleteSegments(t.db.kysely, ord, day2, [version + 1]);
    expect((await svc.ingest.ingest(p.id, batch, { source: 'import', dedupKeys: keys(8) })).inserted).toBe(8);
    expect((await svc.ingest.ingest(p.id, batch, { source: 'import', dedupKeys: keys(8) })).inserted).toBe(0);
    expect((await storedRows(t.db)).length).toBe(9);
    await svc.close();
  });
});
