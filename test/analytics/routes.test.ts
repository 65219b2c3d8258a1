import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRACKER_JS } from '../../src/analytics/ingest/tracker.ts';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { sendEvents, walk } from './api.ts';
import { DAY_MS, type Expected, expectedViews, expectedVisitors, type GenEvent, generate, hostedSchemas, START_MS } from './dataset.ts';

const schemas = hostedSchemas();
const day = (iso: string) => Math.floor(Date.parse(iso) / DAY_MS);

describeEachDialect('analytics API', (dialect) => {
  let t: TestApp;
  let s: Seeded;
  let other: Seeded;
  let data: GenEvent[];

  beforeAll(async () => {
    t = await startTestApp(dialect);
    s = await t.seed();
    other = await t.seed({ name: 'Other' });
    data = generate({ seed: 42, events: 1500, days: 10 });
    await sendEvents(
      t,
      s.ingestSecretKey,
      s.project.id,
      data.map((d) => d.wire),
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  const truths = () => data.map((d) => d.truth);

  const windows: { name: string; query: Record<string, string>; fromDay: number | null; toDay: number | null }[] = [
    { name: 'everything', query: {}, fromDay: null, toDay: null },
    { name: 'from a date', query: { dateFrom: '2026-03-04' }, fromDay: day('2026-03-04'), toDay: null },
    { name: 'to a date (exclusive)', query: { dateTo: '2026-03-06' }, fromDay: null, toDay: day('2026-03-06') },
    {
      name: 'date-time bounds count by their UTC date',
      query: { dateFrom: '2026-03-02T18:30:00Z', dateTo: '2026-03-05T23:59:59.999Z' },
      fromDay: day('2026-03-02'),
      toDay: day('2026-03-05'),
    },
    {
      name: 'offset date-times are read in UTC',
      query: { dateFrom: '2026-03-04T01:00:00+03:00', dateTo: '2026-03-08T00:30:00-02:00' },
      fromDay: day('2026-03-03'),
      toDay: day('2026-03-08'),
    },
    { name: 'one day', query: { dateFrom: '2026-03-07', dateTo: '2026-03-08' }, fromDay: day('2026-03-07'), toDay: day('2026-03-08') },
  ];

  for (const w of windows) {
    it(`visitors: totals and every row match the independently computed answer (${w.name})`, async () => {
      const expected = expectedVisitors(truths(), w.fromDay, w.toDay);
      expect(expected.rows.length).toBeGreaterThan(3);
      const got = await walk(t, s.adminKey, s.project.id, 'visitors', w.query, 7);
      expect(got.totals).toEqual(expected.totals);
      expect(got.rows).toEqual(expected.rows);
    });
  }

  it('views: qualifying view counts per path and site-wide (total = human + ai)', async () => {
    for (const w of windows.slice(0, 4)) {
      const expected = expectedViews(truths(), w.fromDay, w.toDay);
      const got = await walk(t, s.adminKey, s.project.id, 'views', w.query, 250);
      expect(got).toEqual(expected);
      for (const r of got.rows) expect(r.total).toBe(r.human + r.ai);
    }
  });

  it('totals are site-wide distinct counts, not sums, and total is deduplicated across human and AI', async () => {
    const res = await t.request('GET', `/v1/analytics/${s.project.id}/visitors?limit=250`, { key: s.adminKey });
    const rows = res.body.visitors as Expected['rows'];
    const sum = rows.reduce((a, r) => a + r.total, 0);
    expect(res.body.totals.total).toBeLessThan(sum);
    for (const r of rows) {
      expect(r.total).toBeGreaterThanOrEqual(Math.max(r.human, r.ai));
      expect(r.total).toBeLessThanOrEqual(r.human + r.ai);
      expect(r.total).toBeGreaterThan(0);
    }
    // Static assets and non-page requests never appear.
    expect(rows.some((r) => /\.(js|png|css|woff2)$/.test(r.path))).toBe(false);
  });

  it('paging: defaults to 50 rows, hasMore exactly when rows remain, offsets past the end are empty', async () => {
    const all = expectedVisitors(truths(), null, null).rows;
    const first = await t.request('GET', `/v1/analytics/${s.project.id}/visitors`, { key: s.adminKey });
    expect(first.body.visitors).toHaveLength(Math.min(50, all.length));
    expect(first.body.hasMore).toBe(all.length > 50);
    const exact = await t.request('GET', `/v1/analytics/${s.project.id}/visitors?limit=5&offset=${all.length - 5}`, { key: s.adminKey });
    expect(exact.body.visitors).toEqual(all.slice(-5));
    expect(exact.body.hasMore).toBe(false);
    const before = await t.request('GET', `/v1/analytics/${s.project.id}/visitors?limit=5&offset=${all.length - 6}`, { key: s.adminKey });
    expect(before.body.hasMore).toBe(true);
    const past = await t.request('GET', `/v1/analytics/${s.project.id}/visitors?offset=${all.length + 10}`, { key: s.adminKey });
    expect(past.status).toBe(200);
    expect(past.body.visitors).toEqual([]);
    expect(past.body.hasMore).toBe(false);
  });

  it('walking all pages gives every path exactly once while another task keeps ingesting', async () => {
    const before = new Set(expectedVisitors(truths(), null, null).rows.map((r) => r.path));
    let stop = false;
    let sent = 0;
    const extra = generate({ seed: 7, events: 1200, days: 10, pagePrefix: '/new/q' });
    const ingesting = (async () => {
      for (let i = 0; !stop && i < extra.length; i += 60) {
        await sendEvents(
          t,
          s.ingestSecretKey,
          s.project.id,
          extra.slice(i, i + 60).map((d) => d.wire),
          60,
        );
        sent += 60;
      }
    })();
    let nudges = 0;
    let got: Expected;
    try {
      got = await walk(t, s.adminKey, s.project.id, 'visitors', {}, 3, async () => {
        // Make sure new events land between pages too, not only concurrently.
        if (nudges++ % 3 === 0)
          await sendEvents(
            t,
            s.ingestSecretKey,
            s.project.id,
            extra.slice(nudges, nudges + 5).map((d) => d.wire),
            5,
          );
      });
    } finally {
      stop = true;
      await ingesting;
    }
    expect(sent + nudges).toBeGreaterThan(0);
    const paths = got.rows.map((r) => r.path);
    expect(new Set(paths).size).toBe(paths.length);
    for (const p of before) expect(paths).toContain(p);
    // One consistent snapshot: the walk is in the export order throughout.
    for (let i = 1; i < got.rows.length; i++) {
      const a = got.rows[i - 1]!;
      const b = got.rows[i]!;
      expect(a.total > b.total || (a.total === b.total && a.path < b.path)).toBe(true);
    }
    // A fresh walk (offset 0) sees data sent after the snapshot.
    await sendEvents(t, s.ingestSecretKey, s.project.id, [
      { path: '/fresh-after-walk', timestamp: new Date(START_MS).toISOString(), ip: '192.0.2.99', userAgent: 'Mozilla/5.0 Firefox/125.0' },
    ]);
    const after = await walk(t, s.adminKey, s.project.id, 'visitors', {}, 250);
    expect(after.totals.total).toBeGreaterThan(got.totals.total);
    expect(after.rows.map((r) => r.path)).toContain('/fresh-after-walk');
  });

  describe('query validation', () => {
    const bad: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=251', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=', 'limit'],
      ['limit=1e2', 'limit'],
      ['limit=10&limit=20', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=1.5', 'offset'],
      ['offset=abc', 'offset'],
      ['offset=0x10', 'offset'],
      ['offset=1&offset=2', 'offset'],
      ['dateFrom=yesterday', 'dateFrom'],
      ['dateFrom=2026-02-30', 'dateFrom'],
      ['dateTo=2026-13-01', 'dateTo'],
      ['dateTo=2026-03-01T25:00:00Z', 'dateTo'],
      ['dateFrom=2026-03-05&dateTo=2026-03-04', 'dateFrom'],
      ['dateFrom=2026-03-01&dateFrom=2026-03-02', 'dateFrom'],
    ];
    for (const [qs, param] of bad) {
      it(`${qs} → 400 naming ${param}`, async () => {
        for (const kind of ['visitors', 'views']) {
          const res = await t.request('GET', `/v1/analytics/${s.project.id}/${kind}?${qs}`, { key: s.adminKey });
          expect(res.status, res.text).toBe(400);
          expect(res.body.code).toBe('invalid_request');
          expect(res.body.details.map((d: { path: string }) => d.path)).toContain(param);
          expect(res.body.error).toContain(param);
          expect(schemas.error(res.body)).toBeNull();
        }
      });
    }

    it('an unknown query parameter → 400 unknown_field naming it', async () => {
      const res = await t.request('GET', `/v1/analytics/${s.project.id}/visitors?limt=10`, { key: s.adminKey });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('unknown_field');
      expect(res.body.details[0].path).toBe('limt');
    });

    it('dateFrom == dateTo → 200 with an empty result', async () => {
      const res = await t.request('GET', `/v1/analytics/${s.project.id}/visitors?dateFrom=2026-03-03&dateTo=2026-03-03T12:00:00Z`, { key: s.adminKey });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ totals: { human: 0, ai: 0, total: 0 }, visitors: [], hasMore: false });
      const views = await t.request('GET', `/v1/analytics/${s.project.id}/views?dateFrom=2026-03-03&dateTo=2026-03-03`, { key: s.adminKey });
      expect(views.body).toEqual({ totals: { human: 0, ai: 0, total: 0 }, views: [], hasMore: false });
    });

    it('limit 1 and 250 and a large offset are valid', async () => {
      for (const qs of ['limit=1', 'limit=250', 'offset=100000', 'limit=250&offset=0']) {
        const res = await t.request('GET', `/v1/analytics/${s.project.id}/visitors?${qs}`, { key: s.adminKey });
        expect(res.status, qs).toBe(200);
      }
    });
  });

  describe('keys', () => {
    it('an ingest key can send events but cannot read (403)', async () => {
      const sent = await t.request('POST', `/v1/analytics/${s.project.id}/events`, { key: s.ingestKey, body: { events: [{ path: '/x' }] } });
      expect(sent.status).toBe(202);
      for (const kind of ['visitors', 'views']) {
        const res = await t.request('GET', `/v1/analytics/${s.project.id}/${kind}`, { key: s.ingestKey });
        expect(res.status).toBe(403);
        expect(res.body.code).toBe('forbidden');
      }
    });

    it("another project's keys → 404; no key → 401", async () => {
      const read = await t.request('GET', `/v1/analytics/${s.project.id}/visitors`, { key: other.adminKey });
      expect(read.status).toBe(404);
      expect(read.body.code).toBe('project_not_found');
      const send = await t.request('POST', `/v1/analytics/${s.project.id}/events`, { key: other.ingestKey, body: { events: [{ path: '/x' }] } });
      expect(send.status).toBe(404);
      const anon = await t.request('GET', `/v1/analytics/${s.project.id}/visitors`);
      expect(anon.status).toBe(401);
      expect(anon.headers.get('www-authenticate')).toBe('Bearer');
    });

    it("another project's data never leaks into a project's export", async () => {
      await sendEvents(t, other.adminKey, other.project.id, [
        { path: '/only-other', timestamp: new Date(START_MS).toISOString(), ip: '1.2.3.4', userAgent: 'Mozilla/5.0 Firefox/125.0' },
      ]);
      const mine = await t.request('GET', `/v1/analytics/${s.project.id}/visitors?limit=250`, { key: s.adminKey });
      expect(mine.body.visitors.some((r: { path: string }) => r.path === '/only-other')).toBe(false);
      const theirs = await t.request('GET', `/v1/analytics/${other.project.id}/visitors`, { key: other.adminKey });
      expect(theirs.body).toEqual({ totals: { human: 1, ai: 0, total: 1 }, visitors: [{ path: '/only-other', human: 1, ai: 0, total: 1 }], hasMore: false });
    });
  });

  describe('ingest validation', () => {
    it('rejects invalid events one by one and stores the rest', async () => {
      const res = await t.request('POST', `/v1/analytics/${other.project.id}/events`, {
        key: other.ingestSecretKey,
        body: {
          events: [
            { path: '/ok-1', timestamp: '2026-03-02T10:00:00Z', ip: '9.9.9.9', userAgent: 'Mozilla/5.0 Firefox/125.0' },
            { timestamp: '2026-03-02T10:00:00Z' },
            { path: '/ok-2', status: 'two hundred' },
            { path: '/ok-3', timestamp: 'not a time' },
            { path: '/ok-4', colour: 'blue' },
            'just a string',
            { path: '/ok-5', timestamp: new Date(Date.now() + 3 * DAY_MS).toISOString() },
            { url: 'https://docs.example.com/ok-6?x=1', ip: '9.9.9.8', userAgent: 'Mozilla/5.0 Firefox/125.0', timestamp: '2026-03-02T11:00:00Z' },
          ],
        },
      });
      expect(res.status).toBe(202);
      expect(res.body.accepted).toBe(2);
      expect(res.body.rejected.map((r: { index: number }) => r.index)).toEqual([1, 2, 3, 4, 5, 6]);
      for (const r of res.body.rejected) expect(typeof r.error).toBe('string');
      expect(res.body.rejected[0].error).toMatch(/path|url/);
      expect(res.body.rejected[1].error).toMatch(/status/);
      expect(res.body.rejected[2].error).toMatch(/timestamp/);
      expect(res.body.rejected[3].error).toMatch(/colour/);
      expect(res.body.rejected[5].error).toMatch(/future/);
      const v = await t.request('GET', `/v1/analytics/${other.project.id}/visitors?dateFrom=2026-03-02&dateTo=2026-03-03`, { key: other.adminKey });
      expect(v.body.visitors.map((r: { path: string }) => r.path).sort()).toEqual(['/ok-1', '/ok-6']);
    });

    it('a batch of more than 1,000 events or none → 400 naming events; wrong body shape → 400', async () => {
      const many = Array.from({ length: 1001 }, () => ({ path: '/a' }));
      const big = await t.request('POST', `/v1/analytics/${s.project.id}/events`, { key: s.adminKey, body: { events: many } });
      expect(big.status).toBe(400);
      expect(big.body.details[0].path).toBe('events');
      const none = await t.request('POST', `/v1/analytics/${s.project.id}/events`, { key: s.adminKey, body: { events: [] } });
      expect(none.status).toBe(400);
      const extra = await t.request('POST', `/v1/analytics/${s.project.id}/events`, { key: s.adminKey, body: { events: [{ path: '/a' }], x: 1 } });
      expect(extra.status).toBe(400);
      expect(extra.body.code).toBe('unknown_field');
      const bad = await t.request('POST', `/v1/analytics/${s.project.id}/events`, {
        key: s.adminKey,
        raw: '{"events": [',
        headers: { 'content-type': 'application/json' },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('invalid_json');
    });

    it('counts ingest against the rate limit in events', async () => {
      const limited = await startTestApp(dialect, {}, { INKWELL_RATE_LIMIT_INGEST: '10/1m' });
      try {
        const p = await limited.seed();
        const ok = await limited.request('POST', `/v1/analytics/${p.project.id}/events`, {
          key: p.ingestKey,
          body: { events: Array.from({ length: 8 }, () => ({ path: '/a' })) },
        });
        expect(ok.status).toBe(202);
        expect(ok.headers.get('ratelimit-remaining')).toBe('2');
        const over = await limited.request('POST', `/v1/analytics/${p.project.id}/events`, {
          key: p.ingestKey,
          body: { events: Array.from({ length: 3 }, () => ({ path: '/a' })) },
        });
        expect(over.status).toBe(429);
        expect(over.headers.get('retry-after')).toBeTruthy();
      } finally {
        await limited.close();
      }
    });
  });

  describe('tracker', () => {
    it('GET /script.js serves the tracker with cache headers and an ETag', async () => {
      const res = await t.request('GET', '/script.js');
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/javascript/);
      expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
      expect(res.text).toBe(TRACKER_JS);
      const etag = res.headers.get('etag') as string;
      const again = await t.request('GET', '/script.js', { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
    });

    it('POST /v1/collect takes a text/plain beacon with the ingest key in the body, CORS-enabled', async () => {
      const body = JSON.stringify({ projectId: other.project.id, key: other.ingestKey, events: [{ path: '/beacon', referrer: 'https://www.google.com/' }] });
      const pre = await t.request('OPTIONS', '/v1/collect', {
        headers: { origin: 'https://docs.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect(pre.status).toBeLessThan(300);
      expect(pre.headers.get('access-control-allow-origin')).toBe('https://docs.example.com');
      // CORS is for the collect endpoint only: admin endpoints do not answer preflights.
      const adminPre = await t.request('OPTIONS', `/v1/analytics/${other.project.id}/visitors`, {
        headers: { origin: 'https://docs.example.com', 'access-control-request-method': 'GET' },
      });
      expect(adminPre.headers.get('access-control-allow-origin')).toBeNull();
      const res = await t.request('POST', '/v1/collect', {
        raw: body,
        headers: {
          'content-type': 'text/plain;charset=UTF-8',
          origin: 'https://docs.example.com',
          'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0',
        },
      });
      expect(res.status, res.text).toBe(202);
      expect(res.body).toEqual({ accepted: 1, rejected: [] });
      expect(res.headers.get('access-control-allow-origin')).toBe('https://docs.example.com');
      const v = await t.request('GET', `/v1/analytics/${other.project.id}/visitors?limit=250`, { key: other.adminKey });
      expect(v.body.visitors).toContainEqual({ path: '/beacon', human: 1, ai: 0, total: 1 });
      // The same beacon from the same client (IP + UA) is the same visitor.
      await t.request('POST', '/v1/collect', {
        raw: body,
        headers: { 'content-type': 'text/plain', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/125.0' },
      });
      const v2 = await t.request('GET', `/v1/analytics/${other.project.id}/visitors?limit=250`, { key: other.adminKey });
      expect(v2.body.visitors).toContainEqual({ path: '/beacon', human: 1, ai: 0, total: 1 });
      const views = await t.request('GET', `/v1/analytics/${other.project.id}/views?limit=250`, { key: other.adminKey });
      expect(views.body.views).toContainEqual({ path: '/beacon', human: 2, ai: 0, total: 2 });
    });

    it('POST /v1/collect refuses admin keys, bad keys, other projects and malformed bodies', async () => {
      const send = (b: unknown) =>
        t.request('POST', '/v1/collect', { raw: typeof b === 'string' ? b : JSON.stringify(b), headers: { 'content-type': 'text/plain' } });
      expect((await send({ projectId: other.project.id, key: other.adminKey, events: [{ path: '/a' }] })).status).toBe(401);
      expect((await send({ projectId: other.project.id, key: 'ink_pub_nope', events: [{ path: '/a' }] })).status).toBe(401);
      expect((await send({ projectId: other.project.id, key: s.ingestKey, events: [{ path: '/a' }] })).status).toBe(404);
      const malformed = await send('{not json');
      expect(malformed.status).toBe(400);
      expect(malformed.body.code).toBe('invalid_json');
      const missing = await send({ projectId: other.project.id, events: [{ path: '/a' }] });
      expect(missing.status).toBe(400);
      expect(missing.body.details[0].path).toBe('key');
    });
  });
});
