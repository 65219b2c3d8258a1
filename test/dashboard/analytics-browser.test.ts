// The analytics page in real Chromium over a dataset ingested through the API: the chart's data, the totals
// and the three tables show exactly what the API answers for the range in the URL; the range survives a
// reload; the top pages table pages through the export, sorts, searches and downloads as shown; a project
// without events says how to add the tracker; axe-core finds nothing serious, light or dark, at 375 px.
import fs from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { seriousA11yViolations } from '../helpers/axe.ts';
import { describeInChromium, signInWithKey, watchedPage } from '../helpers/dashboard.ts';
import { ingestTraffic, type TrafficEvent, trafficEvents } from '../helpers/traffic.ts';

const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Every row of a paged API list, walked with the largest page. */
async function walk(t: TestApp, key: string, path: string, list: string): Promise<any[]> {
  const rows: any[] = [];
  for (let offset = 0; ; offset += 250) {
    const res = await t.request('GET', `${path}&limit=250&offset=${offset}`, { key });
    expect(res.status, res.text).toBe(200);
    rows.push(...res.body[list]);
    if (!res.body.hasMore) return rows;
  }
}

/** A table's cells as the page shows them (the exact values, from data-value). */
async function tableValues(page: Page, id: string): Promise<string[][]> {
  return page.locator(`#${id} tbody tr`).evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.dataset.value ?? '')));
}

const chartData = async (page: Page) => JSON.parse((await page.locator('figure.chart').getAttribute('data-series')) as string);

