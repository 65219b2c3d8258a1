// The dashboard's analytics endpoints over real HTTP on both databases: the time series, the AI agents and
// crawlers, the referrers. Every expected number is computed here from the generated events themselves
// (Sets per bucket or name), not by the service's code; only the rule name an agent's user agent maps to is
// taken from the classifier, which has its own tests against an independent table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classify } from '../../src/analytics/classify/classify.ts';
import type { FacetGroup } from '../../src/analytics/export/day-summary.ts';
import { countFacet } from '../../src/analytics/export/facet-counts.ts';
import { createAnalyticsClient } from '../../src/client/analytics.ts';
import { testConfig } from '../../src/config.ts';
import { migrate } from '../../src/db/index.ts';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';
import { sendEvents } from './api.ts';
import { DAY_MS, type GenEvent, generate, START_MS, type WireEvent } from './dataset.ts';
import { services, sqlAnalyticsService } from './services.ts';
import { rewindToEventRows, rewriteStoredEvents } from './stored-events.ts';

const iso = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);
const START_DAY = START_MS / DAY_MS;

/** Monday-based ISO week start and calendar month start of a day, computed with Date (independently of the service's arithmetic). */
function bucketStart(day: number, interval: 'day' | 'week' | 'month'): number {
  const d = new Date(day * DAY_MS);
  if (interval === 'day') return day;
  if (interval === 'week') return day - ((d.getUTCDay() + 6) % 7);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / DAY_MS;
}

interface Expected {
  date: string;
  human: number;
  ai: number;
  total: number;
  crawlerRequests: number;
}

function expectedSeries(events: GenEvent[], fromDay: number, toDay: number, interval: 'day' | 'week' | 'month'): Expected[] {
  const buckets = new Map<number, { h: Set<string>; a: Set<string>; t: Set<string>; c: number; first: number }>();
  for (let d = fromDay; d < toDay; d++) {
    const b = bucketStart(d, interval);
    if (!buckets.has(b)) buckets.set(b, { h: new Set(), a: new Set(), t: new Set(), c: 0, first: d });
  }
  for (const { truth } of events) {
    if (truth.day < fromDay || truth.day >= toDay) continue;
    const b = buckets.get(bucketStart(truth.day, interval)) as NonNullable<ReturnType<typeof buckets.get>>;
    if (truth.cls === 'crawler') b.c++;
    if (!truth.qualifying) continue;
    (truth.cls === 'human' ? b.h : b.a).add(truth.visitor);
    b.t.add(truth.visitor);
  }
  return [...buckets.values()].map((b) => ({ date: iso(b.first), human: b.h.size, ai: b.a.size, total: b.t.size, crawlerRequests: b.c }));
}

const isPageView = (w: WireEvent, path: string) =>
  (w.method === undefined || w.method === 'GET') &&
  (w.status === undefined || (w.status >= 200 && w.status <= 299) || w.status === 304) &&
  !/\.(js|png|css|woff2)$/.test(path);

function expectedAgents(events: GenEvent[], fromDay: number, toDay: number) {
  const by = new Map<string, { class: string; visitors: Set<string>; views: number; requests: number }>();
  for (const { wire, truth } of events) {
    if (truth.day < fromDay || truth.day >= toDay || truth.cls === 'human') continue;
    const name = classify({ userAgent: wire.userAgent ?? null, path: wire.path ?? wire.url ?? '', accept: wire.accept ?? null }).rule as string;
    let e = by.get(name);
    if (!e) {
      e = { class: truth.cls, visitors: new Set(), views: 0, requests: 0 };
      by.set(name, e);
    }
    e.visitors.add(truth.visitor);
    e.requests++;
    if (isPageView(wire, truth.path)) e.views++;
  }
  return [...by]
    .map(([agent, e]) => ({ agent, class: e.class, visitors: e.visitors.size, views: e.views, requests: e.requests }))
    .sort((a, b) => b.visitors - a.visitors || b.requests - a.requests || (a.agent < b.agent ? -1 : 1));
}

