// The tracker in a real browser against a running server: Chromium loads documentation pages served by a
// small local site that embeds the tracker exactly as docs/analytics.md shows, a person navigates (a link from
// a search page, an SPA pushState, the back button, an ordinary link), and the page views must land in the
// store with their path, referrer and class, and count in the visitors export.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { chromiumMissing, launchChromium } from '../helpers/browser.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { storedRows } from './stored-events.ts';

const missing = chromiumMissing();
if (missing) console.warn(`tracker browser tests skipped: ${missing}`);

interface StoredView {
  path: string;
  referrer: string | null;
  class: string;
  category: string | null;
  source: string;
  userAgent: string | null;
}

/** A documentation site and a search page, told apart by host name (docs.test, search.test) on one port. */
async function startSite(inkwell: string, seeded: Seeded): Promise<{ port: number; close: () => Promise<void> }> {
  const docsPage = (title: string) => `<!doctype html>
<html><head><meta charset="utf-8"><title>${title}</title>
<script defer src="${inkwell}/script.js" data-project="${seeded.project.id}" data-key="${seeded.ingestKey}"></script>
</head><body>
<h1 id="title">${title}</h1>
<a id="setup" href="/docs/setup">Setup (a full page load)</a>
<a id="api" href="/docs/api" data-spa>API (client-side route)</a>
<script>
  // The client-side router of a single-page docs site: links marked data-spa change the URL with pushState.
  document.addEventListener('click', function (e) {
    var a = e.target.closest('a[data-spa]');
    if (!a) return;
    e.preventDefault();
    history.pushState({}, '', a.getAttribute('href'));
    document.getElementById('title').textContent = a.textContent;
  });
</script>
</body></html>`;
  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').split(':')[0];
    const url = new URL(req.url ?? '/', 'http://x');
    let body: string | null = null;
    if (host === 'search.test' && url.pathname === '/search') {
      const port = (server.address() as AddressInfo).port;
      body = `<!doctype html><html><body><a id="result" href="http://docs.test:${port}/docs/intro?utm_source=search">Inkwell docs</a></body></html>`;
    } else if (host === 'docs.test' && url.pathname.startsWith('/docs/')) {
      body = docsPage(url.pathname.slice('/docs/'.length));
    }
    if (body === null) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function storedViews(t: TestApp): Promise<StoredView[]> {
  const db = t.testDb.db.kysely;
  // Events first, then the dictionaries: an event read has its entries committed before it.
  const events = await storedRows(db);
  const pathOf = new Map((await db.selectFrom('analytics_paths').select(['id', 'path']).execute()).map((r) => [Number(r.id), r.path]));
  const uaOf = new Map((await db.selectFrom('analytics_user_agents').select(['id', 'user_agent']).execute()).map((r) => [Number(r.id), r.user_agent]));
  // Storage order (seq, then time) is arrival order here: one beacon after another.
  return events.map((r) => ({
    path: pathOf.get(r.path_id) as string,
    referrer: r.referrer,
    class: r.class,
    category: r.category,
    source: r.source,
    userAgent: r.ua_id === null ? null : (uaOf.get(r.ua_id) ?? null),
  }));
}

/** Waits until the store holds `count` page views (the beacon is asynchronous); no fixed sleeps. */
async function waitForViews(t: TestApp, count: number): Promise<StoredView[]> {
  return vi.waitFor(
    async () => {
      const views = await storedViews(t);
      if (views.length < count) throw new Error(`${views.length} of ${count} page views stored so far`);
      return views;
    },
    { timeout: 60_000, interval: 25 },
  );
}

(missing ? describe.skip : describe)('tracker in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium({ hostMap: true });
  });
  afterAll(async () => {
    await browser?.close();
  });

  describeEachDialect('against a running server', (dialect) => {
    let t: TestApp;
    let seeded: Seeded;
    let site: { port: number; close: () => Promise<void> };
    let person: BrowserContext;
    let personUa: string;

    beforeAll(async () => {
      t = await startTestApp(dialect);
      seeded = await t.seed();
      site = await startSite(t.baseUrl, seeded);
      // Headless Chromium says "HeadlessChrome", which Inkwell rightly counts as a crawler; a person's Chrome
      // of the same version says "Chrome".
      const probe = await browser.newContext();
      const headlessUa = await (await probe.newPage()).evaluate(() => navigator.userAgent);
      await probe.close();
      expect(headlessUa).toContain('HeadlessChrome/');
      personUa = headlessUa.replace('HeadlessChrome/', 'Chrome/');
      person = await browser.newContext({ userAgent: personUa });
    });
    afterAll(async () => {
      await person?.close();
      await site?.close();
      await t?.close();
    });

    it('records page loads, SPA navigations and back-button views with their referrers, as a human', async () => {
      const docs = `http://docs.test:${site.port}`;
      const page = await person.newPage();
      await page.goto(`http://search.test:${site.port}/search?q=inkwell`);
      await page.click('#result');
      await page.waitForURL(`${docs}/docs/intro?utm_source=search`);
      // Cross-origin navigation: the default referrer policy leaves the search page's origin only.
      expect((await waitForViews(t, 1)).at(-1)).toMatchObject({ path: '/docs/intro', referrer: `http://search.test:${site.port}/` });

      await page.click('#api');
      await page.waitForURL(`${docs}/docs/api`);
      expect((await waitForViews(t, 2)).at(-1)).toMatchObject({ path: '/docs/api', referrer: `${docs}/docs/intro` });

      await page.goBack();
      await page.waitForURL(`${docs}/docs/intro?utm_source=search`);
      expect((await waitForViews(t, 3)).at(-1)).toMatchObject({ path: '/docs/intro', referrer: `${docs}/docs/api` });

      await page.click('#setup');
      await page.waitForURL(`${docs}/docs/setup`);
      const views = await waitForViews(t, 4);
      await page.close();

      // Query strings never leave the page; every view is a human one, sent through /v1/collect with the
      // browser's own User-Agent header.
      expect(views).toEqual(
        [
          { path: '/docs/intro', referrer: `http://search.test:${site.port}/` },
          { path: '/docs/api', referrer: `${docs}/docs/intro` },
          { path: '/docs/intro', referrer: `${docs}/docs/api` },
          { path: '/docs/setup', referrer: `${docs}/docs/intro` },
        ].map((v) => ({ ...v, class: 'human', category: null, source: 'collect', userAgent: personUa })),
      );

      const res = await t.request('GET', `/v1/analytics/${seeded.project.id}/visitors`, { key: seeded.adminKey });
      expect(res.status).toBe(200);
      expect(res.body.totals).toEqual({ human: 1, ai: 0, total: 1 });
      expect(res.body.visitors).toEqual([
        { path: '/docs/api', human: 1, ai: 0, total: 1 },
        { path: '/docs/intro', human: 1, ai: 0, total: 1 },
        { path: '/docs/setup', human: 1, ai: 0, total: 1 },
      ]);
    });

    it('stores a headless browser as a crawler, kept out of the visitors export', async () => {
      const before = (await storedViews(t)).length;
      const headless = await browser.newContext();
      const page = await headless.newPage();
      await page.goto(`http://docs.test:${site.port}/docs/headless`);
      const views = await waitForViews(t, before + 1);
      await headless.close();
      expect(views.at(-1)).toMatchObject({ path: '/docs/headless', class: 'crawler', category: 'other', source: 'collect' });
      expect(views.at(-1)?.userAgent).toContain('HeadlessChrome/');

      const res = await t.request('GET', `/v1/analytics/${seeded.project.id}/visitors`, { key: seeded.adminKey });
      expect(res.body.visitors.map((r: { path: string }) => r.path)).not.toContain('/docs/headless');
      expect(res.body.totals).toEqual({ human: 1, ai: 0, total: 1 });
    });
  });
});
