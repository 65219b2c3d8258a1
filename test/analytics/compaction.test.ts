// Compaction against concurrent work (segment-days.ts compactDay): it reads a day without the write lock, merges
// it elsewhere and swaps the result in with a short transaction, so appends (from this process and others) and
// reads go on meanwhile. Every event stays stored exactly once whatever commits between the read and the swap;
// a day rewritten meanwhile is left alone; a current persisted summary is carried across the swap.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { mergeInThread } from '../../src/analytics/store/segment-days.ts';
import { segmentStore } from '../../src/analytics/store/segment-store.ts';
import { analyticsStore as store } from '../../src/analytics/store/store.ts';
import { summaryStore } from '../../src/analytics/store/summary-store.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';
import { services } from './services.ts';
import { storedRows } from './stored-events.ts';

const DAY_MS = Date.UTC(2026, 4, 1);
const DAY = DAY_MS / 86_400_000;
const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

/** `n` page views on DAY from second `offset` on: each event has a time of its own (its identity here). */
const views = (n: number, offset: number) =>
  Array.from({ length: n }, (_, i) => ({
    path: `/docs/p${(offset + i) % 7}`,
    timestamp: new Date(DAY_MS + (offset + i) * 1000).toISOString(),
    userAgent: UA,
    visitorId: `v${(offset + i) % 5}`,
  }));
const whole = (projectId: string, walkId: string) => ({ projectId, walkId, fromDay: null, toDay: null, offset: 0, limit: 250 });
/** The stored events' times, sorted: each sent event must be there exactly once. */
const storedTimes = async (t: TestDb) => (await storedRows(t.db)).map((r) => r.ts).sort((a, b) => a - b);
const sentTimes = (offsets: [number, number][]) =>
  offsets.flatMap(([n, offset]) => Array.from({ length: n }, (_, i) => DAY_MS + (offset + i) * 1000)).sort((a, b) => a - b);

