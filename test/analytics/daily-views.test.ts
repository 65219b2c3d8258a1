// The daily view counts (the day summaries' views, derived from the segments; the analytics_daily_views table of
// migration 0009 until 0017): they always equal the qualifying raw events counted per (day, path, class) — across
// batches, repeated paths, imports (a re-import adds nothing), reclassification, compaction, in a cold process
// (persisted summaries), and for events stored before migration 0016.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { analyticsStore as store } from '../../src/analytics/store/store.ts';
import { summaryStore } from '../../src/analytics/store/summary-store.ts';
import { type Database, migrate } from '../../src/db/index.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';
import { services } from './services.ts';
import { rewindToEventRows, rewriteStoredEvents, storedRows } from './stored-events.ts';

const UA_FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
const UA_CLAUDE = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)';
const UA_GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

/** Deterministic events over 3 days, 6 paths, human / AI / crawler, some not qualifying (assets, POST, 404). */
function events(n: number, seed = 1) {
  const out: Record<string, unknown>[] = [];
  let x = seed;
  const next = () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x;
  };
  for (let i = 0; i < n; i++) {
    const r = next();
    const ua = [UA_FIREFOX, UA_FIREFOX, UA_CLAUDE, UA_GOOGLEBOT][r % 4];
    const path = ['/docs/a', '/docs/b', '/docs/c/', '/docs/d?x=1', '/img/logo.png', '/docs/e'][(r >> 3) % 6];
    const day = 1 + ((r >> 6) % 3);
    const e: Record<string, unknown> = { path, timestamp: `2026-06-0${day}T10:00:00Z`, userAgent: ua, visitorId: `v${(r >> 9) % 7}` };
    if ((r >> 12) % 10 === 0) e.method = 'POST';
    if ((r >> 13) % 11 === 0) e.status = 404;
    out.push(e);
  }
  return out;
}

interface Count {
  day: number;
  path_id: number;
  human: number;
  ai: number;
}

const norm = (rows: Count[]) =>
  rows
    .map((r) => ({ day: Number(r.day), path_id: Number(r.path_id), human: Number(r.human), ai: Number(r.ai) }))
    .sort((a, b) => a.day - b.day || a.path_id - b.path_id);

/** The counts the day summaries hold, every project and day (a cold service each time: built from segments or blobs). */
async function stored(db: Database): Promise<Count[]> {
  const { svc } = services(db);
  const out: Count[] = [];
  for (const { ord } of await db.kysely.selectFrom('analytics_projects').select('ord').execute()) {
    for (const d of (await svc.store.summaries.loadWindow(Number(ord), { fromDay: null, toDay: null })).days) {
      d.views.pathIds.forEach((p, k) => {
        out.push({ day: d.day, path_id: p, human: d.views.human[k] as number, ai: d.views.ai[k] as number });
      });
    }
  }
  await svc.close();
  return norm(out);
}

/** The same counts straight from the raw events. */
async function fromEvents(db: Database): Promise<Count[]> {
  const counts = new Map<string, Count>();
  for (const e of await storedRows(db)) {
    if (e.qualifying !== 1) continue;
    const k = `${e.day}:${e.path_id}`;
    const c = counts.get(k) ?? { day: e.day, path_id: e.path_id, human: 0, ai: 0 };
    if (e.class === 'human') c.human++;
    if (e.class === 'ai') c.ai++;
    counts.set(k, c);
  }
  return norm([...counts.values()]);
}

