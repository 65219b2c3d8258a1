// Operational endpoints over real HTTP on both dialects: health, readiness, metrics, OpenAPI, docs.
import type { AddressInfo } from 'node:net';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { testConfig } from '../../src/config.ts';
import { createContext, wireServices } from '../../src/context.ts';
import { buildApp, routeTable } from '../../src/http/app.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { sendEvents } from '../analytics/api.ts';
import { DAY_MS, generate, START_MS } from '../analytics/dataset.ts';
import { httpRequest, type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';

describeEachDialect('ops endpoints', (dialect) => {
  let t: TestApp;
  let s: Seeded;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    s = await t.seed();
  });
  afterAll(async () => t?.close());

  it('/healthz → 200 {status: ok}', async () => {
    const r = await t.request('GET', '/healthz');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok' });
    expect(r.headers.get('x-request-id')).toBeTruthy();
  });

  it('/readyz → 200 when the database is reachable and migrated', async () => {
    const r = await t.request('GET', '/readyz');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ready' });
  });

  it('/metrics → Prometheus text with the HTTP duration histogram by route pattern and status', async () => {
    await t.request('GET', `/v1/projects/${s.project.id}`, { key: s.adminKey });
    await t.request('GET', '/v1/projects/prj_x', { key: 'bad' });
    await t.request('GET', '/no/such/path');
    const r = await t.request('GET', '/metrics');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(r.text).toContain('# TYPE inkwell_http_request_duration_seconds histogram');
    expect(r.text).toMatch(/inkwell_http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/v1\/projects\/:projectId",status="200"\} \d+/);
    expect(r.text).toMatch(/inkwell_http_request_duration_seconds_count\{method="GET",route="\/v1\/projects\/:projectId",status="401"\} 1/);
    // Unmatched paths share one label value (no label per random URL).
    expect(r.text).toMatch(/route="unmatched",status="404"/);
    expect(r.text).not.toContain('/no/such/path');
    expect(r.text).toContain('process_cpu_user_seconds_total');
    expect(r.text).not.toContain(s.adminKey);
  });

  it("/metrics → the analytics store's counters: where the day summaries of reads came from", async () => {
    const counts = async () => {
      const text = (await t.request('GET', '/metrics')).text;
      const at = (source: string) => Number(new RegExp(`^inkwell_analytics_summary_days_total\\{source="${source}"\\} (\\d+)$`, 'm').exec(text)?.[1]);
      expect(text).toContain('# TYPE inkwell_analytics_summary_days_total counter');
      expect(text).toMatch(/^inkwell_analytics_summaries_sealed_total \d+$/m);
      expect(text).toMatch(/^inkwell_analytics_segments_compacted_total \d+$/m);
      return { memory: at('memory'), blob: at('blob'), extended: at('extended'), rebuilt: at('rebuilt') };
    };
    const p = await t.seed({ name: 'Metrics' });
    const data = generate({ seed: 7, events: 300, days: 3 });
    await sendEvents(
      t,
      p.ingestSecretKey,
      p.project.id,
      data.map((d) => d.wire),
    );
    const window = `dateFrom=${new Date(START_MS).toISOString().slice(0, 10)}&dateTo=${new Date(START_MS + 3 * DAY_MS).toISOString().slice(0, 10)}`;
    const before = await counts();
    for (const v of Object.values(before)) expect(Number.isInteger(v)).toBe(true);
    expect((await t.request('GET', `/v1/analytics/${p.project.id}/visitors?${window}`, { key: p.adminKey })).status).toBe(200);
    const first = await counts();
    // The window's 3 days, each from somewhere (nothing was in memory: rebuilt from its segments or its blob).
    const used = (c: typeof first) => c.memory + c.blob + c.extended + c.rebuilt;
    expect(used(first) - used(before)).toBe(3);
    expect(first.memory).toBe(before.memory);
    // Another window (an answer already computed may be kept whole) over 2 of those days, unchanged since: from memory.
    const two = `dateFrom=${new Date(START_MS).toISOString().slice(0, 10)}&dateTo=${new Date(START_MS + 2 * DAY_MS).toISOString().slice(0, 10)}`;
    expect((await t.request('GET', `/v1/analytics/${p.project.id}/visitors?${two}`, { key: p.adminKey })).status).toBe(200);
    const second = await counts();
    expect(second.memory - first.memory).toBe(2);
    expect(used(second) - used(first)).toBe(2);
  });

  it("/metrics → the ingest writer's group commits: groups, their events, transaction and WAL-sync times", async () => {
    const read = async () => {
      const text = (await t.request('GET', '/metrics')).text;
      const num = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
      return {
        text,
        groups: num('inkwell_analytics_ingest_groups_total'),
        events: num('inkwell_analytics_ingest_group_events_total'),
        transactions: num('inkwell_analytics_ingest_transaction_seconds_count'),
        syncs: num('inkwell_analytics_ingest_sync_seconds_count'),
      };
    };
    const p = await t.seed({ name: 'Writer metrics' });
    const before = await read();
    expect(before.text).toContain('# TYPE inkwell_analytics_ingest_groups_total counter');
    expect(before.text).toContain('# TYPE inkwell_analytics_ingest_transaction_seconds histogram');
    const data = generate({ seed: 11, events: 120, days: 2 });
    await sendEvents(
      t,
      p.ingestSecretKey,
      p.project.id,
      data.map((d) => d.wire),
      40,
    );
    // SQLite's worker thread syncs the WAL after COMMIT, a wait per group; PostgreSQL's COMMIT syncs itself.
    const syncsPerGroup = dialect === 'sqlite' ? 1 : 0;
    // The counts come with the writer's replies: each 202 was sent after its group was counted.
    const after = await read();
    expect(after.events - before.events).toBe(120);
    const groups = after.groups - before.groups;
    // Three requests, each answered before the next was sent: three groups.
    expect(groups).toBe(3);
    expect(after.transactions - before.transactions).toBe(groups);
    expect(after.syncs - before.syncs).toBe(groups * syncsPerGroup);
    expect(after.text).toMatch(/^inkwell_analytics_ingest_transaction_seconds_bucket\{le="\+Inf"\} \d+$/m);
    expect(Number(/^inkwell_analytics_ingest_transaction_seconds_sum (\S+)$/m.exec(after.text)?.[1])).toBeGreaterThan(0);
  });

  it('/openapi.json is a valid OpenAPI 3.1 document listing every registered route', async () => {
    const r = await t.request('GET', '/openapi.json');
    expect(r.status).toBe(200);
    const doc = r.body;
    expect(doc.openapi).toBe('3.1.0');
    const validator = new Validator();
    const res = await validator.validate(structuredClone(doc));
    expect(res.errors ?? []).toEqual([]);
    expect(res.valid).toBe(true);
    const documented = new Set<string>();
    for (const [path, item] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const method of Object.keys(item)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    const registered = routeTable(t.app)
      .filter((x) => !x.hidden && x.method !== 'HEAD' && x.method !== 'OPTIONS')
      .map((x) => `${x.method} ${x.url.replace(/:(\w+)/g, '{$1}')}`);
    expect(registered.length).toBeGreaterThan(3);
    for (const route of registered) expect(documented, route).toContain(route);
    for (const route of ['GET /healthz', 'GET /readyz', 'GET /metrics', 'GET /openapi.json', 'GET /v1/projects/{projectId}']) {
      expect(documented).toContain(route);
    }
    const project = doc.paths['/v1/projects/{projectId}'].get;
    expect(project.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(project.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '404']));
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    // Parameters with defaults are optional in the document as on the wire (requests without them succeed).
    const param = (path: string, name: string) => doc.paths[path].get.parameters.find((p: { name: string }) => p.name === name);
    expect(param('/v2/agent/{projectId}/jobs', 'limit')).toMatchObject({ in: 'query', required: false });
    expect(param('/v2/agent/{projectId}/job/{id}/events', 'after')).toMatchObject({ in: 'query', required: false });
    // Every request body comes with an example.
    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const media = op.requestBody?.content?.['application/json'];
        if (media)
          expect(
            Object.keys(media.examples ?? {}).length + (media.example ? 1 : 0) + (media.schema?.examples?.length ?? 0),
            `${method} ${path}`,
          ).toBeGreaterThan(0);
      }
    }
    // Rate-limit, idempotency and Retry-After headers are documented where they are sent.
    const create = doc.paths['/v2/agent/{projectId}/job'].post;
    expect(Object.keys(create.responses['201'].headers)).toEqual(
      expect.arrayContaining(['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'idempotent-replayed']),
    );
    expect(Object.keys(create.responses['429'].headers)).toContain('retry-after');
    expect(create.responses['503'].headers['retry-after']).toMatchObject({ required: true, schema: { type: 'integer' } });
    expect(create.parameters.find((p: { name: string }) => p.name === 'idempotency-key')).toMatchObject({ in: 'header', required: false });
    // The ingest event items are described (the schema each event is validated with), not `{}`.
    for (const [path, maxItems] of [
      ['/v1/analytics/{projectId}/events', 1000],
      ['/v1/collect', 50],
    ] as const) {
      const events = doc.paths[path].post.requestBody.content['application/json'].schema.properties.events;
      expect(events.maxItems).toBe(maxItems);
      expect(Object.keys(events.items.properties)).toEqual(
        expect.arrayContaining(['path', 'url', 'timestamp', 'userAgent', 'ip', 'visitorId', 'accept', 'status', 'method', 'referrer']),
      );
      expect(events.items.additionalProperties).toBe(false);
      expect(events.items.properties.status).toMatchObject({ type: 'integer', minimum: 100, maximum: 599 });
    }
  });

  it('/docs → 200 HTML that loads the document', async () => {
    const r = await t.request('GET', '/docs');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.text).toMatch(/<html/i);
    expect(r.text).toMatch(/swagger/i);
    const init = await t.request('GET', '/docs/static/swagger-initializer.js');
    expect(init.status).toBe(200);
    expect(init.text).toMatch(/json/);
  });
});

