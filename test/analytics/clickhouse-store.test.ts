// The ClickHouse analytics store (src/analytics/clickhouse/): the conformance suite (store-conformance.ts)
// through chdb against the reference store, and against the SQL store on SQLite (the same generated events
// appended to both, every answer equal); through a real server too when CLICKHOUSE_URL is set. Then what an
// unreachable server does: not ready, nothing acknowledged.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createClickHouseAnalyticsStore, openClickHouseAnalyticsStore } from '../../src/analytics/clickhouse/clickhouse-store.ts';
import { createHttpExecutor } from '../../src/analytics/clickhouse/http-executor.ts';
import {
  CLICKHOUSE_MIGRATIONS,
  type ClickHouseMigration,
  EVENTS_COLUMNS,
  EVENTS_COLUMNS_5,
  migrateClickHouse,
} from '../../src/analytics/clickhouse/migrations.ts';
import type { VisitorNumbering } from '../../src/analytics/clickhouse/visitor-numbers.ts';
import { INTERVALS } from '../../src/analytics/export/series.ts';
import { type EventClass, packEvents, type WriteEvent } from '../../src/analytics/ingest/write-batch.ts';
import type { AnalyticsStore, SeriesResult } from '../../src/analytics/store/analytics-store.ts';
import { createSqlAnalyticsStore } from '../../src/analytics/store/sql-analytics-store.ts';
import { analyticsStore as sqlStore } from '../../src/analytics/store/store.ts';
import { testConfig } from '../../src/config.ts';
import { createProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';
import { clickHouseServerOptions, openChdb, openServer, type TestClickHouse, testNumbering } from '../helpers/clickhouse.ts';
import { DIALECTS, openTestDb } from '../helpers/db.ts';
import { createReferenceStore } from './reference-store.ts';
import { describeAnalyticsStoreConformance, type StoreUnderTest } from './store-conformance.ts';

/** Every table of a single node's database since migration 8: a migration's copy leaves nothing else behind. */
const TABLES_SINCE_8 = [
  'data_days',
  'data_days_mv',
  'dedup_keys',
  'dedup_keys_mv',
  'events',
  'schema_migrations',
  'visitor_days',
  'visitor_days_mv',
  'visitor_state_rebuilds',
  'visitor_states',
  'visitor_states_mv',
];

/** The tables of the test's database, by name. */
async function tableNames(t: TestClickHouse): Promise<string[]> {
  const rows = await t.ch.query<{ name: string }>('SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name');
  return rows.map((r) => r.name);
}

async function clickHouseStore(open: () => TestClickHouse | Promise<TestClickHouse>): Promise<StoreUnderTest> {
  const t = await open();
  const store = await openClickHouseAnalyticsStore({ ch: t.ch, numbering: t.numbering, now: Date.now });
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
    const t = await openChdb();
    let inserts = 0;
    const ch = {
      ...t.ch,
      insert(table: string, rows: readonly Record<string, unknown>[], settings?: Record<string, string | number>) {
        if (table === 'events') inserts++;
        return t.ch.insert(table, rows, settings);
      },
    };
    const store = await openClickHouseAnalyticsStore({ ch, numbering: t.numbering, now: Date.now });
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
    const t = await openChdb();
    try {
      await migrateClickHouse(t.ch, undefined, t);
      // The failure between the events and the keys of one insert: the keys' view is not there for the first.
      await t.ch.command('DETACH TABLE dedup_keys_mv');
      const first = createClickHouseAnalyticsStore({ ch: t.ch, numbering: t.numbering, now: Date.now });
      expect(await first.append('prj_k', 'import', batch(40))).toBe(40);
      await t.ch.command('ATTACH TABLE dedup_keys_mv');
      expect((await t.ch.query<{ n: string }>('SELECT count() AS n FROM dedup_keys'))[0]?.n).toBe('0');
      // Another process (a new store: nothing in memory) sends the same events again.
      const second = createClickHouseAnalyticsStore({ ch: t.ch, numbering: t.numbering, now: () => Date.now() + 5000 });
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
    const t = await openChdb();
    try {
      await migrateClickHouse(t.ch, undefined, t);
      const a = createClickHouseAnalyticsStore({ ch: t.ch, numbering: t.numbering, now: Date.now });
      const b = createClickHouseAnalyticsStore({ ch: t.ch, numbering: t.numbering, now: () => Date.now() + 7 });
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

/** Every read of a project, whole range. */
const answersOf = async (store: AnalyticsStore, projectId: string) => {
  const q = { projectId, walkId: String(Math.random()), fromDay: null, toDay: null, offset: 0, limit: 100 };
  return [
    await store.visitors(q),
    await store.views(q),
    await store.series(projectId, { ...q, interval: 'day' }),
    await store.agents(projectId, q),
    await store.referrers(projectId, q),
  ];
};

/** The numbering of a store before migration 5: every key stands for itself (`events.visitor` held the key). */
const keysAsBefore: VisitorNumbering = {
  numbers: async (_projectId, keys) => new Map([...keys].map((k) => [k, k as unknown as number])),
  clear() {},
};

describe('ClickHouse store, migrations 4 (user agents dictionary-encoded) and 5 (dense visitor numbers) over stored events', () => {
  const day = 20_454;
  const agents = [null, 'Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0', 'GPTBot/1.1', 'Mozilla/5.0 (compatible; Googlebot/2.1)'];
  const events = (n: number, visitors: number, offset = 0) =>
    Array.from({ length: n }, (_, j): WriteEvent => {
      const i = j + offset;
      const cls = i % 4 === 2 ? 'ai' : i % 4 === 3 ? 'crawler' : 'human';
      const rule = cls === 'ai' ? 'GPTBot' : cls === 'crawler' ? 'Googlebot' : null;
      const path = `/p${i % 7}`;
      return [
        (day + (i % 9)) * 86_400_000 + i,
        day + (i % 9),
        path,
        path,
        `v${i % visitors}`,
        agents[i % 4] ?? null,
        null,
        'GET',
        200,
        null,
        cls,
        null,
        rule,
        cls === 'crawler' ? 0 : 1,
        i % 5 === 0 ? `line-${i}` : null,
      ];
    });

  for (const dialect of DIALECTS)
    it(`converts the stored events (keys numbered through ${dialect}) and every answer stays the reference store's`, async () => {
      const t = await openChdb(dialect);
      const reference = createReferenceStore();
      try {
        expect(
          await migrateClickHouse(
            t.ch,
            CLICKHOUSE_MIGRATIONS.filter((m) => m.version < 4),
          ),
        ).toEqual([1, 2, 3]);
        const before = createClickHouseAnalyticsStore({ ch: t.ch, numbering: keysAsBefore, now: Date.now });
        for (const projectId of ['prj_m4', 'prj_m4b']) {
          await before.append(projectId, 'import', packEvents(events(200, 23)));
          await before.append(projectId, 'import', packEvents(events(200, 23, 200)));
          await reference.append(projectId, 'import', packEvents(events(200, 23)));
          await reference.append(projectId, 'import', packEvents(events(200, 23, 200)));
        }
        const [old] = await t.ch.query<{ type: string }>(
          "SELECT type FROM system.columns WHERE database = currentDatabase() AND table = 'events' AND name = 'visitor'",
        );
        expect(old?.type).toBe('String');
        expect(await migrateClickHouse(t.ch, undefined, t)).toEqual([4, 5, 6, 7, 8]);
        expect(await migrateClickHouse(t.ch, undefined, t)).toEqual([]);
        const cols = await t.ch.query<{ name: string; type: string }>(
          "SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = 'events' AND name IN ('user_agent', 'visitor') ORDER BY name",
        );
        expect(cols).toEqual([
          { name: 'user_agent', type: 'LowCardinality(Nullable(String))' },
          { name: 'visitor', type: 'UInt32' },
        ]);
        const [left] = await t.ch.query<{ n: string }>(
          "SELECT count() AS n FROM system.mutations WHERE database = currentDatabase() AND table = 'events' AND NOT is_done",
        );
        expect(Number(left?.n)).toBe(0);
        // Nothing left of the copy.
        expect(await tableNames(t)).toEqual(TABLES_SINCE_8);
        // 23 visitors per project, numbered 1..23 each (dense), every key once in the SQL dictionary.
        const [nums] = await t.ch.query<{ lo: number; hi: number; n: string }>(
          "SELECT min(visitor) AS lo, max(visitor) AS hi, uniqExact(visitor) AS n FROM events WHERE project = 'prj_m4'",
        );
        expect([Number(nums?.lo), Number(nums?.hi), Number(nums?.n)]).toEqual([1, 23, 23]);
        // The store after the upgrade: old visitors keep their numbers, new ones get the next; the same keyed
        // lines are still skipped (dedup_keys kept), and every answer is the reference store's.
        const store = createClickHouseAnalyticsStore({ ch: t.ch, numbering: t.otherNumbering(), now: Date.now });
        let kept = 0;
        for (const projectId of ['prj_m4', 'prj_m4b']) {
          kept = await store.append(projectId, 'import', packEvents(events(300, 40, 100)));
          expect(kept).toBe(await reference.append(projectId, 'import', packEvents(events(300, 40, 100))));
          const q = { projectId, walkId: String(Math.random()), fromDay: null, toDay: null, offset: 0, limit: 100 };
          expect(await store.visitors(q)).toEqual(await reference.visitors(q));
          expect(await store.views(q)).toEqual(await reference.views(q));
          expect(await store.agents(projectId, q)).toEqual(await reference.agents(projectId, q));
          expect(await store.referrers(projectId, q)).toEqual(await reference.referrers(projectId, q));
          expect(await store.series(projectId, { ...q, interval: 'day' })).toEqual(await reference.series(projectId, { ...q, interval: 'day' }));
        }
        const [after] = await t.ch.query<{ hi: number; n: string }>("SELECT max(visitor) AS hi, uniqExact(visitor) AS n FROM events WHERE project = 'prj_m4'");
        // Dense: the numbers 1..n, n the visitors of the events kept (the dictionary's size: only kept events' visitors are numbered).
        const dictionary = await sqlStore.selectVisitorsAfter(t.sql.db.kysely, (await sqlStore.selectProjectOrd(t.sql.db.kysely, 'prj_m4')) as number, 0);
        expect([Number(after?.hi), Number(after?.n)]).toEqual([dictionary.length, dictionary.length]);
        expect(dictionary.length).toBeGreaterThan(23);
        const [ua] = await t.ch.query<{ n: string }>("SELECT count() AS n FROM events WHERE user_agent = 'GPTBot/1.1' AND project = 'prj_m4'");
        expect(Number(ua?.n)).toBeGreaterThan(0);
        expect(await store.reclassify('prj_m4')).toEqual(await reference.reclassify('prj_m4'));
        expect(await store.reclassify('prj_m4')).toMatchObject({ scanned: 400 + kept });
        expect(await answersOf(store, 'prj_m4')).toEqual(await answersOf(reference, 'prj_m4'));
        await store.close();
      } finally {
        await t.cleanup();
      }
    });
});

describe('ClickHouse store, migration 6 (sorted by path, compressed, no insertion order) over stored events', () => {
  const day = 20_454;
  /** Events of a rule stored under two sets of rules (classes differ): inserted latest-first, so insertion order and time disagree. */
  const agentEvents = (): WriteEvent[] =>
    [
      [day + 2, 5, 'ai'],
      [day + 1, 7, 'ai'],
      [day + 1, 3, 'crawler'],
      [day + 3, 1, 'ai'],
    ].map(
      ([d, ms, cls], i): WriteEvent => [
        (d as number) * 86_400_000 + (ms as number),
        d as number,
        '/a',
        '/a',
        `v${i}`,
        'GPTBot/1.1',
        null,
        'GET',
        200,
        null,
        cls as EventClass,
        cls === 'crawler' ? 'training' : null,
        'GPTBot',
        cls === 'ai' ? 1 : 0,
        null,
      ],
    );
  const events = (n: number, offset = 0) =>
    Array.from({ length: n }, (_, j): WriteEvent => {
      const i = j + offset;
      const cls = i % 4 === 2 ? 'ai' : i % 4 === 3 ? 'crawler' : 'human';
      const path = `/p${i % 7}`;
      return [
        (day + (i % 9)) * 86_400_000 + i,
        day + (i % 9),
        path,
        path,
        `v${i % 31}`,
        null,
        null,
        'GET',
        200,
        i % 3 === 0 ? 'https://www.google.com/' : null,
        cls,
        null,
        cls === 'ai' ? 'GPTBot' : cls === 'crawler' ? 'Googlebot' : null,
        cls === 'crawler' ? 0 : 1,
        i % 5 === 0 ? `line-${i}` : null,
      ];
    });

  it("copies the stored events into the new layout without their insertion order; every answer stays the reference store's; an agent takes its earliest (day, ts) class", async () => {
    const t = await openChdb();
    const reference = createReferenceStore();
    try {
      expect(
        await migrateClickHouse(
          t.ch,
          CLICKHOUSE_MIGRATIONS.filter((m) => m.version < 6),
          t,
        ),
      ).toEqual([1, 2, 3, 4, 5]);
      const before = createClickHouseAnalyticsStore({ ch: t.ch, numbering: t.numbering, now: Date.now });
      for (const projectId of ['prj_m6', 'prj_m6b']) {
        expect(await before.append(projectId, 'import', packEvents(events(300)))).toBe(await reference.append(projectId, 'import', packEvents(events(300))));
      }
      // What the earlier version stored: an increasing insertion order.
      await t.ch.command('ALTER TABLE events UPDATE seq = 1764000000000000 + ts WHERE 1', {}, { mutations_sync: 2 });
      const column = async () =>
        (await t.ch.query<{ name: string }>("SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'events' AND name = 'seq'")).length;
      expect(await column()).toBe(1);
      expect(await migrateClickHouse(t.ch, undefined, t)).toEqual([6, 7, 8]);
      expect(await migrateClickHouse(t.ch, undefined, t)).toEqual([]);
      expect(await column()).toBe(0);
      const [table] = await t.ch.query<{ key: string }>("SELECT sorting_key AS key FROM system.tables WHERE database = currentDatabase() AND name = 'events'");
      expect(table?.key).toBe('project, path, day, visitor');
      // Nothing left of the copy; the views fill the new table's companions.
      expect(await tableNames(t)).toEqual(TABLES_SINCE_8);
      const [left] = await t.ch.query<{ n: string }>(
        "SELECT count() AS n FROM system.mutations WHERE database = currentDatabase() AND table = 'events' AND NOT is_done",
      );
      expect(Number(left?.n)).toBe(0);
      const store = createClickHouseAnalyticsStore({ ch: t.ch, numbering: t.numbering, now: Date.now });
      for (const projectId of ['prj_m6', 'prj_m6b']) {
        expect(await store.append(projectId, 'import', packEvents(events(200, 250)))).toBe(
          await reference.append(projectId, 'import', packEvents(events(200, 250))),
        );
        expect(await answersOf(store, projectId)).toEqual(await answersOf(reference, projectId));
      }
      expect(await store.reclassify('prj_m6')).toEqual(await reference.reclassify('prj_m6'));
      expect(await answersOf(store, 'prj_m6')).toEqual(await answersOf(reference, 'prj_m6'));
      // Classes of one rule that differ (stored under older rules): the earliest (day, ts) event's, as the embedded store
      // takes it (its segments are in time order), whatever the order of insertion.
      await store.append('prj_m6c', 'api', packEvents(agentEvents()));
      const q = { fromDay: null, toDay: null, offset: 0, limit: 10 };
      expect((await store.agents('prj_m6c', q)).rows.map((r) => [r.agent, r.class, r.requests])).toEqual([['GPTBot', 'crawler', 4]]);
      expect((await store.agents('prj_m6c', { ...q, fromDay: day + 2 })).rows.map((r) => [r.agent, r.class])).toEqual([['GPTBot', 'ai']]);
      expect((await store.agents('prj_m6c', { ...q, toDay: day + 2 })).rows.map((r) => [r.agent, r.class])).toEqual([['GPTBot', 'crawler']]);
      await before.close();
      await store.close();
    } finally {
      await t.cleanup();
    }
  });
});

describe('ClickHouse store, per-day visitor states (migration 7)', () => {
  const day = 20_454;
  const events = (n: number, offset = 0) =>
    Array.from({ length: n }, (_, j): WriteEvent => {
      const i = j + offset;
      const ua =
        i % 3 === 0
          ? 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot'
          : 'Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0';
      const path = `/p${i % 5}`;
      // Stored as a human (as older rules would have): reclassification makes ChatGPT-User's events AI views.
      return [(day + (i % 6)) * 86_400_000 + i, day + (i % 6), path, path, `v${i % 37}`, ua, null, 'GET', 200, null, 'human', null, null, 1, null];
    });
  const visitorsOf = (store: AnalyticsStore, projectId: string, fromDay: number | null = null) =>
    store.visitors({ projectId, walkId: String(Math.random()), fromDay, toDay: null, offset: 0, limit: 100 });

  it('are filled for stored events and by every insert; the export reads them, and the raw events while a rebuild is open', async () => {
    const t = await openChdb();
    const reference = createReferenceStore();
    try {
      expect(
        await migrateClickHouse(
          t.ch,
          CLICKHOUSE_MIGRATIONS.filter((m) => m.version < 7),
          t,
        ),
      ).toEqual([1, 2, 3, 4, 5, 6]);
      const store = createClickHouseAnalyticsStore({ ch: t.ch, numbering: t.numbering, now: Date.now });
      await store.append('prj_s', 'api', packEvents(events(200)));
      await reference.append('prj_s', 'api', packEvents(events(200)));
      expect(await migrateClickHouse(t.ch, undefined, t)).toEqual([7, 8]);
      await store.append('prj_s', 'api', packEvents(events(150, 170)));
      await reference.append('prj_s', 'api', packEvents(events(150, 170)));
      for (const from of [null, day + 2]) expect(await visitorsOf(store, 'prj_s', from)).toEqual(await visitorsOf(reference, 'prj_s', from));
      // The export reads the states: without them it finds no visitor…
      await t.ch.command('RENAME TABLE visitor_states TO visitor_states_aside');
      await t.ch.command('CREATE TABLE visitor_states AS visitor_states_aside');
      expect((await visitorsOf(store, 'prj_s')).totals).toEqual({ human: 0, ai: 0, total: 0 });
      // …and while a rebuild of the project is open, the raw events.
      await t.ch.insert('visitor_state_rebuilds', [{ project: 'prj_s', id: 'crashed', done: 0 }]);
      expect(await visitorsOf(store, 'prj_s')).toEqual(await visitorsOf(reference, 'prj_s'));
      await t.ch.command('DROP TABLE visitor_states');
      await t.ch.command('RENAME TABLE visitor_states_aside TO visitor_states');
      // Reclassification rebuilds the project's states and closes every open rebuild (the crashed one too).
      expect(await store.reclassify('prj_s')).toEqual(await reference.reclassify('prj_s'));
      const open = await t.ch.query('SELECT id FROM visitor_state_rebuilds GROUP BY id HAVING max(done) = 0');
      expect(open).toEqual([]);
      for (const from of [null, day + 2]) expect(await visitorsOf(store, 'prj_s', from)).toEqual(await visitorsOf(reference, 'prj_s', from));
      expect((await visitorsOf(store, 'prj_s')).totals.ai).toBeGreaterThan(0);
      const [n] = await t.ch.query<{ n: string }>("SELECT count() AS n FROM visitor_states WHERE project = 'prj_s'");
      expect(Number(n?.n)).toBeGreaterThan(0);
      await store.close();
    } finally {
      await t.cleanup();
    }
  });
});

describe('ClickHouse store, per-day visitor states without paths (migration 8)', () => {
  const day = 20_454;
  const ua = (i: number) =>
    i % 3 === 0
      ? 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot'
      : i % 7 === 0
        ? 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'
        : 'Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0';
  // Stored as people's (as older rules would have): reclassification makes ChatGPT-User's AI views and Googlebot's
  // crawler requests, which leave the human sets.
  const events = (n: number, offset = 0) =>
    Array.from({ length: n }, (_, j): WriteEvent => {
      const i = j + offset;
      const d = day + (i % 20);
      const visitor = `${i % 3 === 0 ? 'c' : i % 7 === 0 ? 'g' : 'f'}${i % 13}`; // one kind of user agent each
      return [d * 86_400_000 + i, d, `/p${i % 5}`, `/p${i % 5}`, visitor, ua(i), null, 'GET', 200, null, 'human', null, null, 1, null];
    });
  const seriesOf = async (store: AnalyticsStore, fromDay: number | null = null) => {
    const out: unknown[] = [];
    for (const interval of INTERVALS) out.push(await store.series('prj_d', { fromDay, toDay: null, interval }));
    return out;
  };

  it('are filled for stored events and by every insert; the series reads them, and the raw events while a rebuild is open', async () => {
    const t = await openChdb();
    const reference = createReferenceStore();
    try {
      expect(
        await migrateClickHouse(
          t.ch,
          CLICKHOUSE_MIGRATIONS.filter((m) => m.version < 8),
          t,
        ),
      ).toEqual([1, 2, 3, 4, 5, 6, 7]);
      const store = createClickHouseAnalyticsStore({ ch: t.ch, numbering: t.numbering, now: Date.now });
      for (const s of [store, reference]) await s.append('prj_d', 'api', packEvents(events(300)));
      expect(await migrateClickHouse(t.ch, undefined, t)).toEqual([8]);
      for (const s of [store, reference]) await s.append('prj_d', 'api', packEvents(events(200, 250)));
      for (const from of [null, day + 7]) expect(await seriesOf(store, from)).toEqual(await seriesOf(reference, from));
      // The series reads the states: without them it finds no visitor (the crawler requests come from the raw rows)…
      await t.ch.command('RENAME TABLE visitor_days TO visitor_days_aside');
      await t.ch.command('CREATE TABLE visitor_days AS visitor_days_aside');
      const [empty] = (await seriesOf(store)) as SeriesResult[];
      expect(empty?.totals).toMatchObject({ human: 0, ai: 0, total: 0 });
      // …and while a rebuild of the project is open, the raw events.
      await t.ch.insert('visitor_state_rebuilds', [{ project: 'prj_d', id: 'crashed', done: 0 }]);
      expect(await seriesOf(store)).toEqual(await seriesOf(reference));
      await t.ch.command('DROP TABLE visitor_days');
      await t.ch.command('RENAME TABLE visitor_days_aside TO visitor_days');
      // Reclassification rebuilds the project's per-day states (people become AI visitors and crawlers).
      const before = (await seriesOf(store)) as SeriesResult[];
      expect(await store.reclassify('prj_d')).toEqual(await reference.reclassify('prj_d'));
      expect(await t.ch.query('SELECT id FROM visitor_state_rebuilds GROUP BY id HAVING max(done) = 0')).toEqual([]);
      for (const from of [null, day + 7]) expect(await seriesOf(store, from)).toEqual(await seriesOf(reference, from));
      const after = (await seriesOf(store)) as SeriesResult[];
      expect(after[0]?.totals.human).toBeLessThan(before[0]?.totals.human as number);
      expect(after[0]?.totals.crawlerRequests).toBeGreaterThan(0);
      await store.close();
    } finally {
      await t.cleanup();
    }
  });
});

describe('ClickHouse store, migration 5 on a cluster', () => {
  // A cluster's `events` is a Distributed table over `events_local`; chdb has none, so a Merge table stands in.
  const migration5 = CLICKHOUSE_MIGRATIONS.find((m) => m.version === 5) as ClickHouseMigration;
  const cluster = async (t: TestClickHouse, columns: string) => {
    await t.ch.command(`CREATE TABLE events_local (${columns}) ENGINE = MergeTree ORDER BY (project, day, path, visitor)`);
    await t.ch.command(`CREATE TABLE events AS events_local ENGINE = Merge(currentDatabase(), '^events_local$')`);
    await t.ch.command('CREATE TABLE data_days (project LowCardinality(String), day Int32) ENGINE = ReplacingMergeTree ORDER BY (project, day)');
    await t.ch.command('CREATE TABLE dedup_keys (project LowCardinality(String), key String) ENGINE = ReplacingMergeTree ORDER BY (project, key)');
  };

  it('refuses (naming the table engine and where to read on) when the events still hold keys', async () => {
    const t = await openChdb();
    try {
      await cluster(t, EVENTS_COLUMNS);
      await expect(migration5.run?.(t.ch, t)).rejects.toThrow(/converts a single node's events only; this events table is Merge: see docs\/scaling\.md/);
    } finally {
      await t.cleanup();
    }
  });

  it('only records itself on a cluster made by clusteredDdl (numbers already there)', async () => {
    const t = await openChdb();
    try {
      await cluster(t, EVENTS_COLUMNS_5);
      await migration5.run?.(t.ch, t);
      const tables = (await t.ch.query<{ name: string }>("SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE '%v5%'")).map(
        (r) => r.name,
      );
      expect(tables).toEqual([]);
      const [col] = await t.ch.query<{ type: string }>(
        "SELECT type FROM system.columns WHERE database = currentDatabase() AND table = 'events_local' AND name = 'visitor'",
      );
      expect(col?.type).toBe('UInt32');
    } finally {
      await t.cleanup();
    }
  });
});

describe('ClickHouse store, dense visitor numbers from the SQL database', () => {
  const day = 20_454;
  /** `n` human views of visitors `v<from>`…, two per visitor, over 3 days and 4 paths. */
  const views = (from: number, n: number) =>
    Array.from({ length: n }, (_, i): WriteEvent => {
      const d = day + (i % 3);
      const path = `/p${i % 4}`;
      return [
        d * 86_400_000 + i,
        d,
        path,
        path,
        `v${from + (i >> 1)}`,
        null,
        null,
        'GET',
        200,
        null,
        i % 5 === 0 ? 'ai' : 'human',
        null,
        i % 5 === 0 ? 'GPTBot' : null,
        1,
        null,
      ];
    });
  const ordOf = async (t: TestClickHouse, projectId: string) => (await sqlStore.selectProjectOrd(t.sql.db.kysely, projectId)) as number;
  for (const dialect of DIALECTS) {
    it(`two processes (stores on the same ${dialect} database and the same ClickHouse) number overlapping visitors alike: exact answers`, async () => {
      const t = await openChdb(dialect);
      await migrateClickHouse(t.ch, undefined, t);
      const a = createClickHouseAnalyticsStore({ ch: t.ch, numbering: t.numbering, now: Date.now });
      const b = createClickHouseAnalyticsStore({ ch: t.ch, numbering: t.otherNumbering(), now: () => Date.now() + 7 });
      const reference = createReferenceStore();
      try {
        // Batches of both processes at once, each overlapping the other's visitors (v0…v199, shifted by 25).
        const batches = Array.from({ length: 16 }, (_, i) => views(i * 25 - (i % 2) * 10, 60));
        const got = await Promise.all(batches.map((events, i) => (i % 2 === 0 ? a : b).append('prj_n', 'api', packEvents(events))));
        for (const events of batches) await reference.append('prj_n', 'api', packEvents(events));
        expect(got.reduce((x, y) => x + y, 0)).toBe(16 * 60);
        // Every key once in the SQL dictionary; the numbers ClickHouse holds are exactly the dictionary's.
        const dictionary = await sqlStore.selectVisitorsAfter(t.sql.db.kysely, await ordOf(t, 'prj_n'), 0);
        const keys = new Set(dictionary.map((v) => v.visitor_key));
        expect(keys.size).toBe(dictionary.length);
        const stored = (await t.ch.query<{ v: number }>("SELECT DISTINCT visitor AS v FROM events WHERE project = 'prj_n' ORDER BY v")).map((r) => Number(r.v));
        expect(stored).toEqual(dictionary.map((v) => v.ord).sort((x, y) => x - y));
        expect(keys).toEqual(new Set(batches.flat().map((e) => e[4])));
        expect(await answersOf(a, 'prj_n')).toEqual(await answersOf(reference, 'prj_n'));
        expect(await answersOf(b, 'prj_n')).toEqual(await answersOf(reference, 'prj_n'));
      } finally {
        await a.close();
        await b.close();
        await t.cleanup();
      }
    });

    it(`a failure between numbering and insert (${dialect}): the retry, by another process, gets the same numbers and the same token`, async () => {
      const t = await openChdb(dialect);
      await migrateClickHouse(t.ch, undefined, t);
      const tokens: string[] = [];
      let fail = true;
      const failing = {
        ...t.ch,
        insert(table: string, rows: readonly Record<string, unknown>[], settings?: Record<string, string | number>) {
          if (table === 'events') tokens.push(String(settings?.insert_deduplication_token));
          if (table === 'events' && fail) return Promise.reject(new Error('connection reset (simulated)'));
          return t.ch.insert(table, rows, settings);
        },
      };
      const first = createClickHouseAnalyticsStore({ ch: failing, numbering: t.numbering, now: Date.now, insertRetries: 0 });
      const reference = createReferenceStore();
      try {
        const keyed = packEvents(views(0, 40).map((e, i): WriteEvent => [...e.slice(0, 14), `line-${i}`] as WriteEvent));
        await expect(first.append('prj_r', 'import', keyed)).rejects.toThrow(/simulated/);
        // Numbered in SQL, nothing in ClickHouse.
        const ord = await ordOf(t, 'prj_r');
        expect((await sqlStore.selectVisitorsAfter(t.sql.db.kysely, ord, 0)).length).toBe(20);
        expect((await t.ch.query<{ n: string }>('SELECT count() AS n FROM events'))[0]?.n).toBe('0');
        // Another process (nothing in memory) sends the same batch: the same numbers, hence the same content token.
        fail = false;
        const second = createClickHouseAnalyticsStore({ ch: failing, numbering: t.otherNumbering(), now: () => Date.now() + 5000 });
        expect(await second.append('prj_r', 'import', keyed)).toBe(40);
        expect(tokens[1]).toBe(tokens[0]);
        // A new visitor after the gap-free retry: number 21; the first process, caught up, agrees.
        expect(await first.append('prj_r', 'api', packEvents(views(15, 12)))).toBe(12);
        await reference.append('prj_r', 'import', keyed);
        await reference.append('prj_r', 'api', packEvents(views(15, 12)));
        const dictionary = await sqlStore.selectVisitorsAfter(t.sql.db.kysely, ord, 0);
        expect(dictionary.map((v) => v.ord)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
        expect(await answersOf(second, 'prj_r')).toEqual(await answersOf(reference, 'prj_r'));
        // The same keyed batch once more: every line known, nothing stored.
        expect(await second.append('prj_r', 'import', keyed)).toBe(0);
        await second.close();
      } finally {
        await first.close();
        await t.cleanup();
      }
    });
  }
});

describe('ClickHouse store, server unreachable', () => {
  // A port nothing listens on (connection refused at once).
  const unusedNumbering = {
    numbers: () => Promise.reject(new Error('not reached')),
    clear() {},
  };
  const unreachable = () => createHttpExecutor({ url: 'http://127.0.0.1:9', database: 'inkwell', requestTimeoutMs: 5000 });

  it('fails the start with a message naming the server', async () => {
    await expect(openClickHouseAnalyticsStore({ ch: unreachable(), numbering: unusedNumbering, now: Date.now })).rejects.toThrow(
      /^ClickHouse at http:\/\/127\.0\.0\.1:9 is not reachable: /,
    );
  });

  it('reports itself unhealthy with the reason, and acknowledges no append', async () => {
    const sql = await openTestDb('sqlite');
    const store = createClickHouseAnalyticsStore({ ch: unreachable(), numbering: testNumbering(sql.db), now: Date.now, insertRetries: 0 });
    const health = await store.health();
    expect(health.ok).toBe(false);
    expect(health.ok ? '' : health.reason).toMatch(/^ClickHouse at http:\/\/127\.0\.0\.1:9 is not reachable: /);
    const batch = packEvents([[Date.UTC(2026, 0, 1), 20454, '/a', '/a', 'v1', null, null, null, null, null, 'human', null, null, 1, 'key-1']]);
    await expect(store.append('prj_x', 'api', batch)).rejects.toThrow();
    await store.close();
    await sql.cleanup();
  });
});