describeEachDialect('analytics daily view counts', (dialect) => {
  let t: TestDb;
  beforeEach(async () => {
    t = await openTestDb(dialect);
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('equal the qualifying raw events per (day, path, class) after many batches; a re-import adds nothing', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'v', repository: 'r' });
    const all = events(900);
    for (let i = 0; i < all.length; i += 100) await svc.ingest.ingest(p.id, all.slice(i, i + 100), { source: 'api' });
    const keys = all.map((_, i) => `line-${i}`);
    await svc.ingest.ingest(p.id, all.slice(0, 300), { source: 'import', dedupKeys: keys.slice(0, 300) });
    const counted = await stored(t.db);
    expect(counted).toEqual(await fromEvents(t.db));
    const total = counted.reduce((s, r) => s + r.human + r.ai, 0);
    expect(total).toBeGreaterThan(300);
    expect(counted.some((r) => r.ai > 0) && counted.some((r) => r.human > 0)).toBe(true);
    // The same import lines again (and a part of them): nothing changes.
    expect((await svc.ingest.ingest(p.id, all.slice(0, 300), { source: 'import', dedupKeys: keys.slice(0, 300) })).inserted).toBe(0);
    expect(await stored(t.db)).toEqual(counted);
    await svc.close();
  });

  it('the views export is the counts summed over the window, per path', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'v', repository: 'r' });
    await svc.ingest.ingest(p.id, events(400, 7), { source: 'api' });
    const ord = (await store.selectProjectOrd(t.db.kysely, p.id)) as number;
    const fromDay = Math.floor(Date.parse('2026-06-02T00:00:00Z') / 86_400_000);
    const page = await svc.store.views({ projectId: p.id, walkId: 'w', fromDay, toDay: fromDay + 2, offset: 0, limit: 100 });
    const pathOf = new Map((await t.db.kysely.selectFrom('analytics_paths').select(['id', 'path']).execute()).map((r) => [Number(r.id), r.path]));
    const byName = new Map<string, { path: string; human: number; ai: number; total: number }>();
    for (const e of await storedRows(t.db, ord)) {
      if (e.qualifying !== 1 || e.day < fromDay || e.day >= fromDay + 2) continue;
      const path = pathOf.get(e.path_id) as string;
      const r = byName.get(path) ?? { path, human: 0, ai: 0, total: 0 };
      if (e.class === 'human') r.human++;
      if (e.class === 'ai') r.ai++;
      r.total = r.human + r.ai;
      byName.set(path, r);
    }
    const expected = [...byName.values()];
    const byPath = (a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path);
    expect([...page.rows].sort(byPath)).toEqual(expected.sort(byPath));
    expect(page.totals).toEqual({
      human: expected.reduce((s, r) => s + r.human, 0),
      ai: expected.reduce((s, r) => s + r.ai, 0),
      total: expected.reduce((s, r) => s + r.total, 0),
    });
    await svc.close();
  });

  it('follow reclassification, and a cold process reads them from the persisted summaries', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'v', repository: 'r' });
    await svc.ingest.ingest(p.id, events(300, 3), { source: 'api' });
    const right = await stored(t.db);
    // Events stored under stale classes (as a rules change leaves them).
    await rewriteStoredEvents(t.db, (e) => (e.cls === 'human' ? { ...e, cls: 'ai' } : e));
    expect(await stored(t.db)).not.toEqual(right);
    await svc.store.reclassify(p.id);
    expect(await stored(t.db)).toEqual(right);
    // Persisted (by the cold reads above, else by sealing: twice, a day's version must hold for a tick), then
    // read cold: the same.
    await svc.store.summaries.sealOnce();
    await svc.store.summaries.sealOnce();
    const ord = (await store.selectProjectOrd(t.db.kysely, p.id)) as number;
    expect((await summaryStore.selectStaleDays(t.db.kysely, 1000)).filter((d) => d.projectOrd === ord)).toEqual([]);
    expect(await stored(t.db)).toEqual(right);
    await svc.close();
  });

  it('events stored before migration 0016 (as rows) count the same after 0016 and 0017', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'v', repository: 'r' });
    await svc.ingest.ingest(p.id, events(500, 5), { source: 'api' });
    await svc.close();
    const right = await stored(t.db);
    // Back to raw events as rows (before 0016), then migrate again.
    await rewindToEventRows(t.db);
    expect(await migrate(t.db)).toEqual(['0016_analytics_segments']);
    expect(await stored(t.db)).toEqual(right);
    expect(right.length).toBeGreaterThan(0);
  });
});
