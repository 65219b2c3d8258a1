// The ClickHouse analytics store (src/analytics/clickhouse/): the conformance suite (store-conformance.ts)
// through chdb against the reference store, and against the SQL store on SQLite (the same generated events
// appended to both, every answer equal); through a real server too when CLICKHOUSE_URL is set. Then what an
// unreachable server does: not ready, nothing acknowledged.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createClickHouseAnalyticsStore, openClickHouseAnalyticsStore } from '../../src/analytics/clickhouse/clickhouse-store.ts';
import { createHttpExecutor } from '../../src/analytics/clickhouse/http-executor.ts';
import { packEvents } from '../../src/analytics/ingest/write-batch.ts';
import { createSqlAnalyticsStore } from '../../src/analytics/store/sql-analytics-store.ts';
import { testConfig } from '../../src/config.ts';
import { createProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';
import { clickHouseServerOptions, openChdb, openServer, type TestClickHouse } from '../helpers/clickhouse.ts';
import { openTestDb } from '../helpers/db.ts';
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
