import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  classify,
  EMPTY_UA_RULE,
  ISBOT_RULE,
  MARKDOWN_RULE,
  matchRule,
  parseAccept,
  prefersMarkdown,
  RULES_VERSION,
} from '../../src/analytics/classify/classify.ts';
import { USER_AGENT_RULES } from '../../src/analytics/classify/rules.ts';

const CHROME_WIN = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';
const BROWSERS = [
  CHROME_WIN,
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36 Edg/124.0.2478.67',
  'Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/124.0.6367.88 Mobile/15E148 Safari/604.1',
];
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

describe('the rules data file', () => {
  it('has unique names, compilable patterns, samples, and a category exactly for crawlers', () => {
    const names = new Set<string>();
    for (const r of USER_AGENT_RULES) {
      expect(names.has(r.name), `duplicate rule name ${r.name}`).toBe(false);
      names.add(r.name);
      expect(() => new RegExp(r.pattern, 'i')).not.toThrow();
      expect(r.samples.length, r.name).toBeGreaterThan(0);
      expect(r.source.length, r.name).toBeGreaterThan(0);
      if (r.class === 'ai') expect(r.category, r.name).toBeNull();
      else expect(['search', 'training', 'other']).toContain(r.category);
      if (r.generic) expect(r.class, r.name).toBe('crawler');
    }
    for (const reserved of [MARKDOWN_RULE, EMPTY_UA_RULE, ISBOT_RULE]) expect(names.has(reserved)).toBe(false);
  });

  it('orders user-triggered agents before the same vendor crawlers, and generic clients last', () => {
    const at = (name: string) => {
      const i = USER_AGENT_RULES.findIndex((r) => r.name === name);
      expect(i, name).toBeGreaterThanOrEqual(0);
      return i;
    };
    expect(at('ChatGPT-User')).toBeLessThan(at('GPTBot'));
    expect(at('ChatGPT-User')).toBeLessThan(at('OAI-SearchBot'));
    expect(at('Claude-Code')).toBeLessThan(at('Claude-User'));
    expect(at('Claude-User')).toBeLessThan(at('ClaudeBot'));
    expect(at('Claude-User')).toBeLessThan(at('Claude-SearchBot'));
    expect(at('Perplexity-User')).toBeLessThan(at('PerplexityBot'));
    expect(at('DuckAssistBot')).toBeLessThan(at('DuckDuckBot'));
    expect(at('Meta-ExternalFetcher')).toBeLessThan(at('Meta-ExternalAgent'));
    const firstGeneric = USER_AGENT_RULES.findIndex((r) => r.generic);
    expect(USER_AGENT_RULES.slice(firstGeneric).every((r) => r.generic)).toBe(true);
  });

  it('RULES_VERSION is a stable hex digest', () => {
    expect(RULES_VERSION).toMatch(/^[0-9a-f]{16}$/);
  });
});

// One test per entry: every sample classifies to that entry (fails when an earlier entry shadows it).
describe.each(USER_AGENT_RULES.map((r) => [r.name, r] as const))('rule %s', (_name, rule) => {
  it(`classifies each sample as ${rule.class}${rule.category ? `/${rule.category}` : ''}`, () => {
    for (const ua of rule.samples) {
      expect(classify({ userAgent: ua, path: '/docs/getting-started' }), ua).toEqual({ class: rule.class, category: rule.category, rule: rule.name });
    }
  });
});

describe('classify: humans and edge cases', () => {
  it('real browsers are human, also with the browser Accept header', () => {
    for (const ua of BROWSERS) {
      expect(classify({ userAgent: ua, path: '/docs/a' }), ua).toEqual({ class: 'human', category: null, rule: null });
      expect(classify({ userAgent: ua, path: '/docs/a', accept: BROWSER_ACCEPT }).class, ua).toBe('human');
    }
  });

  it('a missing user agent is human unless it fetches Markdown', () => {
    expect(classify({ path: '/a' })).toEqual({ class: 'human', category: null, rule: null });
    expect(classify({ userAgent: null, path: '/a' }).class).toBe('human');
    expect(classify({ userAgent: null, path: '/a.md' })).toEqual({ class: 'ai', category: null, rule: MARKDOWN_RULE });
  });

  it('an empty user agent (or "-" from a log) is a crawler unless it fetches Markdown', () => {
    for (const ua of ['', '   ', '-']) {
      expect(classify({ userAgent: ua, path: '/a' })).toEqual({ class: 'crawler', category: 'other', rule: EMPTY_UA_RULE });
      expect(classify({ userAgent: ua, path: '/a', accept: 'text/markdown' }).class).toBe('ai');
    }
  });

  it('bots unknown to the data file fall back to isbot as crawler/other', () => {
    const ua = 'Mozilla/5.0 (compatible; ExampleCrawler/1.0; +https://example.com/bot)';
    expect(matchRule(ua)).toBeNull();
    expect(classify({ userAgent: ua, path: '/a' })).toEqual({ class: 'crawler', category: 'other', rule: ISBOT_RULE });
  });

  it('handles very long user agents without throwing', () => {
    const long = `${CHROME_WIN} ${'x'.repeat(20000)}`;
    expect(classify({ userAgent: long, path: '/a' }).class).toBe('human');
    expect(classify({ userAgent: `${'y'.repeat(5000)} GPTBot/1.1`, path: '/a' }).class).toBe('crawler');
  });

  it('is consistent for any input', () => {
    fc.assert(
      fc.property(fc.option(fc.string({ maxLength: 300 })), fc.string({ maxLength: 100 }), fc.option(fc.string({ maxLength: 100 })), (ua, path, accept) => {
        const c = classify({ userAgent: ua, path, accept });
        if (c.class === 'human') expect(c).toEqual({ class: 'human', category: null, rule: null });
        if (c.class === 'ai') expect(c.category).toBeNull();
        if (c.class !== 'human') expect(typeof c.rule).toBe('string');
        if (c.class === 'crawler') expect(['search', 'training', 'other']).toContain(c.category);
      }),
      { numRuns: 300 },
    );
  });
});

