// How the server serves the built dashboard (dist/dashboard, made by bin/build.js in the test setup): every
// dashboard page is index.html under a strict Content-Security-Policy, the hashed assets are cached for a
// year (gzipped when asked), nothing of it is in the OpenAPI document, and without a build `/` says how to
// make one (503) instead of failing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DASHBOARD_PATHS } from '../../src/dashboard/paths.ts';
import { DEFAULT_DASHBOARD_DIR } from '../../src/http/routes/dashboard.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';

const PAGES = DASHBOARD_PATHS.map((p) => p.replace(':id', 'job_0123456789ab'));

describeEachDialect('dashboard serving', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(dialect);
  });
  afterAll(async () => t?.close());

  it('answers every dashboard page with index.html under a strict policy', async () => {
    for (const page of [...PAGES, '/analytics?range=30d', '/signin?next=%2Fsettings']) {
      const res = await fetch(t.baseUrl + page);
      expect(res.status, page).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('x-request-id')).toBeTruthy();
      const html = await res.text();
      expect(html).toContain('<div id="app"></div>');
      // Every script is a file of the site: the policy would refuse an inline one.
      for (const tag of html.match(/<script\b[^>]*>/g) ?? []) expect(tag).toMatch(/src="\/assets\/app-[A-Z0-9]+\.js"/);
      expect(html).not.toMatch(/https?:\/\//);
    }
  });

  it('serves the hashed assets for a year, gzipped on request, and the JavaScript within its budget', async () => {
    const html = await (await fetch(`${t.baseUrl}/`)).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
    expect(assets.map((a) => path.extname(a)).sort()).toEqual(['.css', '.js']);
    for (const asset of assets) {
      const plain = await fetch(t.baseUrl + asset, { headers: { 'accept-encoding': 'identity' } });
      expect(plain.status).toBe(200);
      expect(plain.headers.get('content-type')).toMatch(asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(plain.headers.get('x-content-type-options')).toBe('nosniff');
      const body = Buffer.from(await plain.arrayBuffer());
      // Node's fetch decodes gzip itself; ask over a raw request to see the encoded bytes.
      const gz = await rawGet(t.baseUrl + asset, { 'accept-encoding': 'gzip' });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(zlib.gunzipSync(gz.body).equals(body)).toBe(true);
      if (asset.endsWith('.js')) {
        expect(gz.body.length).toBeLessThan(250 * 1024);
        console.log(`dashboard JavaScript: ${(gz.body.length / 1024).toFixed(1)} KB gzipped (${(body.length / 1024).toFixed(1)} KB minified)`);
      }
    }
    for (const bad of ['/assets/app-NOPE.js', '/assets/..%2Fpackage.json', '/assets/index.html']) {
      const res = await t.request('GET', bad);
      expect(res.status, bad).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
  });

  it('leaves the API, the docs, the tracker and the document as they were; keeps the pages out of the document', async () => {
    for (const p of ['/healthz', '/openapi.json', '/script.js', '/docs']) expect((await fetch(t.baseUrl + p)).status, p).toBe(200);
    const doc = (await t.request('GET', '/openapi.json')).body;
    for (const page of [...DASHBOARD_PATHS, '/jobs/{id}', '/assets/{file}']) expect(Object.keys(doc.paths)).not.toContain(page);
    const unknown = await t.request('GET', '/no-such-page');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
    const post = await t.request('POST', '/analytics', { body: {} });
    expect(post.status).toBe(405);
    expect(post.body.code).toBe('method_not_allowed');
  });
});

describeEachDialect('dashboard not built', (dialect) => {
  let t: TestApp;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inkwell-no-dashboard-'));
    t = await startTestApp(dialect, {}, {}, { dashboardDir: dir });
  });
  afterAll(async () => {
    await t?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('says how to build it (503, never a 500) until a build appears, then serves it', async () => {
    for (const page of ['/', '/analytics']) {
      const res = await fetch(t.baseUrl + page);
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('x-request-id')).toBeTruthy();
      const text = await res.text();
      expect(text).toContain('The dashboard is not built');
      expect(text).toContain('npm run build');
    }
    expect((await t.request('GET', '/assets/app-X.js')).status).toBe(404);
    expect((await fetch(`${t.baseUrl}/healthz`)).status).toBe(200);
    fs.cpSync(DEFAULT_DASHBOARD_DIR, dir, { recursive: true });
    const res = await fetch(`${t.baseUrl}/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<div id="app"></div>');
  });
});

async function rawGet(url: string, headers: Record<string, string>): Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const http = await import('node:http');
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}
