import { afterAll, beforeAll, expect, it } from 'vitest';
import { testConfig } from '../../src/config.ts';
import { createProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';
import { generate } from './dataset.ts';
import { sqlAnalyticsService } from './services.ts';

describeEachDialect('analytics export snapshots', (dialect) => {
  let t: TestDb;
  let clock = Date.now();
  let svc: ReturnType<typeof sqlAnalyticsService>;
  let projectId: string;
  const q = (walkId: string, offset: number, limit = 5) => ({ projectId, walkId, fromDay: null, toDay: null, offset, limit });
  const send = async (seed: number, n: number) => {
    const r = await svc.ingest.ingest(
      projectId,
      generate({ seed, events: n, days: 3, pagePrefix: `/s${seed}/` }).map((d) => d.wire),
      { source: 'api' },
    );
    expect(r.inserted).toBe(n);
  };

  beforeAll(async () => {
    t = await openTestDb(dialect);
    const projects = createProjectService(createProjectsStore(t.db.kysely));
    const config = testConfig();
    svc = sqlAnalyticsService({ config: { analytics: { ...config.analytics, snapshotMs: 60_000 } }, db: t.db, projects, now: () => clock });
    projectId = (await projects.createProject({ name: 'x', repository: 'r' })).id;
    await send(1, 400);
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  it('computes a query once and serves every page from that result while the data is unchanged', async () => {
    const before = svc.store.exporter.computations;
    const pages = await Promise.all([svc.store.visitors(q('a', 0)), svc.store.visitors(q('b', 0)), svc.store.visitors(q('c', 0))]);
    expect(svc.store.exporter.computations - before).toBe(1);
    expect(pages[1]).toEqual(pages[0]);
    for (let offset = 5; offset < 40; offset += 5) await svc.store.visitors(q('a', offset));
    await svc.store.visitors(q('d', 0));
    expect(svc.store.exporter.computations - before).toBe(1);
    // Views are another query.
    await svc.store.views(q('a', 0));
    expect(svc.store.exporter.computations - before).toBe(2);
  });

  it("a walk keeps its snapshot while data arrives; a new walk (offset 0) sees the new data; an idle walk's snapshot expires", async () => {
    const first = await svc.store.visitors(q('w', 0));
    await send(2, 200);
    const second = await svc.store.visitors(q('w', 5));
    expect(second.totals).toEqual(first.totals);
    const fresh = await svc.store.visitors(q('other', 0));
    expect(fresh.totals.total).toBeGreaterThan(first.totals.total);
    // Still within snapshotMs of the last page: the walk continues on its snapshot.
    clock += 59_000;
    expect((await svc.store.visitors(q('w', 10))).totals).toEqual(first.totals);
    // Idle for longer than snapshotMs: the next page comes from the current data.
    clock += 61_000;
    expect((await svc.store.visitors(q('w', 15))).totals).toEqual(fresh.totals);
  });

  it('an empty or unknown range is an empty result without a query', async () => {
    const before = svc.store.exporter.computations;
    const empty = await svc.store.visitors({ ...q('e', 0), fromDay: 20_000, toDay: 20_000 });
    expect(empty).toEqual({ totals: { human: 0, ai: 0, total: 0 }, rows: [], hasMore: false });
    const unknown = await svc.store.visitors({ ...q('e', 0), projectId: 'prj_none' });
    expect(unknown.rows).toEqual([]);
    expect(svc.store.exporter.computations).toBe(before);
  });
});
