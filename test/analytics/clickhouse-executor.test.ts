// The ClickHouse executors (src/analytics/clickhouse/executor.ts): chdb really loaded (npm skips an optional
// dependency it cannot install without a word, so on CI its absence fails here rather than skipping), the same
// SQL text and parameters answered alike through chdb and — when CLICKHOUSE_URL is set — a real server,
// idempotent numbered migrations, insert dedup tokens, and the start-up check of the server's version.
import { describe, expect, it } from 'vitest';
import { loadChdb } from '../../src/analytics/clickhouse/chdb-executor.ts';
import { createClickHouseAnalyticsStore } from '../../src/analytics/clickhouse/clickhouse-store.ts';
import type { ClickHouseExecutor } from '../../src/analytics/clickhouse/executor.ts';
import { CLICKHOUSE_MIGRATIONS, clickHouseMigrationsApplied, migrateClickHouse } from '../../src/analytics/clickhouse/migrations.ts';
import { checkClickHouseServer, MIN_CLICKHOUSE_VERSION } from '../../src/analytics/clickhouse/server-check.ts';
import { packEvents, type WriteEvent } from '../../src/analytics/ingest/write-batch.ts';
import { clickHouseServerOptions, openChdb, openServer, type TestClickHouse } from '../helpers/clickhouse.ts';

let chdbError: Error | null = null;
try {
  loadChdb();
} catch (err) {
  chdbError = err as Error;
}

describe('chdb', () => {
  // Locally a missing chdb skips the chdb tests with a reason; on CI (CI set) it fails.
  it.skipIf(chdbError !== null && !process.env.CI)('is installed and its native library loads (ClickHouse 26.x in this process)', () => {
    if (chdbError) throw new Error(`chdb did not load (npm ci skipped its optional native package?): ${chdbError.message}`);
    const v = loadChdb().version();
    expect(v.chdb).toMatch(/^3\.4\./);
    expect(v.libchdb).toMatch(/26\.\d+/);
  });
});

const ENGINES: [string, () => TestClickHouse | Promise<TestClickHouse>][] = [];
if (chdbError === null || process.env.CI) ENGINES.push(['chdb', openChdb]);
if (clickHouseServerOptions()) ENGINES.push(['server', openServer]);

