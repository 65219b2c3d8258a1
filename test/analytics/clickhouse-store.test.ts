// The ClickHouse analytics store (src/analytics/clickhouse/): the conformance suite (store-conformance.ts)
// through chdb against the reference store, and against the SQL store on SQLite (the same generated events
// appended to both, every answer equal); through a real server too when CLICKHOUSE_URL is set. Then what an
// unreachable server does: not ready, nothing acknowledged.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createClickHouseAnalyticsStore, openClickHouseAnalyticsStore } from '../../src/analytics/clickhouse/clickhouse-store.ts';
import { createHttpExecutor } from '../../src/analytics/clickhouse/http-executor.ts';
import { CLICKHOUSE_MIGRATIONS, migrateClickHouse } from '../../src/analytics/clickhouse/migrations.ts';
import { packEvents, type WriteEvent } from '../../src/analytics/ingest/write-batch.ts';
import { createSqlAnalyticsStore } from '../../src/analytics/store/sql-analytics-store.ts';
import { testConfig } from '../../src/config.ts';
import { createProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';
import { clickHouseServerOptions, openChdb, openServer, type TestClickHouse } from '../helpers/clickhouse.ts';
import { openTestDb } from '../helpers/db.ts';
import { createReferenceStore } from './reference-store.ts';
import { describeAnalyticsStoreConformance, type StoreUnderTest } from './store-conformance.ts';

async function clickHouseStore(open: () => TestClickHouse | Promise<TestClickHouse>): Promise<StoreUnderTest> {
  const t = await open();
  const store = await openClickHouseAnalyticsStore({ ch: t.ch, now: Date.now });
  return {
    store,
    createProject: async () => `prj_${randomUUID().replaceAll('-', '')}`,
    async cleanup() {
      await store.close();
      await t.cleanup();
    },
  };
}

/** The ClickHouse store, compared with the SQL store on SQLite (projects made in the SQL database, used by both). */
async function againstSqlite(): Promise<StoreUnderTest> {
  const ch = await clickHouseStore(openChdb);
  const t = await openTestDb('sqlite');
  const projects = createProjectService(createProjectsStore(t.db.kysely));
  const sql = createSqlAnalyticsStore({ config: { analytics: testConfig().analytics }, db: t.db, now: Date.now });
  return {
    store: ch.store,
    reference: sql,
    createProject: async () => (await projects.createProject({ name: 'clickhouse', repository: 'r' })).id,
    async cleanup() {
      await ch.cleanup();
      await sql.close();
      await t.cleanup();
    },
  };
}

describeAnalyticsStoreConformance('ClickHouse store [chdb]', () => clickHouseStore(openChdb));
describeAnalyticsStoreConformance('ClickHouse store [chdb] against the SQL store [sqlite]', againstSqlite);
if (clickHouseServerOptions()) describeAnalyticsStoreConformance('ClickHouse store [server]', () => clickHouseStore(openServer));

describe('ClickHouse store, concurrent appends', () => {
  it('groups concurrent appends into shared inserts and still stores each dedup key once, first append first', async () => {
    const t = openChdb();
    let inserts = 0;
    const ch = {
      ...t.ch,
      insert(table: string, rows: readonly Record<string, unknown>[], settings?: Record<string, string | number>) {
        if (table === 'events') inserts++;
        return t.ch.insert(table, rows, settings);
      },
    };
    const store = await openClickHouseAnalyticsStore({ ch, now: Date.now });
    const reference = createReferenceStore();
    try {
      const day = 20_454;
      const batch = (i: number) =>
        Array.from({ length: 5 }, (_, j): WriteEvent => {
          const key = (i + j) % 3 === 0 ? null : `key-${(i * 7 + j) % 11}`;
          return [day * 86_400_000 + i * 1000 + j, day, `/p${j}`, `/p${j}`, `v${i % 4}`, null, null, null, null, null, 'human', null, null, 1, key];
        });
      const projects = ['prj_one', 'prj_two'];
      const calls = Array.from({ length: 24 }, (_, i) => ({ projectId: projects[i % 2] as string, events: batch(i) }));
      // All at once: they queue behind one another's inserts and share them.
      const got = await Promise.all(calls.map((c) => store.append(c.projectId, 'import', packEvents(c.events))));
      const want: number[] = [];
      for (const c of calls) want.push(await reference.append(c.projectId, 'import', packEvents(c.events)));
      expect(got).toEqual(want);
      expect(inserts).toBeLessThan(calls.length);
      for (const projectId of projects) {
        const q = { projectId, walkId: 'w', fromDay: null, toDay: null, offset: 0, limit: 100 };
        expect(await store.views(q)).toEqual(await reference.views(q));
        expect(await store.visitors(q)).toEqual(await reference.visitors(q));
      }
    } finally {
      await store.close();
      await t.cleanup();
    }
  });
});

describe('ClickHouse store, keyed appends re-sent', () => {
  const day = 20_454;
  const batch = (n: number) =>
    packEvents(
      Array.from({ length: n }, (_, i): WriteEvent => {
        const path = `/p${i % 5}`;
        return [day * 86_400_000 + i, day, path, path, `v${i % 7}`, null, null, 'GET', 200, null, 'human', null, null, 1, i % 4 === 0 ? null : `line-${i}`];
      }),
    );
  const views = async (store: ReturnType<typeof createClickHouseAnalyticsStore>) =>
    (await store.views({ projectId: 'prj_k', walkId: String(Math.random()), fromDay: null, toDay: null, offset: 0, limit: 10 })).totals;

  it('by another process after its events were stored but not its keys: the events are not stored twice and the keys are filled', async () => {
    const t = openChdb();
    try {
      await migrateClickHouse(t.ch);
      // The failure between the events and the keys of one insert: the keys' view is not there for the first.
      await t.ch.command('DETACH TABLE dedup_keys_mv');
      const first = createClickHouseAnalyticsStore({ ch: t.ch, now: Date.now });
      expect(await first.append('prj_k', 'import', batch(40))).toBe(40);
      await t.ch.command('ATTACH TABLE dedup_keys_mv');
      expect((await t.ch.query<{ n: string }>('SELECT count() AS n FROM dedup_keys'))[0]?.n).toBe('0');
      // Another process (a new store: nothing in memory) sends the same events again.
      const second = createClickHouseAnalyticsStore({ ch: t.ch, now: () => Date.now() + 5000 });
      await second.append('prj_k', 'import', batch(40));
      expect(await views(second)).toEqual({ human: 40, ai: 0, total: 40 });
      expect((await t.ch.query<{ n: string }>('SELECT count() AS n FROM dedup_keys'))[0]?.n).toBe('30');
      // From now on the keys are found: a third sending writes only the 10 events without a key (they have no
      // identity: every store takes them again).
      expect(await second.append('prj_k', 'import', batch(40))).toBe(10);
      await second.close();
    } finally {
      await t.cleanup();
    }
  });

  it('by two processes at once: stored once', async () => {
    const t = openChdb();
    try {
      await migrateClickHouse(t.ch);
      const a = createClickHouseAnalyticsStore({ ch: t.ch, now: Date.now });
      const b = createClickHouseAnalyticsStore({ ch: t.ch, now: () => Date.now() + 7 });
      // Both look their keys up before either has inserted (the chdb session runs the calls in this order).
      await Promise.all([a.append('prj_k', 'import', batch(40)), b.append('prj_k', 'import', batch(40))]);
      expect(await views(a)).toEqual({ human: 40, ai: 0, total: 40 });
      await a.close();
      await b.close();
    } finally {
      await t.cleanup();
    }
  });
});

describe('ClickHouse store, migration 4 (user agents dictionary-encoded) over stored events', () => {
  it('converts the stored parts and every answer stays the same', async () => {
    const t = openChdb();
    try {
      expect(
        await migrateClickHouse(
          t.ch,
          CLICKHOUSE_MIGRATIONS.filter((m) => m.version < 4),
        ),
      ).toEqual([1, 2, 3]);
      const store = createClickHouseAnalyticsStore({ ch: t.ch, now: Date.now });
      const day = 20_454;
      const agents = [null, 'Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0', 'GPTBot/1.1', 'Mozilla/5.0 (compatible; Googlebot/2.1)'];
      const events = Array.from({ length: 400 }, (_, i): WriteEvent => {
        const cls = i % 4 === 2 ? 'ai' : i % 4 === 3 ? 'crawler' : 'human';
        const rule = cls === 'ai' ? 'GPTBot' : cls === 'crawler' ? 'Googlebot' : null;
        const path = `/p${i % 7}`;
        return [
          (day + (i % 9)) * 86_400_000 + i,
          day + (i % 9),
          path,
          path,
          `v${i % 23}`,
          agents[i % 4] ?? null,
          null,
          'GET',
          200,
          null,
          cls,
          null,
          rule,
          cls === 'crawler' ? 0 : 1,
          null,
        ];
      });
      await store.append('prj_m4', 'api', packEvents(events.slice(0, 200)));
      await store.append('prj_m4', 'api', packEvents(events.slice(200)));
      const answers = async () => {
        const q = { projectId: 'prj_m4', walkId: String(Math.random()), fromDay: null, toDay: null, offset: 0, limit: 100 };
        return [await store.visitors(q), await store.views(q), await store.agents('prj_m4', q), await store.series('prj_m4', { ...q, interval: 'day' })];
      };
      const before = await answers();
      expect(await migrateClickHouse(t.ch)).toEqual([4]);
      expect(await migrateClickHouse(t.ch)).toEqual([]);
      const [col] = await t.ch.query<{ type: string }>(
        "SELECT type FROM system.columns WHERE database = currentDatabase() AND table = 'events' AND name = 'user_agent'",
      );
      expect(col?.type).toBe('LowCardinality(Nullable(String))');
      const [left] = await t.ch.query<{ n: string }>(
        "SELECT count() AS n FROM system.mutations WHERE database = currentDatabase() AND table = 'events' AND NOT is_done",
      );
      expect(Number(left?.n)).toBe(0);
      expect(await answers()).toEqual(before);
      const [ua] = await t.ch.query<{ n: string }>("SELECT count() AS n FROM events WHERE user_agent = 'GPTBot/1.1'");
      expect(Number(ua?.n)).toBe(100);
      expect(await store.reclassify('prj_m4')).toMatchObject({ scanned: 400 });
      await store.close();
    } finally {
      await t.cleanup();
    }
  });
});

describe('ClickHouse store, server unreachable', () => {
  // A port nothing listens on (connection refused at once).
  const unreachable = () => createHttpExecutor({ url: 'http://127.0.0.1:9', database: 'inkwell', requestTimeoutMs: 5000 });

  it('fails the start with a message naming the server', async () => {
    await expect(openClickHouseAnalyticsStore({ ch: unreachable(), now: Date.now })).rejects.toThrow(
      /^ClickHouse at http:\/\/127\.0\.0\.1:9 is not reachable: /,
    );
  });

  it('reports itself unhealthy with the reason, and acknowledges no append', async () => {
    const store = createClickHouseAnalyticsStore({ ch: unreachable(), now: Date.now, insertRetries: 0 });
    const health = await store.health();
    expect(health.ok).toBe(false);
    expect(health.ok ? '' : health.reason).toMatch(/^ClickHouse at http:\/\/127\.0\.0\.1:9 is not reachable: /);
    const batch = packEvents([[Date.UTC(2026, 0, 1), 20454, '/a', '/a', 'v1', null, null, null, null, null, 'human', null, null, 1, 'key-1']]);
    await expect(store.append('prj_x', 'api', batch)).rejects.toThrow();
    await store.close();
  });
});