describe('classify: Markdown fetches', () => {
  it('a .md/.mdx path from a non-crawler is ai, including browsers', () => {
    for (const path of ['/docs/a.md', '/docs/a.mdx', '/docs/A.MD', 'https://docs.example.com/a.md?x=1', '/a.md#top']) {
      expect(classify({ userAgent: CHROME_WIN, path }), path).toEqual({ class: 'ai', category: null, rule: MARKDOWN_RULE });
    }
    expect(classify({ userAgent: CHROME_WIN, path: '/a.md/' }).class).toBe('human');
    expect(classify({ userAgent: CHROME_WIN, path: '/readme.mdown' }).class).toBe('human');
  });

  it('Accept preferring text/markdown from a non-crawler is ai', () => {
    expect(classify({ userAgent: CHROME_WIN, path: '/a', accept: 'text/markdown, text/html;q=0.9' }).class).toBe('ai');
    expect(classify({ userAgent: CHROME_WIN, path: '/a', accept: 'text/html, text/markdown;q=0.9' }).class).toBe('human');
  });

  it('generic HTTP clients and headless browsers fetching Markdown are ai; otherwise crawler/other', () => {
    for (const r of USER_AGENT_RULES.filter((x) => x.generic)) {
      for (const ua of r.samples) {
        expect(classify({ userAgent: ua, path: '/docs/a.md' }), ua).toEqual({ class: 'ai', category: null, rule: MARKDOWN_RULE });
        expect(classify({ userAgent: ua, path: '/docs/a', accept: 'text/markdown' }).class, ua).toBe('ai');
        expect(classify({ userAgent: ua, path: '/docs/a' }), ua).toEqual({ class: 'crawler', category: 'other', rule: r.name });
      }
    }
  });

  it('an unknown bot (isbot) fetching Markdown is ai: it is not a recognised crawler', () => {
    expect(classify({ userAgent: 'SomeAgentBot/0.1', path: '/x.md' }).class).toBe('ai');
  });

  it('named crawlers stay crawlers when they fetch Markdown', () => {
    for (const r of USER_AGENT_RULES.filter((x) => x.class === 'crawler' && !x.generic)) {
      const ua = r.samples[0];
      expect(classify({ userAgent: ua, path: '/docs/a.md', accept: 'text/markdown' }), ua).toEqual({ class: 'crawler', category: r.category, rule: r.name });
    }
  });

  it('named AI agents keep their own rule for Markdown fetches', () => {
    const ua = USER_AGENT_RULES.find((r) => r.name === 'ChatGPT-User')!.samples[0];
    expect(classify({ userAgent: ua, path: '/a.md' }).rule).toBe('ChatGPT-User');
  });
});

describe('Accept negotiation', () => {
  it.each([
    ['text/markdown', true],
    ['text/x-markdown', true],
    ['TEXT/MARKDOWN', true],
    ['text/markdown; charset=utf-8', true],
    ['text/markdown, text/html, */*', true],
    ['text/markdown;q=1.0, text/html;q=0.9', true],
    ['text/html;q=0.5, text/markdown;q=0.6', true],
    ['*/*, text/markdown', true],
    ['text/plain;q=0.5, text/markdown', true],
    ['text/html, text/markdown', false],
    ['text/html, text/markdown;q=0.9', false],
    ['text/plain, text/markdown;q=0.9', false],
    ['text/markdown;q=0', false],
    ['text/markdown;q=0.000', false],
    ['text/*', false],
    ['*/*', false],
    [BROWSER_ACCEPT, false],
    ['application/json', false],
    ['', false],
    ['garbage', false],
    ['text/markdown;q=abc, text/html;q=0.1', false],
    ['text/markdown;q=2', false],
  ])('%j prefers Markdown: %s', (accept, expected) => {
    expect(prefersMarkdown(accept)).toBe(expected);
  });

  it('parses q-values, ignores malformed ranges', () => {
    expect(parseAccept('text/html;level=1;q=0.5, bad, */*;q=0.1')).toEqual([
      { type: 'text', subtype: 'html', q: 0.5, index: 0 },
      { type: '*', subtype: '*', q: 0.1, index: 2 },
    ]);
  });

  it('never throws on arbitrary headers', () => {
    fc.assert(fc.property(fc.string({ maxLength: 200 }), (a) => typeof prefersMarkdown(a) === 'boolean'));
  });
});
