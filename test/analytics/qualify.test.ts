import { describe, expect, it } from 'vitest';
import type { TrafficClass } from '../../src/analytics/classify/classify.ts';
import { isQualifyingView } from '../../src/analytics/classify/qualify.ts';

const view = (over: Partial<{ method: string | null; status: number | null; path: string; class: TrafficClass }> = {}) =>
  isQualifyingView({ method: 'GET', status: 200, path: '/docs/a', class: 'human', ...over });

describe('isQualifyingView', () => {
  it('GET 2xx page views by humans and ai qualify', () => {
    expect(view()).toBe(true);
    expect(view({ class: 'ai' })).toBe(true);
  });

  it('crawlers never qualify', () => {
    expect(view({ class: 'crawler' })).toBe(false);
  });

  it('method GET or absent; case-insensitive; anything else does not', () => {
    expect(view({ method: null })).toBe(true);
    expect(isQualifyingView({ path: '/a', class: 'human' })).toBe(true);
    expect(view({ method: 'get' })).toBe(true);
    for (const m of ['HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']) expect(view({ method: m }), m).toBe(false);
  });

  it('status 2xx or 304 or absent', () => {
    for (const s of [200, 201, 204, 206, 299, 304]) expect(view({ status: s }), String(s)).toBe(true);
    expect(view({ status: null })).toBe(true);
    for (const s of [100, 199, 300, 301, 302, 303, 307, 308, 400, 401, 403, 404, 410, 499, 500, 503]) expect(view({ status: s }), String(s)).toBe(false);
  });

  it('static assets do not qualify; pages, Markdown, llms.txt and PDFs do', () => {
    for (const p of ['/app.js', '/style.css', '/logo.png', '/logo.svg', '/favicon.ico', '/font.woff2', '/app.js.map', '/a.css?v=1'])
      expect(view({ path: p }), p).toBe(false);
    for (const p of ['/', '/docs/a', '/docs/a.md', '/llms.txt', '/guide.pdf']) expect(view({ path: p }), p).toBe(true);
  });
});