describeEachDialect('analytics series, agents and referrers', (dialect) => {
  let t: TestApp;
  let s: Seeded;
  let data: GenEvent[];
  const get = (p: string, key = s.adminKey) => t.request('GET', `/v1/analytics/${s.project.id}/${p}`, { key });

  beforeAll(async () => {
    t = await startTestApp(dialect);
    s = await t.seed();
    data = generate({ seed: 7, events: 2000, days: 45 });
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

  describe('series', () => {
    const cases: { interval: 'day' | 'week' | 'month'; from: number; to: number }[] = [
      { interval: 'day', from: START_DAY, to: START_DAY + 45 },
      { interval: 'day', from: START_DAY + 3, to: START_DAY + 10 },
      { interval: 'week', from: START_DAY + 2, to: START_DAY + 40 },
      { interval: 'month', from: START_DAY, to: START_DAY + 45 },
      { interval: 'month', from: START_DAY - 5, to: START_DAY + 50 },
    ];
    for (const c of cases) {
      it(`${c.interval} buckets ${iso(c.from)} → ${iso(c.to)}: every bucket listed, counts exact, totals distinct over the range`, async () => {
        const res = await get(`series?dateFrom=${iso(c.from)}&dateTo=${iso(c.to)}&interval=${c.interval}`);
        expect(res.status, res.text).toBe(200);
        expect(res.body.interval).toBe(c.interval);
        expect(res.body.series).toEqual(expectedSeries(data, c.from, c.to, c.interval));
        const inRange = data.filter((d) => d.truth.day >= c.from && d.truth.day < c.to);
        const visitors = (f: (d: GenEvent) => boolean) => new Set(inRange.filter((d) => d.truth.qualifying && f(d)).map((d) => d.truth.visitor)).size;
        expect(res.body.totals).toEqual({
          human: visitors((d) => d.truth.cls === 'human'),
          ai: visitors((d) => d.truth.cls === 'ai'),
          total: visitors(() => true),
          crawlerRequests: inRange.filter((d) => d.truth.cls === 'crawler').length,
        });
      });
    }

    it('totals are distinct over the whole range, not sums of the buckets', async () => {
      const res = await get(`series?dateFrom=${iso(START_DAY)}&dateTo=${iso(START_DAY + 45)}`);
      const all = new Set(data.filter((d) => d.truth.qualifying).map((d) => d.truth.visitor));
      const humans = new Set(data.filter((d) => d.truth.qualifying && d.truth.cls === 'human').map((d) => d.truth.visitor));
      expect(res.body.totals.total).toBe(all.size);
      expect(res.body.totals.human).toBe(humans.size);
      expect(res.body.series.reduce((n: number, p: Expected) => n + p.total, 0)).toBeGreaterThan(all.size);
    });

    it('the typed client reads the same series, agents and referrers', async () => {
      const client = createAnalyticsClient({ baseUrl: t.baseUrl, key: s.adminKey });
      const q = { dateFrom: iso(START_DAY), dateTo: iso(START_DAY + 45) };
      expect(await client.series(s.project.id, { ...q, interval: 'week' })).toEqual(
        (await get(`series?${new URLSearchParams({ ...q, interval: 'week' })}`)).body,
      );
      expect(await client.agents(s.project.id, { ...q, limit: 3 })).toEqual((await get(`agents?${new URLSearchParams({ ...q, limit: '3' })}`)).body);
      expect(await client.referrers(s.project.id, q)).toEqual({ referrers: [], hasMore: false });
    });

    it('absent bounds run from the first to the last day with data; interval defaults to day', async () => {
      const res = await get('series');
      expect(res.status).toBe(200);
      const days = data.map((d) => d.truth.day);
      const first = Math.min(...days);
      const last = Math.max(...days);
      expect(res.body.series).toEqual(expectedSeries(data, first, last + 1, 'day'));
    });

    it('dateFrom == dateTo → an empty series; a project without events → an empty series', async () => {
      const same = await get(`series?dateFrom=${iso(START_DAY)}&dateTo=${iso(START_DAY)}`);
      expect(same.body).toEqual({ interval: 'day', series: [], totals: { human: 0, ai: 0, total: 0, crawlerRequests: 0 } });
      const other = await t.seed({ name: 'Empty' });
      const empty = await t.request('GET', `/v1/analytics/${other.project.id}/series?interval=week`, { key: other.adminKey });
      expect(empty.body).toEqual({ interval: 'week', series: [], totals: { human: 0, ai: 0, total: 0, crawlerRequests: 0 } });
      // An explicit range is listed bucket by bucket, at zero, with or without events.
      const zeros = await t.request('GET', `/v1/analytics/${other.project.id}/series?dateFrom=2026-03-01&dateTo=2026-03-03`, { key: other.adminKey });
      const z = { human: 0, ai: 0, total: 0, crawlerRequests: 0 };
      expect(zeros.body).toEqual({
        interval: 'day',
        series: [
          { date: '2026-03-01', ...z },
          { date: '2026-03-02', ...z },
        ],
        totals: z,
      });
    });

    it('strict parameters: a bad interval, paging parameters, reversed dates and too many buckets are 400s naming the parameter', async () => {
      const bad = await get('series?interval=year');
      expect(bad.status).toBe(400);
      expect(bad.body.details).toEqual([{ path: 'interval', message: 'interval must be day, week or month (got "year")' }]);
      const paging = await get('series?limit=10');
      expect(paging.status).toBe(400);
      expect(paging.body.details[0].path).toBe('limit');
      const reversed = await get('series?dateFrom=2026-03-10&dateTo=2026-03-01');
      expect(reversed.status).toBe(400);
      const long = await get('series?dateFrom=2000-01-01&dateTo=2026-01-01');
      expect(long.status).toBe(400);
      expect(long.body.details[0].path).toBe('interval');
      expect(long.body.error).toMatch(/more than 1,500 days/);
      expect((await get('series?dateFrom=2000-01-01&dateTo=2026-01-01&interval=month')).status).toBe(200);
    });
  });

  describe('agents', () => {
    it('every AI assistant and crawler by rule name: distinct visitors, page views and requests, exact', async () => {
      const res = await get(`agents?dateFrom=${iso(START_DAY)}&dateTo=${iso(START_DAY + 45)}&limit=250`);
      expect(res.status, res.text).toBe(200);
      const expected = expectedAgents(data, START_DAY, START_DAY + 45);
      expect(expected.length).toBeGreaterThan(3);
      expect(res.body.agents.map(({ category: _, ...r }: { category: unknown }) => r)).toEqual(expected);
      expect(res.body.hasMore).toBe(false);
      const gptbot = res.body.agents.find((a: { agent: string }) => a.agent === 'GPTBot');
      expect(gptbot).toMatchObject({ class: 'crawler', category: 'training' });
      const chatgpt = res.body.agents.find((a: { agent: string }) => a.agent === 'ChatGPT-User');
      expect(chatgpt).toMatchObject({ class: 'ai', category: null });
    });

    it('a sub-range counts only its days; paging splits the same ordered list', async () => {
      const q = `dateFrom=${iso(START_DAY + 5)}&dateTo=${iso(START_DAY + 12)}`;
      const all = await get(`agents?${q}&limit=250`);
      const expected = expectedAgents(data, START_DAY + 5, START_DAY + 12);
      expect(all.body.agents.map(({ category: _, ...r }: { category: unknown }) => r)).toEqual(expected);
      const first = await get(`agents?${q}&limit=2`);
      const second = await get(`agents?${q}&limit=2&offset=2`);
      expect(first.body.hasMore).toBe(true);
      expect([...first.body.agents, ...second.body.agents]).toEqual(all.body.agents.slice(0, 4));
    });

    it('an ingest key cannot read them (403)', async () => {
      for (const p of ['series', 'agents', 'referrers']) expect((await get(p, s.ingestSecretKey)).status).toBe(403);
    });
  });

  describe('referrers', () => {
    it('qualifying views by referrer host (lower case, no www.): distinct visitors and views; others are not listed', async () => {
      const p = await t.seed({ name: 'Referrers' });
      const at = '2026-05-02T10:00:00Z';
      const browser = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
      const ev = (visitorId: string, referrer: string | undefined, extra: Partial<WireEvent> = {}) => ({
        path: '/docs',
        timestamp: at,
        userAgent: browser,
        visitorId,
        ...(referrer === undefined ? {} : { referrer }),
        ...extra,
      });
      await sendEvents(t, p.ingestSecretKey, p.project.id, [
        ev('a', 'https://www.Google.com/search?q=inkwell'),
        ev('a', 'https://google.com/'),
        ev('b', 'https://google.com/'),
        ev('c', 'http://news.ycombinator.com/item?id=1'),
        ev('c', 'android-app://com.slack/'),
        ev('d', undefined),
        ev('e', 'not a url'),
        // Not qualifying: an asset, a POST, an error, a crawler.
        ev('f', 'https://bing.com/', { path: '/app.js' }),
        ev('f', 'https://bing.com/', { method: 'POST' }),
        ev('f', 'https://bing.com/', { status: 404 }),
        ev('g', 'https://bing.com/', { userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' }),
        // AI views count.
        ev('h', 'https://chatgpt.com/', {
          userAgent: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot',
        }),
      ] as WireEvent[]);
      const res = await t.request('GET', `/v1/analytics/${p.project.id}/referrers`, { key: p.adminKey });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({
        referrers: [
          { host: 'google.com', visitors: 2, views: 3 },
          { host: 'chatgpt.com', visitors: 1, views: 1 },
          { host: 'com.slack', visitors: 1, views: 1 },
          { host: 'news.ycombinator.com', visitors: 1, views: 1 },
        ],
        hasMore: false,
      });
      const none = await t.request('GET', `/v1/analytics/${p.project.id}/referrers?dateFrom=2026-05-03`, { key: p.adminKey });
      expect(none.body).toEqual({ referrers: [], hasMore: false });
    });
  });
});

describeEachDialect('agents, referrers and series from day summaries: reclassification, migration, cold processes', (dialect) => {
  let t: TestDb;
  beforeAll(async () => {
    t = await openTestDb(dialect);
  });
  afterAll(async () => {
    await t?.cleanup();
  });
  const everything = { fromDay: null, toDay: null, offset: 0, limit: 250 };

  it('reclassify restores the breakdowns after stored classes went wrong', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'f', repository: 'r' });
    await svc.ingest.ingest(
      p.id,
      generate({ seed: 3, events: 400, days: 5 }).map((d) => d.wire),
      { source: 'api' },
    );
    const ord = (await t.db.kysely.selectFrom('analytics_projects').select('ord').where('project_id', '=', p.id).executeTakeFirstOrThrow()).ord;
    const agents = await svc.store.agents(p.id, everything);
    const referrers = await svc.store.referrers(p.id, everything);
    expect(agents.rows.length).toBeGreaterThan(2);
    // Stored classes gone wrong (as old rules would leave them): every agent request stored as a human's.
    await rewriteStoredEvents(t.db, (e) => (e.cls === 'human' ? e : { ...e, cls: 'human', rule: null, category: null }), ord);
    expect(await svc.store.agents(p.id, everything)).toEqual({ rows: [], hasMore: false });
    await svc.store.reclassify(p.id);
    expect(await svc.store.agents(p.id, everything)).toEqual(agents);
    expect(await svc.store.referrers(p.id, everything)).toEqual(referrers);
    await svc.close();
  });

  it('events stored before migration 0016 (as rows) give the same breakdowns after 0016 and 0017', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'g', repository: 'r' });
    await svc.ingest.ingest(
      p.id,
      generate({ seed: 4, events: 300, days: 4 }).map((d) => d.wire),
      { source: 'api' },
    );
    const agents = await svc.store.agents(p.id, everything);
    await svc.close();
    expect(agents.rows.length).toBeGreaterThan(2);
    await rewindToEventRows(t.db);
    expect(await migrate(t.db)).toEqual(['0016_analytics_segments']);
    const again = services(t.db).svc;
    expect(await again.store.agents(p.id, everything)).toEqual(agents);
    await again.close();
  });

  it('a cold process reading sealed summaries gives the same series, agents and referrers', async () => {
    const { projects, svc } = services(t.db);
    const p = await projects.createProject({ name: 'h', repository: 'r' });
    await svc.ingest.ingest(
      p.id,
      generate({ seed: 5, events: 600, days: 20 }).map((d) => d.wire),
      { source: 'api' },
    );
    const answers = async (s: typeof svc) => ({
      series: await Promise.all(
        (['day', 'week', 'month'] as const).map((interval) => s.store.series(p.id, { fromDay: START_DAY - 3, toDay: START_DAY + 25, interval })),
      ),
      open: await s.store.series(p.id, { fromDay: null, toDay: null, interval: 'week' }),
      agents: await s.store.agents(p.id, everything),
      referrers: await s.store.referrers(p.id, everything),
    });
    const warm = await answers(svc);
    expect(warm.series[0]?.series.length).toBeGreaterThan(0);
    await svc.store.summaries.persisted();
    await svc.store.summaries.sealOnce();
    while ((await svc.store.summaries.sealOnce()) > 0);
    const cold = sqlAnalyticsService({ config: testConfig(), db: t.reopen(), projects, now: Date.now });
    expect(await answers(cold)).toEqual(warm);
    expect(cold.store.summaries.stats.rebuilt).toBe(0);
    await svc.close();
    await cold.close();
  });
});

describe('countFacet', () => {
  const day = (_d: number, groups: [string, number[]][]): { facets: FacetGroup[] } => ({
    facets: groups.map(([name, visitors]) => ({
      facet: 1,
      name,
      cls: 2,
      visitors: Float64Array.from(visitors),
      views: visitors.length,
      requests: visitors.length,
    })),
  });
  it('counts each visitor once per name across days, with a mark array or, for ordinals spread far apart, by sorting', () => {
    const near = [
      day(1, [
        ['A', [5, 7, 9]],
        ['B', [7]],
      ]),
      day(2, [['A', [7, 11]]]),
    ];
    const far = [
      day(1, [
        ['A', [5, 7, 2 ** 40]],
        ['B', [7]],
      ]),
      day(2, [['A', [7, 2 ** 40 + 3]]]),
    ];
    for (const days of [near, far]) {
      expect(countFacet(days, 1).map((c) => [c.name, c.visitors, c.requests])).toEqual([
        ['A', 4, 5],
        ['B', 1, 1],
      ]);
    }
  });
});