/** A promise and the function that settles it: the test decides when a merge in progress may finish. */
function gate(): { opened: Promise<void>; open(): void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

describeEachDialect('compaction with concurrent work', (dialect) => {
  let t: TestDb;
  beforeEach(async () => {
    t = await openTestDb(dialect);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('appends from two processes between the read and the swap are kept, every event once, and a current summary is carried', async () => {
    const a = services(t.db);
    const b = services(t.reopen());
    const p = await a.projects.createProject({ name: 'race', repository: 'r' });
    const sent: [number, number][] = [];
    for (let i = 0; i < 10; i++) {
      await a.svc.ingest.ingest(p.id, views(5, i * 5), { source: 'api' });
      sent.push([5, i * 5]);
    }
    const ord = (await store.selectProjectOrd(t.db.kysely, p.id)) as number;
    let merging = 0;
    const merged = await a.svc.store.compact(async (segments) => {
      merging++;
      // The day was read; before its merge is swapped in, both processes append to it, and the day's summary is
      // persisted at its newest version (what the swap carries).
      await a.svc.ingest.ingest(p.id, views(3, 100), { source: 'api' });
      await b.svc.ingest.ingest(p.id, views(4, 200), { source: 'api' });
      sent.push([3, 100], [4, 200]);
      await b.svc.store.summaries.sealAll();
      return mergeInThread(segments);
    });
    expect(merging).toBe(1);
    expect(merged).toBe(10);
    // The ten segments read became one; the two appended meanwhile are untouched, above it.
    expect((await segmentStore.selectDaySegments(t.db.kysely, ord, DAY)).map((s) => s.events)).toEqual([50, 3, 4]);
    expect(await storedTimes(t)).toEqual(sentTimes(sent));
    const v = (await summaryStore.selectDayVersions(t.db.kysely, ord, { fromDay: DAY, toDay: DAY + 1 }))[0];
    expect(v?.rewritten).toBe(v?.version);
    expect(await summaryStore.selectSummaryVersion(t.db.kysely, ord, DAY)).toBe(v?.version);
    // A fresh process answers from the carried summary, exactly.
    const c = services(t.reopen());
    expect((await c.svc.store.views(whole(p.id, 'c'))).totals.total).toBe(57);
    expect(c.svc.store.summaries.stats.rebuilt).toBe(0);
    await c.svc.close();
    await a.svc.close();
    await b.svc.close();
  });

  it('a day compacted by another process between the read and the swap is left alone: every event once', async () => {
    const a = services(t.db);
    const b = services(t.reopen());
    const p = await a.projects.createProject({ name: 'twice', repository: 'r' });
    for (let i = 0; i < 10; i++) await a.svc.ingest.ingest(p.id, views(5, i * 5), { source: 'api' });
    const ord = (await store.selectProjectOrd(t.db.kysely, p.id)) as number;
    const merged = await a.svc.store.compact(async (segments) => {
      expect(await b.svc.store.compact()).toBe(10);
      await b.svc.ingest.ingest(p.id, views(2, 300), { source: 'api' });
      return mergeInThread(segments);
    });
    expect(merged).toBe(0);
    expect((await segmentStore.selectDaySegments(t.db.kysely, ord, DAY)).map((s) => s.events)).toEqual([50, 2]);
    expect(await storedTimes(t)).toEqual(sentTimes([...Array.from({ length: 10 }, (_, i): [number, number] => [5, i * 5]), [2, 300]]));
    await a.svc.close();
    await b.svc.close();
  });

  it('compactions in two processes running freely alongside appends from both keep every event exactly once', async () => {
    const a = services(t.db);
    const b = services(t.reopen());
    const p = await a.projects.createProject({ name: 'free', repository: 'r' });
    const sent: [number, number][] = [];
    let offset = 0;
    const append = async (s: typeof a, n: number) => {
      const at = offset;
      offset += n;
      sent.push([n, at]);
      expect((await s.svc.ingest.ingest(p.id, views(n, at), { source: 'api' })).inserted).toBe(n);
    };
    for (let i = 0; i < 9; i++) await append(a, 3);
    let merged = 0;
    for (let round = 0; round < 6; round++) {
      const work: Promise<unknown>[] = [a.svc.store.compact().then((m) => (merged += m)), b.svc.store.compact().then((m) => (merged += m))];
      for (let i = 0; i < 5; i++) work.push(append(i % 2 === 0 ? a : b, 2));
      await Promise.all(work);
      for (let i = 0; i < 9; i++) await append(i % 2 === 0 ? b : a, 1);
    }
    expect(merged).toBeGreaterThan(0);
    expect(await storedTimes(t)).toEqual(sentTimes(sent));
    const c = services(t.reopen());
    expect((await c.svc.store.views(whole(p.id, 'c'))).totals.total).toBe(offset);
    await c.svc.close();
    await a.svc.close();
    await b.svc.close();
  });

  it('ingest and reads of the same project and day are answered while a compaction of the day is in progress', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'served', repository: 'r' });
    for (let i = 0; i < 10; i++) await svc.ingest.ingest(p.id, views(5, i * 5), { source: 'api' });
    const ord = (await store.selectProjectOrd(t.db.kysely, p.id)) as number;
    const read = gate();
    const release = gate();
    const compaction = svc.store.compact(async (segments) => {
      read.open();
      await release.opened;
      return mergeInThread(segments);
    });
    await read.opened;
    // The compaction has read the day and holds no lock: an append to the day commits, reads answer with it.
    expect((await svc.ingest.ingest(p.id, views(1, 400), { source: 'api' })).inserted).toBe(1);
    expect((await svc.store.views(whole(p.id, 'during'))).totals.total).toBe(51);
    expect((await segmentStore.selectDaySegments(t.db.kysely, ord, DAY)).length).toBe(11);
    release.open();
    expect(await compaction).toBe(10);
    expect((await segmentStore.selectDaySegments(t.db.kysely, ord, DAY)).map((s) => s.events)).toEqual([50, 1]);
    expect((await svc.store.views(whole(p.id, 'after'))).totals.total).toBe(51);
    await svc.close();
  });

  it('merges only the small segments of a tier, leaving a large merged one alone; a quiet day is merged whole, its summary carried', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'tiers', repository: 'r' });
    const sent: [number, number][] = [];
    let offset = 0;
    const append = async (n: number) => {
      sent.push([n, offset]);
      await svc.ingest.ingest(p.id, views(n, offset), { source: 'api' });
      offset += n;
    };
    for (let i = 0; i < 9; i++) await append(10);
    const ord = (await store.selectProjectOrd(t.db.kysely, p.id)) as number;
    const segments = () => segmentStore.selectDaySegments(t.db.kysely, ord, DAY);
    // Nine of tier 1 (8-63 events): merged into one of tier 2.
    expect(await svc.store.compact()).toBe(9);
    const large = (await segments())[0];
    expect(large?.events).toBe(90);
    // Eight small ones more (tier 0) and one of tier 1: only the eight small ones are merged; the large one stays.
    for (let i = 0; i < 8; i++) await append(2);
    await append(20);
    expect(await svc.store.compact()).toBe(8);
    const after = await segments();
    expect(after.map((s) => s.events)).toEqual([90, 16, 20]);
    expect(Buffer.from(after[0]?.data as Uint8Array).equals(Buffer.from(large?.data as Uint8Array))).toBe(true);
    // Seven of tier 0 more: ten segments, no tier with eight. The day changed since the last step: left alone.
    for (let i = 0; i < 7; i++) await append(1);
    expect(await svc.store.compact()).toBe(0);
    expect(await svc.store.summaries.sealAll()).toBeGreaterThanOrEqual(1);
    // Nothing appended since: quiet, merged whole, and the persisted summary is carried to the new version.
    expect(await svc.store.compact()).toBe(10);
    expect((await segments()).map((s) => s.events)).toEqual([133]);
    const v = (await summaryStore.selectDayVersions(t.db.kysely, ord, { fromDay: DAY, toDay: DAY + 1 }))[0];
    expect(v?.rewritten).toBe(v?.version);
    expect(await summaryStore.selectSummaryVersion(t.db.kysely, ord, DAY)).toBe(v?.version);
    expect(await storedTimes(t)).toEqual(sentTimes(sent));
    expect((await svc.store.views(whole(p.id, 'w'))).totals.total).toBe(133);
    await svc.close();
  });

  it("background writes (compaction's swap, the sealer's summaries) are made by the ingest writer, not on the serving thread's connection", async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'writer', repository: 'r' });
    for (let i = 0; i < 10; i++) await svc.ingest.ingest(p.id, views(5, i * 5), { source: 'api' });
    const ord = (await store.selectProjectOrd(t.db.kysely, p.id)) as number;
    // SQLite: the changes this connection made (the writer's own connection, in its thread, counts its own).
    const changes = () => (t.db.sqliteHandle?.prepare('select total_changes() as n').get() as { n: number } | undefined)?.n ?? null;
    const before = changes();
    expect(await svc.store.compact()).toBe(10);
    expect(await svc.store.summaries.sealAll()).toBeGreaterThanOrEqual(1);
    await svc.store.views(whole(p.id, 'read'));
    await svc.store.summaries.persisted();
    expect(changes()).toBe(before);
    const v = (await summaryStore.selectDayVersions(t.db.kysely, ord, { fromDay: DAY, toDay: DAY + 1 }))[0];
    expect(await summaryStore.selectSummaryVersion(t.db.kysely, ord, DAY)).toBe(v?.version);
    expect((await segmentStore.selectDaySegments(t.db.kysely, ord, DAY)).map((s) => s.events)).toEqual([50]);
    await svc.close();
  });
});
