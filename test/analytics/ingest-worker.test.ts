// The SQLite ingest writer in a worker thread (ingest-worker-client.ts): acknowledged batches are committed,
// close drains what is outstanding, and the configuration switch keeps the writer in-thread. The worker
// exists only for a SQLite file; PostgreSQL (in-thread writer) is covered by the dialect-wide ingest tests.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IMPORT_WRITER } from '../../src/analytics/import/import.ts';
import { createEventPreparer } from '../../src/analytics/ingest/prepare.ts';
import { packEvents, type WriteEvent } from '../../src/analytics/ingest/write-batch.ts';
import { DictionaryMirror } from '../../src/analytics/ingest/writer/dictionary-mirror.ts';
import { createWorkerWriter, groupWriterOptions } from '../../src/analytics/ingest/writer/ingest-worker-client.ts';
import { createGroupWriter } from '../../src/analytics/ingest/writer/ingest-writer.ts';
import { writerSetup } from '../../src/analytics/store/sql-analytics-store.ts';
import { analyticsStore } from '../../src/analytics/store/store.ts';
import { testConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/index.ts';
import { BACKGROUND_THREAD_LIMITS } from '../../src/lib/thread-heaps.ts';
import { createProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';
import { openTestDb, type TestDb, tempDir } from '../helpers/db.ts';
import { openDeletedFiles } from '../helpers/fds.ts';
import { sqlAnalyticsService } from './services.ts';
import { storedRows } from './stored-events.ts';

function services(db: Database, ingestWorker = true, writerStatementCache = testConfig().analytics.writerStatementCache) {
  const projects = createProjectService(createProjectsStore(db.kysely));
  const config = testConfig();
  return {
    projects,
    svc: sqlAnalyticsService({ config: { analytics: { ...config.analytics, ingestWorker, writerStatementCache } }, db, projects, now: Date.now }),
  };
}

const batch = (n: number, offset: number) =>
  Array.from({ length: n }, (_, i) => ({
    path: `/p/${(offset + i) % 37}`,
    timestamp: new Date(Date.UTC(2026, 4, 1) + (offset + i) * 1000).toISOString(),
    userAgent: 'Mozilla/5.0 Firefox/125.0',
    visitorId: `v${(offset + i) % 101}`,
  }));

async function countEvents(db: Database): Promise<number> {
  return (await storedRows(db)).length;
}

describe('analytics ingest worker (SQLite file)', () => {
  let t: TestDb;
  beforeEach(async () => {
    t = await openTestDb('sqlite');
  });
  afterEach(async () => {
    await t.cleanup();
  });

  it('writes from a worker thread; every acknowledged batch is visible to another connection at once', async () => {
    const { projects, svc } = services(t.db);
    expect(svc.store.writerMode).toBe('worker');
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    await svc.ingest.warmUp();
    const other = t.reopen();
    let expected = 0;
    for (let i = 0; i < 5; i++) {
      const r = await svc.ingest.ingest(p.id, batch(200, i * 200), { source: 'api' });
      expected += r.inserted;
      expect(await countEvents(other)).toBe(expected);
    }
    expect(expected).toBe(1000);
    await svc.close();
  });

  it('keeps the visitor keys past its memory bound in an unlinked file beside the database, and closes it', async () => {
    const projects = createProjectService(createProjectsStore(t.db.kysely));
    // No key in memory and the smallest exact cache: returning visitors are confirmed from the key file.
    const analytics = { ...testConfig().analytics, dictionaryCacheEntries: 100, visitorKeysMb: 0 };
    const svc = sqlAnalyticsService({ config: { analytics }, db: t.db, projects, now: Date.now });
    expect(svc.store.writerMode).toBe('worker');
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    const events = (pass: number) =>
      Array.from({ length: 2000 }, (_, i) => ({
        path: `/p/${i % 37}`,
        timestamp: new Date(Date.UTC(2026, 4, 1) + (pass * 2000 + i) * 1000).toISOString(),
        userAgent: 'Mozilla/5.0 Firefox/125.0',
        visitorId: `k${i}`,
      }));
    for (const pass of [0, 1, 2]) for (let i = 0; i < 2000; i += 500) await svc.ingest.ingest(p.id, events(pass).slice(i, i + 500), { source: 'api' });
    const prefix = path.join(path.dirname(t.db.file as string), '.inkwell-visitor-keys-');
    expect(openDeletedFiles(prefix)).toBe(1);
    expect(fs.readdirSync(path.dirname(t.db.file as string)).filter((f) => f.startsWith('.inkwell-visitor-keys-'))).toEqual([]);
    await svc.close();
    expect(openDeletedFiles(prefix)).toBe(0);
    // Every returning visitor found its ordinal: 2,000 visitors stored, not 6,000.
    const ord = (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number;
    expect((await analyticsStore.selectVisitorsAfter(t.db.kysely, ord, 0)).length).toBe(2000);
    expect(await countEvents(t.reopen())).toBe(6000);
  });

  it('close waits for the writes it was handed, then refuses new ones', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    const writes = [0, 1, 2, 3].map((i) => svc.ingest.ingest(p.id, batch(250, i * 250), { source: 'api' }));
    const closed = svc.close();
    const results = await Promise.all(writes);
    await closed;
    expect(results.map((r) => r.inserted)).toEqual([250, 250, 250, 250]);
    expect(await countEvents(t.reopen())).toBe(1000);
    await expect(svc.ingest.ingest(p.id, batch(1, 0), { source: 'api' })).rejects.toThrow(/closed/);
    await expect(svc.ingest.ingest(p.id, [], { source: 'api' })).rejects.toThrow(/closed/);
  });

  it('two writer threads on one file (two processes) ingesting the same visitors at once agree: no key stored twice, exact counts', async () => {
    const a = services(t.db);
    const b = services(t.reopen());
    const p = await a.projects.createProject({ name: 'd', repository: 'r' });
    // Both see every visitor (v0…v100) in interleaved batches, truly concurrently (separate threads).
    const writes = [];
    for (let i = 0; i < 8; i++) {
      writes.push(a.svc.ingest.ingest(p.id, batch(150, i * 150), { source: 'api' }));
      writes.push(b.svc.ingest.ingest(p.id, batch(150, i * 150 + 75), { source: 'api' }));
    }
    const results = await Promise.all(writes);
    expect(results.reduce((n, r) => n + r.inserted, 0)).toBe(16 * 150);
    await Promise.all([a.svc.close(), b.svc.close()]);
    const stored = await analyticsStore.selectVisitorsAfter(t.db.kysely, (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number, 0);
    expect(new Set(stored.map((v) => v.visitor_key)).size).toBe(stored.length);
    expect(stored).toHaveLength(101);
    // Every raw event points at its visitor's one ordinal.
    const ords = new Set(stored.map((v) => v.ord));
    const events = await storedRows(t.db);
    expect(events.filter((e) => ords.has(e.visitor_ord)).length).toBe(16 * 150);
    const c = services(t.reopen());
    const page = await c.svc.store.visitors({ projectId: p.id, walkId: 'w', fromDay: null, toDay: null, offset: 0, limit: 250 });
    expect(page.totals.total).toBe(101);
    await c.svc.close();
  });

  it('reports the dictionary ids it commits to the preparing thread, whose mirror sends them with later batches', async () => {
    const { projects } = services(t.db);
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    const mirror = new DictionaryMirror(1000);
    const learned: number[] = [];
    const writer = createWorkerWriter(
      { sqlitePath: t.db.sqliteHandle?.name as string, cacheEntries: 1000 },
      {
        onLearned: (projectId, l) => {
          learned.push(l.paths.keys.length + l.visitors.keys.length + l.userAgents.keys.length);
          mirror.learn(projectId, l);
        },
      },
    );
    const prep = createEventPreparer();
    const project = { id: p.id, visitorSecret: 's', rotation: 'none' as const };
    const pack = (n: number, offset: number) => {
      const gen = prep.beginBatch(project);
      const b = packEvents(batch(n, offset).map((e) => prep.prepare(e, project, gen, Date.now(), null) as WriteEvent));
      mirror.fill(p.id, b);
      return b;
    };
    const knownCount = (ids: Float64Array | undefined) => [...(ids ?? [])].filter((x) => x > 0).length;
    const first = pack(200, 0);
    expect(knownCount(first.known?.paths) + knownCount(first.known?.visitors)).toBe(0);
    expect(await writer.write(p.id, 'api', first)).toBe(200);
    // 37 paths, 101 visitors and 1 user agent, reported after the commit (before the reply).
    expect(learned).toEqual([139]);
    const second = pack(200, 200);
    expect([knownCount(second.known?.paths), knownCount(second.known?.visitors), knownCount(second.known?.userAgents)]).toEqual([37, 101, 1]);
    expect(await writer.write(p.id, 'api', second)).toBe(200);
    // Everything was known: nothing new to report, so no message.
    expect(learned).toEqual([139]);
    await writer.close();
    // The ids the mirror sent are the stored ones: every event of both batches points at its own path and visitor.
    const pathOf = new Map((await t.db.kysely.selectFrom('analytics_paths').select(['id', 'path']).execute()).map((r) => [Number(r.id), r.path]));
    const keyOf = new Map(
      (await analyticsStore.selectVisitorsAfter(t.db.kysely, (await analyticsStore.selectProjectOrd(t.db.kysely, p.id)) as number, 0)).map((r) => [
        r.ord,
        r.visitor_key,
      ]),
    );
    const rows = (await storedRows(t.db))
      .filter((e) => pathOf.has(e.path_id) && keyOf.has(e.visitor_ord))
      .sort((a, b) => a.ts - b.ts)
      .map((e) => ({ ts: e.ts, path: pathOf.get(e.path_id), visitor_key: keyOf.get(e.visitor_ord) }));
    expect(rows).toHaveLength(400);
    const sent = [...batch(200, 0), ...batch(200, 200)];
    rows.forEach((r, i) => {
      expect(r.path).toBe(sent[i]?.path);
      expect(r.visitor_key).toBe(`v:${sent[i]?.visitorId}`);
    });
  });

  it('a worker that cannot start hands its writes to the in-thread writer, and keeps doing so', async () => {
    const { projects } = services(t.db);
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    const reasons: string[] = [];
    // A database path the worker cannot open: its "directory" is a regular file.
    const notADir = path.join(tempDir(), 'file');
    fs.writeFileSync(notADir, '');
    const writer = createWorkerWriter(
      { sqlitePath: path.join(notADir, 'db.sqlite'), cacheEntries: 100 },
      { fallback: () => createGroupWriter(t.db), onFallback: (err) => reasons.push(err.message) },
    );
    const prep = createEventPreparer();
    const project = { id: p.id, visitorSecret: 's', rotation: 'none' as const };
    const gen = prep.beginBatch(project);
    const events = batch(40, 0).map((e) => prep.prepare(e, project, gen, Date.now(), null) as WriteEvent);
    expect(writer.mode).toBe('worker');
    expect(await Promise.all([writer.write(p.id, 'api', packEvents(events.slice(0, 20))), writer.write(p.id, 'api', packEvents(events.slice(20)))])).toEqual([
      20, 20,
    ]);
    expect(writer.mode).toBe('thread');
    expect(reasons).toHaveLength(1);
    expect(await writer.write(p.id, 'api', packEvents(events.slice(0, 5)))).toBe(5);
    await writer.close();
    expect(await countEvents(t.db)).toBe(45);
  });

  it('a dedup cache smaller than one group of days still finds every duplicate (days of a group are not evicted before checked)', async () => {
    const { projects } = services(t.db);
    const p = await projects.createProject({ name: 'e', repository: 'r' });
    // 4 KiB holds one of these days at most: each group catches up four.
    const writer = createGroupWriter(t.db, { dedupCacheBytes: 4096 });
    const prep = createEventPreparer();
    const project = { id: p.id, visitorSecret: 's', rotation: 'none' as const };
    const gen = prep.beginBatch(project);
    const events = Array.from({ length: 4 * 400 }, (_, i) => {
      const ms = Date.UTC(2026, 4, 1 + (i % 4), 10) + i;
      const ev = prep.prepare(
        { path: `/p/${i % 37}`, timestamp: new Date(ms).toISOString(), userAgent: 'Mozilla/5.0 Firefox/125.0', visitorId: `v${i % 101}` },
        project,
        gen,
        Date.now(),
        `${ms.toString(36).padStart(9, '0')}.line-${i}`,
      ) as WriteEvent;
      return ev;
    });
    expect(events.every((e) => e[14] !== null)).toBe(true);
    expect(await writer.write(p.id, 'import', packEvents(events))).toBe(events.length);
    expect(await writer.write(p.id, 'import', packEvents(events))).toBe(0);
    expect(await writer.write(p.id, 'import', packEvents(events.slice(100, 900)))).toBe(0);
    await writer.close();
    expect(await countEvents(t.db)).toBe(events.length);
  });

  it('closes when its checkpointer thread ended on its own first (it could not open a file the writer had yet to create)', async () => {
    const { projects } = services(t.db);
    const p = await projects.createProject({ name: 'c', repository: 'r' });
    // The checkpointer opens the file with fileMustExist and ends at once; the writer creates it (no schema:
    // the write fails, which is not the point). close() must not wait for an exit that already happened.
    const writer = createWorkerWriter({ sqlitePath: path.join(tempDir(), 'new.sqlite'), cacheEntries: 100 });
    const prep = createEventPreparer();
    const project = { id: p.id, visitorSecret: 's', rotation: 'none' as const };
    const gen = prep.beginBatch(project);
    const events = batch(5, 0).map((e) => prep.prepare(e, project, gen, Date.now(), null) as WriteEvent);
    await writer.write(p.id, 'api', packEvents(events)).catch(() => undefined);
    await writer.close();
    expect(writer.mode).toBe('worker');
  });

  it('a service that never wrote closes at once, warmed up or not', async () => {
    const a = services(t.db);
    await a.svc.close();
    const b = services(t.db);
    await b.svc.ingest.warmUp();
    await b.svc.close();
    expect(await countEvents(t.db)).toBe(0);
  });

  it('INKWELL_ANALYTICS_INGEST_WORKER=0 keeps the writer in the calling thread, with the same results', async () => {
    expect(testConfig({}, { INKWELL_ANALYTICS_INGEST_WORKER: '0' }).analytics.ingestWorker).toBe(false);
    const { projects, svc } = services(t.db, false);
    expect(svc.store.writerMode).toBe('thread');
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    const r = await svc.ingest.ingest(p.id, batch(300, 0), { source: 'api' });
    expect(r).toEqual({ accepted: 300, inserted: 300, rejected: [] });
    expect(await countEvents(t.reopen())).toBe(300);
    await svc.close();
  });

  it("the service's writer keeps INKWELL_ANALYTICS_WRITER_STATEMENT_CACHE prepared statements (32 by default); an import's own settings win", () => {
    const config = testConfig();
    expect(config.analytics.writerStatementCache).toBe(32);
    expect(testConfig({}, { INKWELL_ANALYTICS_WRITER_STATEMENT_CACHE: '64' }).analytics.writerStatementCache).toBe(64);
    expect(writerSetup({ config }, 'a.db', 10)).toMatchObject({ sqliteStatementCache: 32, resourceLimits: BACKGROUND_THREAD_LIMITS });
    expect(writerSetup({ config, writerThread: IMPORT_WRITER }, 'a.db', 10).resourceLimits).toEqual(IMPORT_WRITER.resourceLimits);
    expect(writerSetup({ config, writerThread: IMPORT_WRITER }, 'a.db', 10).sqliteStatementCache).toBe(IMPORT_WRITER.sqliteStatementCache);
  });

  it("the writer's connection keeps INKWELL_SQLITE_CACHE_MB of pages (16 MiB) and a project's visitor keys INKWELL_ANALYTICS_VISITOR_KEYS_MB in memory (64 MiB); an import's own cache wins", () => {
    const config = testConfig();
    expect(writerSetup({ config }, 'a.db', 10)).toMatchObject({ sqliteCacheKib: 16 * 1024, visitorKeyBytes: 64 * 2 ** 20 });
    const set = testConfig({}, { INKWELL_SQLITE_CACHE_MB: '48', INKWELL_ANALYTICS_VISITOR_KEYS_MB: '0' });
    expect(writerSetup({ config: set }, 'a.db', 10)).toMatchObject({ sqliteCacheKib: 48 * 1024, visitorKeyBytes: 0 });
    expect(writerSetup({ config, writerThread: IMPORT_WRITER }, 'a.db', 10).sqliteCacheKib).toBe(IMPORT_WRITER.sqliteCacheKib);
  });

  it("an import's writer options (IMPORT_WRITER) reach the group writer the same way in the worker and in the serving thread", () => {
    const config = testConfig();
    // Both ingest-worker.ts and sql-analytics-store.ts createWriter build their group writer from groupWriterOptions.
    const imported = groupWriterOptions(writerSetup({ config, writerThread: IMPORT_WRITER }, 'a.db', 10));
    expect(imported).toEqual({
      cacheEntries: 10,
      projectStateBytes: config.analytics.projectStateMb * 2 ** 20,
      visitorKeyBytes: config.analytics.visitorKeysMb * 2 ** 20,
      dedupCacheBytes: IMPORT_WRITER.dedupCacheBytes,
      visitorCache: false,
    });
    // The service's own writer keeps the defaults: the exact visitor cache and the writer's dedup bound.
    const served = groupWriterOptions(writerSetup({ config }, 'a.db', 10));
    expect(served).not.toHaveProperty('visitorCache');
    expect(served).not.toHaveProperty('dedupCacheBytes');
  });

  it('a writer keeping the fewest statements (8) evicts and compiles again, with the same results', async () => {
    const { projects, svc } = services(t.db, true, 8);
    expect(svc.store.writerMode).toBe('worker');
    const p = await projects.createProject({ name: 'd', repository: 'r' });
    // Batches of many lengths: each dictionary lookup list length is a statement of its own, so more than 8 exist.
    let offset = 0;
    let inserted = 0;
    for (const n of [1, 7, 50, 3, 120, 13, 400, 2, 77, 250, 9, 31]) {
      inserted += (await svc.ingest.ingest(p.id, batch(n, offset), { source: 'api' })).inserted;
      offset += n;
    }
    expect(inserted).toBe(offset);
    expect(await countEvents(t.reopen())).toBe(offset);
    await svc.close();
  });
});