describeEachDialect('readiness failures', (dialect) => {
  let tdb: TestDb | undefined;
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    await tdb?.cleanup();
    close = undefined;
    tdb = undefined;
  });

  async function serve(migrated: boolean, analyticsReason?: string) {
    tdb = await openTestDb(dialect, { migrated });
    const config = testConfig({ dataDir: tdb.env.INKWELL_DATA_DIR as string });
    const ctx = createContext(config, tdb.db, createLogger(config));
    const services = await wireServices(ctx);
    // An analytics store that cannot answer (as the ClickHouse store says when its server is unreachable).
    if (analyticsReason !== undefined) services.analytics.store.health = async () => ({ ok: false, reason: analyticsReason });
    const app = await buildApp(ctx, services);
    await app.listen({ host: '127.0.0.1', port: 0 });
    close = () => app.close();
    return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  }

  it('/readyz → 503 not_ready when the database is closed, while /healthz stays 200', async () => {
    const base = await serve(true);
    expect((await httpRequest(base, 'GET', '/readyz')).status).toBe(200);
    await tdb!.db.close();
    const r = await httpRequest(base, 'GET', '/readyz');
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ error: 'Internal error', code: 'not_ready', requestId: r.headers.get('x-request-id') });
    expect((await httpRequest(base, 'GET', '/healthz')).status).toBe(200);
  });

  it('/readyz → 503 not_ready when migrations are not applied', async () => {
    const base = await serve(false);
    const r = await httpRequest(base, 'GET', '/readyz');
    expect(r.status).toBe(503);
    expect(r.body.code).toBe('not_ready');
  });

  it('/readyz → 503 not_ready naming the analytics store when it cannot answer, while /healthz stays 200', async () => {
    const base = await serve(true, 'ClickHouse at http://127.0.0.1:8123 is not reachable: connect ECONNREFUSED');
    const r = await httpRequest(base, 'GET', '/readyz');
    expect(r.status).toBe(503);
    expect(r.body.code).toBe('not_ready');
    expect(r.headers.get('x-not-ready-cause')).toBe('analytics_unavailable');
    expect((await httpRequest(base, 'GET', '/healthz')).status).toBe(200);
  });
});