describeInChromium('dashboard analytics in Chromium', (dialect, chromium) => {
  let t: TestApp;
  let s: Seeded;
  let context: BrowserContext;
  const now = Date.now();
  const from = day(now - 11 * DAY);
  const to = day(now);
  beforeAll(async () => {
    t = await startTestApp(dialect);
    s = await t.seed({ name: 'Acme Docs' });
    // Twelve days of mixed traffic, and 130 more pages seen once each: more rows than one page of the table.
    const extra: TrafficEvent[] = Array.from({ length: 130 }, (_, i) => ({
      path: `/docs/ref/p-${i}`,
      timestamp: new Date(now - 2 * DAY).toISOString(),
      ip: `100.64.1.${i}`,
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
      status: 200,
      method: 'GET',
    }));
    await ingestTraffic(t.baseUrl, s.project.id, s.adminKey, [...trafficEvents(now, 12, 7), ...extra]);
  });
  afterAll(async () => t?.close());
  beforeEach(async () => {
    context = await chromium().newContext({ acceptDownloads: true });
  });
  afterEach(async () => context?.close());

  it('shows in the chart, the totals and the tables exactly what the API answers for the range', async () => {
    const { page, problems } = await watchedPage(context);
    await signInWithKey(page, t.baseUrl, s.adminKey);
    await page.goto(`${t.baseUrl}/analytics?from=${from}&to=${to}`);
    await page.locator('#pages tbody tr').first().waitFor();
    await page.locator('#referrers tbody tr').first().waitFor();
    const base = `/v1/analytics/${s.project.id}`;
    const q = `dateFrom=${from}&dateTo=${day(Date.parse(to) + DAY)}`;
    const series = (await t.request('GET', `${base}/series?${q}&interval=day`, { key: s.adminKey })).body;
    expect(series.series).toHaveLength(12);
    expect(series.totals.ai).toBeGreaterThan(0);
    expect(await chartData(page)).toEqual({
      dates: series.series.map((p: any) => p.date),
      human: series.series.map((p: any) => p.human),
      ai: series.series.map((p: any) => p.ai),
      crawlerRequests: series.series.map((p: any) => p.crawlerRequests),
    });
    for (const k of ['total', 'human', 'ai', 'crawlerRequests']) {
      expect(await page.getByTestId(`total-${k}`).getAttribute('data-value'), k).toBe(String(series.totals[k]));
    }
    expect(await page.getByTestId('range-statement').textContent()).toContain(`${from} to ${to} (12 days, both included). Days are in UTC.`);

    // Top pages: the export's first page of 100, then every row after "Load more".
    const pages = (await walk(t, s.adminKey, `${base}/visitors?${q}`, 'visitors')).map((r) => [r.path, String(r.human), String(r.ai), String(r.total)]);
    expect(pages.length).toBeGreaterThan(130);
    expect(await tableValues(page, 'pages')).toEqual(pages.slice(0, 100));
    await page.getByRole('region', { name: 'Top pages' }).getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => tableValues(page, 'pages')).toEqual(pages.slice(0, 200));
    if (pages.length > 200) await page.getByRole('region', { name: 'Top pages' }).getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => tableValues(page, 'pages')).toEqual(pages);

    const agents = (await walk(t, s.adminKey, `${base}/agents?${q}`, 'agents')).map((r) => [
      r.agent,
      r.category ? `${r.class} (${r.category})` : r.class,
      String(r.visitors),
      String(r.views),
      String(r.requests),
    ]);
    expect(agents.map((a) => a[0])).toEqual(expect.arrayContaining(['ChatGPT-User', 'GPTBot', 'Googlebot']));
    expect(await tableValues(page, 'agents')).toEqual(agents);
    const referrers = (await walk(t, s.adminKey, `${base}/referrers?${q}`, 'referrers')).map((r) => [r.host, String(r.visitors), String(r.views)]);
    expect(referrers.map((r) => r[0]).sort()).toEqual(['github.com', 'google.com', 'news.ycombinator.com']);
    expect(await tableValues(page, 'referrers')).toEqual(referrers);

    // The agents table as CSV: the rows shown, as a file.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('region', { name: 'AI agents and crawlers' }).getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`inkwell-agents-${from}-to-${to}.csv`);
    const csv = fs.readFileSync(await download.path(), 'utf8');
    expect(csv).toBe(`${['Agent,Class,Visitors,Views,Requests', ...agents.map((a) => a.join(','))].join('\r\n')}\r\n`);

    // The same numbers after a reload: the range is in the URL.
    await page.reload();
    await page.locator('#agents tbody tr').first().waitFor();
    expect(new URL(page.url()).search).toBe(`?from=${from}&to=${to}`);
    expect((await chartData(page)).human).toEqual(series.series.map((p: any) => p.human));
    expect(await tableValues(page, 'agents')).toEqual(agents);
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('sorts and searches the pages table, and downloads it as shown', async () => {
    const { page } = await watchedPage(context);
    await signInWithKey(page, t.baseUrl, s.adminKey);
    await page.goto(`${t.baseUrl}/analytics?from=${from}&to=${to}`);
    const section = page.getByRole('region', { name: 'Top pages' });
    await page.locator('#pages tbody tr').first().waitFor();
    await section.getByRole('button', { name: 'AI', exact: true }).click();
    const ai = (await tableValues(page, 'pages')).map((r) => Number(r[2]));
    expect(ai).toEqual([...ai].sort((a, b) => b - a));
    expect(await section.locator('th[aria-sort="descending"]').textContent()).toContain('AI');
    await section.getByRole('button', { name: 'Page', exact: true }).click();
    const paths = (await tableValues(page, 'pages')).map((r) => r[0] as string);
    expect(paths).toEqual([...paths].sort((a, b) => a.localeCompare(b)));
    await section.getByRole('searchbox').fill('api/');
    await expect.poll(async () => (await tableValues(page, 'pages')).map((r) => r[0])).toEqual(['/docs/api/analytics', '/docs/api/jobs']);
    const [download] = await Promise.all([page.waitForEvent('download'), section.getByRole('button', { name: 'Download CSV' }).click()]);
    const shown = await tableValues(page, 'pages');
    expect(fs.readFileSync(await download.path(), 'utf8')).toBe(`Page,Human,AI,Total\r\n${shown.map((r) => r.join(',')).join('\r\n')}\r\n`);
  });

  it('keeps a preset range in the URL across a reload; crawler requests are a series to switch on', async () => {
    const { page, problems } = await watchedPage(context);
    await signInWithKey(page, t.baseUrl, s.adminKey);
    await page.getByRole('navigation', { name: 'Date range' }).getByRole('link', { name: '7 days' }).click();
    await page.waitForURL(/\/analytics\?range=7d$/);
    await page.locator('#pages tbody tr').first().waitFor();
    await page.reload();
    await page.locator('#pages tbody tr').first().waitFor();
    expect(new URL(page.url()).search).toBe('?range=7d');
    const statement = (await page.getByTestId('range-statement').textContent()) as string;
    const [, first, last] = /^(\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2}) \(7 days/.exec(statement) ?? [];
    const data = await chartData(page);
    expect(data.dates).toHaveLength(7);
    expect([data.dates[0], data.dates[6]]).toEqual([first, last]);
    expect(await page.locator('figure.chart').getAttribute('data-crawlers-shown')).toBe('false');
    await page.getByLabel('Crawler requests').check();
    await expect.poll(() => page.locator('figure.chart').getAttribute('data-crawlers-shown')).toBe('true');
    // A broken custom range is explained, and the default range shown.
    await page.goto(`${t.baseUrl}/analytics?from=2026-13-01&to=yesterday`);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('must be days written YYYY-MM-DD');
    expect(problems).toEqual([]);
  });

  it('is usable at 375 px in dark mode: nothing wider than the screen, axe passes', async () => {
    const narrow = await chromium().newContext({ viewport: { width: 375, height: 800 }, colorScheme: 'dark' });
    try {
      const { page, problems } = await watchedPage(narrow);
      await signInWithKey(page, t.baseUrl, s.adminKey);
      await page.locator('#referrers tbody tr').first().waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
      expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(18, 20, 24)');
      expect(await seriousA11yViolations(page)).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await narrow.close();
    }
  });

  it('tells a project without events how to add the tracker', async () => {
    const empty = await t.seed({ name: 'New Docs' });
    const { page, problems } = await watchedPage(context);
    await signInWithKey(page, t.baseUrl, empty.adminKey);
    const state = page.getByTestId('no-events');
    await state.waitFor();
    const text = (await state.textContent()) as string;
    expect(text).toContain('No events yet');
    expect(text).toContain(`<script defer src="${t.baseUrl}/script.js" data-project="${empty.project.id}" data-key="ink_pub_…"></script>`);
    expect(text).toContain(`npx inkwell key create --project ${empty.project.id} --kind ingest`);
    expect(await page.locator('table').count()).toBe(0);
    expect(await seriousA11yViolations(page)).toEqual([]);
    // The check is not blind: a button without a name is a critical violation.
    await page.evaluate(() => document.body.append(document.createElement('button')));
    expect((await seriousA11yViolations(page)).map((v) => v.id)).toContain('button-name');
    expect(problems).toEqual([]);
  });
});
