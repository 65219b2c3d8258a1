// The service with its analytics on ClickHouse, over HTTP: events sent, answered from ClickHouse (chdb) as from
// the SQL store; CLICKHOUSE_URL switching the store at start (an unreachable server fails the start, naming
// it); a server that goes away makes /readyz say so and ingest answer 503, acknowledging nothing.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClickHouseAnalyticsStore, openClickHouseAnalyticsStore } from '../../src/analytics/clickhouse/clickhouse-store.ts';
import { createHttpExecutor } from '../../src/analytics/clickhouse/http-executor.ts';
import { createAnalyticsService } from '../../src/analytics/service.ts';
import type { AnalyticsStore } from '../../src/analytics/store/analytics-store.ts';
import { loadConfig, testConfig } from '../../src/config.ts';
import { createContext, wireServices } from '../../src/context.ts';
import { buildApp } from '../../src/http/app.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { httpRequest } from '../helpers/app.ts';
import { openChdb, testNumbering } from '../helpers/clickhouse.ts';
import { openTestDb } from '../helpers/db.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The app on SQLite with its analytics store replaced by `store` (or the wired SQL store). */
async function serve(store?: AnalyticsStore) {
  const tdb = await openTestDb('sqlite');
  cleanups.push(() => tdb.cleanup());
  const config = testConfig({ dataDir: tdb.env.INKWELL_DATA_DIR as string });
  const ctx = createContext(config, tdb.db, createLogger(config));
  const services = await wireServices(ctx);
  if (store) {
    await services.analytics.close();
    services.analytics = createAnalyticsService({ store, projects: ctx.projects, now: ctx.now });
  }
  cleanups.push(() => services.analytics.close());
  const app = await buildApp(ctx, services);
  await app.listen({ host: '127.0.0.1', port: 0 });
  cleanups.push(() => app.close());
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const project = await ctx.projects.createProject({ name: 'Docs', repository: 'https://github.com/acme/docs' });
  const admin = (await ctx.projects.createKey({ projectId: project.id, kind: 'admin' })).key;
  const ingest = (await ctx.projects.createKey({ projectId: project.id, kind: 'ingest-secret' })).key;
  return { base, project, admin, ingest };
}

const EVENTS = [
  { path: '/a', timestamp: '2026-03-02T10:00:00Z', visitorId: 'v1' },
  { path: '/a', timestamp: '2026-03-02T11:00:00Z', visitorId: 'v2' },
  { path: '/b?x=1', timestamp: '2026-03-03T00:00:00Z', visitorId: 'v1' },
  { path: '/b', timestamp: '2026-03-03T01:00:00Z', visitorId: 'v3', userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' },
  { path: '/guide.md', timestamp: '2026-03-04T01:00:00Z', visitorId: 'v4', userAgent: 'curl/8.5.0', referrer: 'https://www.google.com/' },
];
const READS = [
  'visitors',
  'views',
  'visitors?dateFrom=2026-03-03&dateTo=2026-03-04',
  'visitors?limit=1',
  'series?interval=day',
  'series?interval=week&dateFrom=2026-03-01&dateTo=2026-03-10',
  'agents',
  'referrers',
];

describe('analytics on ClickHouse over HTTP', () => {
  it('answers every analytics read exactly as the SQL store does for the same events', async () => {
    const answers: Record<string, unknown>[] = [];
    for (const kind of ['sql', 'clickhouse'] as const) {
      let store: AnalyticsStore | undefined;
      if (kind === 'clickhouse') {
        const t = await openChdb();
        cleanups.push(() => t.cleanup());
        store = await openClickHouseAnalyticsStore({ ch: t.ch, numbering: t.numbering, now: Date.now });
      }
      const s = await serve(store);
      const sent = await httpRequest(s.base, 'POST', `/v1/analytics/${s.project.id}/events`, { key: s.ingest, body: { events: EVENTS } });
      expect(sent.status, JSON.stringify(sent.body)).toBe(202);
      const out: Record<string, unknown> = {};
      for (const r of READS) {
        const res = await httpRequest(s.base, 'GET', `/v1/analytics/${s.project.id}/${r}`, { key: s.admin });
        expect(res.status, r).toBe(200);
        out[r] = res.body;
      }
      answers.push(out);
    }
    expect(answers[1]).toEqual(answers[0]);
    expect((answers[1]?.visitors as { totals: unknown } | undefined)?.totals).toEqual({ human: 2, ai: 1, total: 3 });
  });

  it('an unreachable ClickHouse: /readyz 503 analytics_unavailable, ingest 503 and nothing acknowledged', async () => {
    const tdb = await openTestDb('sqlite');
    cleanups.push(() => tdb.cleanup());
    const store = createClickHouseAnalyticsStore({
      ch: createHttpExecutor({ url: 'http://127.0.0.1:9', database: 'inkwell', requestTimeoutMs: 5000 }),
      numbering: testNumbering(tdb.db),
      now: Date.now,
      insertRetries: 0,
    });
    const s = await serve(store);
    const ready = await httpRequest(s.base, 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('x-not-ready-cause')).toBe('analytics_unavailable');
    const sent = await httpRequest(s.base, 'POST', `/v1/analytics/${s.project.id}/events`, { key: s.ingest, body: { events: EVENTS } });
    expect(sent.status).toBe(503);
  });
});

describe('CLICKHOUSE_URL', () => {
  it('is read with its database, user and password; unset keeps analytics in the SQL database', () => {
    expect(loadConfig({}).clickhouse).toEqual({ url: undefined, database: 'inkwell', user: undefined, password: undefined });
    const c = loadConfig({
      CLICKHOUSE_URL: 'https://ch.example:8443/',
      CLICKHOUSE_DATABASE: 'docs_analytics',
      CLICKHOUSE_USER: 'ink',
      CLICKHOUSE_PASSWORD: 'pw',
    });
    expect(c.clickhouse).toEqual({ url: 'https://ch.example:8443', database: 'docs_analytics', user: 'ink', password: 'pw' });
    expect(() => loadConfig({ CLICKHOUSE_DATABASE: 'x; DROP' })).toThrow(/CLICKHOUSE_DATABASE must be letters, digits and _/);
    expect(() => loadConfig({ CLICKHOUSE_URL: 'ch.example' })).toThrow(/CLICKHOUSE_URL must be an absolute http/);
  });

  it('switches the analytics store at start: an unreachable server fails the start with a message naming it', async () => {
    const tdb = await openTestDb('sqlite');
    cleanups.push(() => tdb.cleanup());
    const config = testConfig({ dataDir: tdb.env.INKWELL_DATA_DIR as string }, { CLICKHOUSE_URL: 'http://127.0.0.1:9' });
    const ctx = createContext(config, tdb.db, createLogger(config));
    await expect(wireServices(ctx)).rejects.toThrow(/^ClickHouse at http:\/\/127\.0\.0\.1:9 is not reachable: /);
  });
});
