// Runs the served tracker source in a fresh V8 context with a minimal fake DOM and captures what it sends: the
// edge cases a browser cannot easily be made to produce (no sendBeacon, a refusing one, a throwing fetch, missing
// attributes, file: pages). The same script in real Chromium against a running server: tracker-browser.test.ts.
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { TRACKER_JS } from '../../src/analytics/ingest/tracker.ts';

interface Sent {
  via: 'beacon' | 'fetch';
  url: string;
  body: unknown;
  init?: Record<string, unknown>;
}

function browser(opts: {
  attrs?: Record<string, string>;
  href?: string;
  referrer?: string;
  beacon?: 'ok' | 'refuse' | 'missing';
  fetchThrows?: boolean;
  currentScript?: boolean;
}) {
  const sent: Sent[] = [];
  const touched: string[] = [];
  const listeners: Record<string, (() => void)[]> = {};
  const attrs = opts.attrs ?? { 'data-project': 'prj_123', 'data-key': 'ink_pub_abc' };
  const script = { src: 'https://inkwell.example.com/script.js?v=1', getAttribute: (n: string) => attrs[n] ?? null };
  const location = { href: '', pathname: '', protocol: '' };
  const go = (url: string) => {
    const u = new URL(url, location.href || undefined);
    location.href = u.href;
    location.pathname = u.pathname;
    location.protocol = u.protocol;
  };
  go(opts.href ?? 'https://docs.example.com/docs/intro?token=secret#part');
  const history = {
    pushState: (_s: unknown, _t: string, url?: string) => {
      if (url) go(url);
    },
    replaceState: (_s: unknown, _t: string, url?: string) => {
      if (url) go(url);
    },
  };
  const document = {
    currentScript: opts.currentScript === false ? null : script,
    referrer: opts.referrer ?? 'https://www.google.com/search?q=inkwell',
    querySelector: (sel: string) => (sel.includes('data-key') ? script : null),
  };
  Object.defineProperty(document, 'cookie', {
    get: () => touched.push('cookie'),
    set: () => touched.push('cookie'),
  });
  const navigator: Record<string, unknown> = {};
  if (opts.beacon !== 'missing') {
    navigator.sendBeacon = (url: string, body: unknown) => {
      if (opts.beacon === 'refuse') return false;
      sent.push({ via: 'beacon', url, body });
      return true;
    };
  }
  const window: Record<string, unknown> = {
    location,
    history,
    navigator,
    document,
    addEventListener: (type: string, fn: () => void) => {
      listeners[type] = [...(listeners[type] ?? []), fn];
    },
    fetch: (url: string, init: Record<string, unknown>) => {
      if (opts.fetchThrows) throw new Error('offline');
      sent.push({ via: 'fetch', url, body: init.body, init });
      return Promise.resolve({ ok: true });
    },
  };
  for (const name of ['localStorage', 'sessionStorage', 'indexedDB']) {
    Object.defineProperty(window, name, { get: () => touched.push(name) });
  }
  const context = vm.createContext({ window, document, URL, JSON });
  const run = () => vm.runInContext(TRACKER_JS, context);
  const h = history as Record<string, (...a: unknown[]) => void>;
  return {
    sent,
    touched,
    run,
    push: (url: string) => h.pushState({}, '', url),
    replace: (url: string) => h.replaceState({}, '', url),
    back: (url: string) => {
      go(url);
      for (const fn of listeners.popstate ?? []) fn();
    },
    events: () => sent.map((s) => JSON.parse(String(s.body)) as { projectId: string; key: string; events: { path: string; referrer?: string }[] }),
  };
}

describe('tracker script', () => {
  it('sends a page view on load to {script origin}/v1/collect as a text body', () => {
    const b = browser({});
    b.run();
    expect(b.sent).toHaveLength(1);
    expect(b.sent[0].via).toBe('beacon');
    expect(b.sent[0].url).toBe('https://inkwell.example.com/v1/collect');
    expect(typeof b.sent[0].body).toBe('string');
    expect(b.events()[0]).toEqual({ projectId: 'prj_123', key: 'ink_pub_abc', events: [{ path: '/docs/intro', referrer: 'https://www.google.com/search' }] });
  });

  it('never sends query strings or fragments, and omits an empty referrer', () => {
    const b = browser({ referrer: '' });
    b.run();
    const body = String(b.sent[0].body);
    expect(body).not.toContain('token');
    expect(body).not.toContain('#');
    expect(b.events()[0].events[0]).toEqual({ path: '/docs/intro' });
  });

  it('tracks SPA navigations once per path change, with the previous page as referrer', () => {
    const b = browser({});
    b.run();
    b.push('/docs/setup?step=2');
    b.replace('/docs/setup?step=3'); // same path: not a new view
    b.replace('/docs/setup#x');
    b.push('/docs/api');
    b.back('https://docs.example.com/docs/setup');
    expect(b.events().map((e) => e.events[0])).toEqual([
      { path: '/docs/intro', referrer: 'https://www.google.com/search' },
      { path: '/docs/setup', referrer: 'https://docs.example.com/docs/intro' },
      { path: '/docs/api', referrer: 'https://docs.example.com/docs/setup' },
      { path: '/docs/setup', referrer: 'https://docs.example.com/docs/api' },
    ]);
  });

  it('stores nothing on the device: no cookies, no storage', () => {
    const b = browser({});
    b.run();
    b.push('/docs/next');
    expect(b.touched).toEqual([]);
    expect(b.events().every((e) => e.events.every((ev) => !('visitorId' in ev)))).toBe(true);
  });

  it('falls back to fetch with keepalive when sendBeacon is missing or refuses', () => {
    for (const beacon of ['missing', 'refuse'] as const) {
      const b = browser({ beacon });
      b.run();
      expect(b.sent).toHaveLength(1);
      expect(b.sent[0].via).toBe('fetch');
      expect(b.sent[0].url).toBe('https://inkwell.example.com/v1/collect');
      expect(b.sent[0].init).toMatchObject({ method: 'POST', keepalive: true, credentials: 'omit', headers: { 'Content-Type': 'text/plain;charset=UTF-8' } });
    }
  });

  it('never throws into the page', () => {
    const b = browser({ beacon: 'missing', fetchThrows: true });
    expect(() => b.run()).not.toThrow();
    expect(() => b.push('/x')).not.toThrow();
  });

  it('sends nothing without data-project or data-key, or on file: pages', () => {
    const partial: Record<string, string>[] = [{ 'data-key': 'ink_pub_abc' }, { 'data-project': 'prj_123' }, {}];
    for (const attrs of partial) {
      const b = browser({ attrs });
      b.run();
      expect(b.sent).toEqual([]);
    }
    const f = browser({ href: 'file:///home/me/docs/index.html' });
    f.run();
    expect(f.sent).toEqual([]);
  });

  it('honours data-api and finds its tag without document.currentScript', () => {
    const b = browser({ attrs: { 'data-project': 'prj_1', 'data-key': 'ink_pub_1', 'data-api': 'https://collect.example.net/' }, currentScript: false });
    b.run();
    expect(b.sent[0].url).toBe('https://collect.example.net/v1/collect');
  });

  it('is small', () => {
    expect(TRACKER_JS.length).toBeLessThan(3000);
  });
});
