import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { testConfig } from '../../src/config.ts';
import { createProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';
import { DAY_MS, expectedVisitors, START_MS, type Truth } from './dataset.ts';
import { sqlAnalyticsService } from './services.ts';

const UAS: { ua: string; cls: 'human' | 'ai' | 'crawler' }[] = [
  { ua: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', cls: 'human' },
  { ua: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0', cls: 'human' },
  { ua: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot', cls: 'ai' },
  { ua: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)', cls: 'ai' },
  { ua: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', cls: 'crawler' },
];
const PAGES = ['/', '/a', '/b', '/c/d', '/e'];

const eventArb = fc.record({
  page: fc.integer({ min: 0, max: PAGES.length - 1 }),
  ua: fc.integer({ min: 0, max: UAS.length - 1 }),
  ip: fc.integer({ min: 1, max: 12 }),
  // A visitorId shared across user agents makes one visitor both human and AI.
  visitorId: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
  day: fc.integer({ min: 0, max: 4 }),
  markdown: fc.boolean(),
  status: fc.constantFrom(undefined, 200, 304, 404),
});

describeEachDialect('analytics export properties', (dialect) => {
  let t: TestDb;
  let projects: ReturnType<typeof createProjectService>;
  let svc: ReturnType<typeof sqlAnalyticsService>;

  beforeAll(async () => {
    t = await openTestDb(dialect);
    projects = createProjectService(createProjectsStore(t.db.kysely));
    svc = sqlAnalyticsService({ config: testConfig(), db: t.db, projects, now: Date.now });
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  it('for random event sets: max(human, ai) ≤ total ≤ human + ai per row and site-wide, site-wide total ≥ every row, and counts are exact', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArb, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 1, max: 5 }),
        async (events, from, span) => {
          const p = await projects.createProject({ name: 'prop', repository: 'r' });
          const truths: Truth[] = [];
          const wire = events.map((e) => {
            const u = UAS[e.ua]!;
            const page = PAGES[e.page]!;
            const markdown = e.markdown && page !== '/';
            const cls = u.cls === 'crawler' ? 'crawler' : markdown ? 'ai' : u.cls;
            const ts = START_MS + e.day * DAY_MS + 3_600_000;
            truths.push({
              day: Math.floor(ts / DAY_MS),
              path: page,
              cls,
              qualifying: cls !== 'crawler' && (e.status === undefined || e.status === 200 || e.status === 304),
              visitor: e.visitorId !== undefined ? `v:${e.visitorId}` : `${e.ip}|${u.ua}`,
            });
            return {
              path: markdown ? `${page}.md` : page,
              userAgent: u.ua,
              ip: `203.0.113.${e.ip}`,
              timestamp: new Date(ts).toISOString(),
              ...(e.visitorId !== undefined ? { visitorId: String(e.visitorId) } : {}),
              ...(e.status !== undefined ? { status: e.status } : {}),
            };
          });
          const r = await svc.ingest.ingest(p.id, wire, { source: 'api' });
          expect(r.rejected).toEqual([]);
          const fromDay = Math.floor(START_MS / DAY_MS) + from;
          const toDay = fromDay + span;
          const page = await svc.store.visitors({ projectId: p.id, walkId: 'prop', fromDay, toDay, offset: 0, limit: 250 });
          const { totals, rows } = page;
          expect(totals.total).toBeGreaterThanOrEqual(Math.max(totals.human, totals.ai));
          expect(totals.total).toBeLessThanOrEqual(totals.human + totals.ai);
          for (const row of rows) {
            expect(row.total).toBeGreaterThanOrEqual(Math.max(row.human, row.ai));
            expect(row.total).toBeLessThanOrEqual(row.human + row.ai);
            expect(totals.total).toBeGreaterThanOrEqual(row.total);
            expect(totals.human).toBeGreaterThanOrEqual(row.human);
            expect(totals.ai).toBeGreaterThanOrEqual(row.ai);
            expect(row.total).toBeGreaterThan(0);
          }
          const expected = expectedVisitors(truths, fromDay, toDay);
          expect({ totals, rows }).toEqual(expected);
        },
      ),
      { numRuns: 25 },
    );
  });
});