for (const [engine, open] of ENGINES) {
  describe(`ClickHouse executor [${engine}]`, () => {
    async function withDb<T>(f: (ch: ClickHouseExecutor, t: TestClickHouse) => Promise<T>): Promise<T> {
      const t = await open();
      try {
        return await f(t.ch, t);
      } finally {
        await t.cleanup();
      }
    }

    it('binds parameters as values, never as SQL: quotes, backslashes, newlines, NUL-free Unicode, arrays, nulls', async () => {
      await withDb(async (ch) => {
        const hostile = ["it's", 'back\\slash', 'new\nline\ttab', "'); DROP TABLE x; --", 'é😀{x:String}'];
        const [row] = await ch.query<{ a: string; arr: string[]; n: null; big: string }>(
          'SELECT {a:String} AS a, {arr:Array(String)} AS arr, {n:Nullable(Int32)} AS n, toUInt64(18446744073709551615) AS big',
          { a: hostile[3], arr: hostile, n: null },
        );
        expect(row).toEqual({ a: hostile[3], arr: hostile, n: null, big: '18446744073709551615' });
      });
    });

    it('inserts rows and reads them back; an insert retried with the same dedup token adds nothing', async () => {
      await withDb(async (ch) => {
        await ch.command('CREATE TABLE t (k String, v Nullable(Int32)) ENGINE = MergeTree ORDER BY k SETTINGS non_replicated_deduplication_window = 100');
        const rows = [
          { k: 'a', v: 1 },
          { k: "b'\n", v: null },
        ];
        await ch.insert('t', rows, { insert_deduplication_token: 'tok-1' });
        await ch.insert('t', rows, { insert_deduplication_token: 'tok-1' });
        expect(await ch.query('SELECT k, v FROM t ORDER BY k')).toEqual(rows);
        await ch.insert('t', rows, { insert_deduplication_token: 'tok-2' });
        expect(await ch.query<{ n: string }>('SELECT count() AS n FROM t')).toEqual([{ n: '4' }]);
        await expect(ch.query('SELECT nope FROM t')).rejects.toThrow(/nope/);
      });
    });

    it('applies the numbered migrations once: a second start applies none', async () => {
      await withDb(async (ch, t) => {
        expect(await migrateClickHouse(ch, undefined, t)).toEqual(CLICKHOUSE_MIGRATIONS.map((m) => m.version));
        expect(await migrateClickHouse(ch, undefined, t)).toEqual([]);
        expect(await clickHouseMigrationsApplied(ch)).toBe(true);
        const tables = (await ch.query<{ name: string }>('SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name')).map((r) => r.name);
        expect(tables).toEqual(expect.arrayContaining(['data_days', 'data_days_mv', 'dedup_keys', 'dedup_keys_mv', 'events', 'schema_migrations']));
        const codecs = await ch.query<{ name: string; c: string }>(
          "SELECT name, type, compression_codec AS c FROM system.columns WHERE database = currentDatabase() AND table = 'events' AND name IN ('ts', 'seq', 'user_agent', 'visitor') ORDER BY name",
        );
        // No insertion order since migration 6.
        expect(codecs.map((r) => [r.name, r.c])).toEqual([
          ['ts', 'CODEC(T64, ZSTD(3))'],
          ['user_agent', 'CODEC(ZSTD(3))'],
          ['visitor', 'CODEC(T64, ZSTD(3))'],
        ]);
        expect((codecs as { name: string; type?: string }[]).find((r) => r.name === 'visitor')?.type).toBe('UInt32');
        // The views that fill data_days and dedup_keys read the new table.
        await ch.insert('events', [{ project: 'prj_a', day: 20_454, path: '/a', visitor: 1, cls: 'human', qualifying: 1, dedup_key: 'k' }]);
        expect(await ch.query('SELECT project, day FROM data_days')).toEqual([{ project: 'prj_a', day: 20_454 }]);
        expect(await ch.query('SELECT key FROM dedup_keys')).toEqual([{ key: 'k' }]);
      });
    });

    it('migration 2 backfills the dedup keys of events stored before it: a re-sent key is still skipped', async () => {
      await withDb(async (ch, t) => {
        expect(await migrateClickHouse(ch, CLICKHOUSE_MIGRATIONS.slice(0, 1))).toEqual([1]);
        await ch.insert('events', [
          { project: 'prj_a', day: 20_454, path: '/a', visitor: 'v1', cls: 'human', qualifying: 1, dedup_key: 'line-1' },
          { project: 'prj_a', day: 20_454, path: '/a', visitor: 'v2', cls: 'human', qualifying: 1, dedup_key: null },
        ]);
        expect(await migrateClickHouse(ch, undefined, t)).toEqual([2, 3, 4, 5, 6, 7, 8]);
        expect(await ch.query('SELECT project, key FROM dedup_keys')).toEqual([{ project: 'prj_a', key: 'line-1' }]);
        const store = createClickHouseAnalyticsStore({ ch, numbering: t.numbering, now: Date.now });
        const event = (key: string): WriteEvent => [20_454 * 86_400_000, 20_454, '/b', '/b', 'v3', null, null, null, null, null, 'human', null, null, 1, key];
        expect(await store.append('prj_a', 'import', packEvents([event('line-1'), event('line-2')]))).toBe(1);
        expect((await ch.query('SELECT key FROM dedup_keys ORDER BY key')).map((r) => r.key)).toEqual(['line-1', 'line-2']);
      });
    });

    it('passes the start-up check (version and functions); names the minimum version when the server is older', async () => {
      await withDb(async (ch) => {
        expect(await checkClickHouseServer(ch)).toMatch(/^\d+\.\d+/);
        await expect(checkClickHouseServer(ch, '999.1')).rejects.toThrow(/is version \d+\.[\d.]+; Inkwell's analytics need ClickHouse 999\.1 or newer/);
      });
    });
  });
}

describe('ClickHouse migrations and start-up check (pure)', () => {
  it('migrations are numbered 1, 2, … without gaps, each with statements or a step', () => {
    expect(CLICKHOUSE_MIGRATIONS.map((m) => m.version)).toEqual(CLICKHOUSE_MIGRATIONS.map((_, i) => i + 1));
    for (const m of CLICKHOUSE_MIGRATIONS) expect(m.statements.length + (m.run ? 1 : 0)).toBeGreaterThan(0);
  });

  it('a server lacking a function fails with the minimum version and what is missing', async () => {
    const fake = {
      describe: 'http://ch.example:8123',
      database: 'inkwell',
      async query(sql: string) {
        if (sql.includes('version()')) return [{ v: '99.3.1.1' }];
        if (sql.includes('combinators')) return [{ name: 'If' }];
        return [{ name: 'uniqExact' }];
      },
      async command() {},
      async insert() {},
      async close() {},
    } as unknown as ClickHouseExecutor;
    await expect(checkClickHouseServer(fake)).rejects.toThrow(
      new RegExp(
        `ClickHouse at http://ch\\.example:8123 is version 99\\.3\\.1\\.1; Inkwell's analytics need ClickHouse ${MIN_CLICKHOUSE_VERSION} or newer \\(missing: .*joinGet`,
      ),
    );
  });
});
