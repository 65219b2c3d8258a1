import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isMarkdownPath, isStaticAsset, MAX_PATH_LENGTH, normalizePath } from '../../src/analytics/classify/normalize.ts';

describe('normalizePath', () => {
  it.each([
    ['/', '/'],
    ['/docs/intro', '/docs/intro'],
    ['/docs/intro/', '/docs/intro'],
    ['/docs/intro///', '/docs/intro'],
    ['//docs//intro', '/docs/intro'],
    ['docs/intro', '/docs/intro'],
    ['/docs/intro?utm_source=x#install', '/docs/intro'],
    ['/docs/intro#a?b', '/docs/intro'],
    ['https://docs.example.com/docs/intro/?q=1', '/docs/intro'],
    ['HTTP://Docs.Example.com:8080/a', '/a'],
    ['https://user:pw@docs.example.com/a', '/a'],
    ['https://docs.example.com', '/'],
    ['https://docs.example.com?x=1', '/'],
    ['/docs/intro.md', '/docs/intro'],
    ['/docs/intro.mdx', '/docs/intro'],
    ['/docs/intro.MD', '/docs/intro'],
    ['/docs/intro.md?raw=1', '/docs/intro'],
    ['/docs/intro.md/', '/docs/intro'],
    ['/index.md', '/index'],
    ['/.md', '/'],
    ['/a.md.md', '/a'],
    ['/docs/intro.mdown', '/docs/intro.mdown'],
    ['/caf%C3%A9', '/café'],
    ['/caf%c3%a9/', '/café'],
    ['/a%20b', '/a b'],
    ['/a%2Fb', '/a/b'],
    ['/a%2F%2Fb', '/a/b'],
    ['/a%3Fb', '/a%3Fb'],
    ['/a%3fb', '/a%3Fb'],
    ['/a%23b', '/a%23b'],
    ['/a%25b', '/a%25b'],
    ['/a%2541', '/a%2541'],
    ['/100%', '/100%25'],
    ['/%zz', '/%25zz'],
    ['/%FF', '/%FF'],
    ['/%C3', '/%C3'],
    ['/a%00b', '/a%00b'],
    ['/a%0Ab', '/a%0Ab'],
    ['/a\nb', '/a%0Ab'],
    ['/docs/../x', '/docs/../x'],
    ['/日本語/', '/日本語'],
  ])('%j → %j', (input, expected) => {
    expect(normalizePath(input)).toBe(expected);
  });

  it.each(['', '?q=1', '#top', '?'])('%j is not a path (null)', (input) => {
    expect(normalizePath(input)).toBeNull();
  });

  it('rejects results longer than 2,048 characters and accepts exactly 2,048', () => {
    const ok = `/${'a'.repeat(MAX_PATH_LENGTH - 1)}`;
    expect(normalizePath(ok)).toBe(ok);
    expect(normalizePath(`${ok}b`)).toBeNull();
    expect(normalizePath(`${ok}?${'q'.repeat(3000)}`)).toBe(ok);
    expect(normalizePath(`/${'%61'.repeat(MAX_PATH_LENGTH - 1)}`)).toBe(ok);
    expect(normalizePath('/a'.repeat(100_000))).toBeNull();
  });

  // Inputs built from the characters that matter to the rules.
  const pathish = fc
    .array(
      fc.oneof(
        fc.constantFrom(
          '/',
          '//',
          '%',
          '%2F',
          '%2f',
          '%25',
          '%3F',
          '%23',
          '%C3%A9',
          '%FF',
          '%E2%82',
          '.md',
          '.mdx',
          '.MD',
          '?',
          '#',
          ' ',
          '\t',
          'https://h.example',
          '..',
          '.',
        ),
        fc.string({ maxLength: 4 }),
        fc.stringMatching(/^[0-9a-fA-F]{1,2}$/),
      ),
      { maxLength: 25 },
    )
    .map((parts) => parts.join(''));

  it('is idempotent, bounded, and yields a clean absolute path', () => {
    fc.assert(
      fc.property(fc.oneof(pathish, fc.string({ unit: 'binary', maxLength: 60 }), fc.webUrl({ withQueryParameters: true, withFragments: true })), (input) => {
        const out = normalizePath(input);
        if (out === null) return;
        expect(normalizePath(out)).toBe(out);
        expect(out.length).toBeLessThanOrEqual(MAX_PATH_LENGTH);
        expect(out.startsWith('/')).toBe(true);
        expect(out).not.toMatch(/[?#]/);
        expect(out).not.toContain('//');
        expect(out === '/' || !out.endsWith('/')).toBe(true);
        expect(/\.mdx?$/i.test(out)).toBe(false);
        // every remaining '%' starts an upper-case escape
        expect(out.replace(/%[0-9A-F]{2}/g, '')).not.toContain('%');
        // no raw control characters
        expect([...out].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });

  it('a URL and its path normalise the same', () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), (url) => {
        const path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
        expect(normalizePath(url)).toBe(path === '' || /^[?#]/.test(path) ? '/' : normalizePath(path));
      }),
    );
  });
});

describe('isMarkdownPath', () => {
  it.each([
    ['/a.md', true],
    ['/a.mdx', true],
    ['/a.MDX', true],
    ['/a.md?x=1', true],
    ['https://h.example/a.md#x', true],
    ['/a.md/', false],
    ['/a', false],
    ['/a.markdown', false],
    ['/md', false],
    ['/a.md.html', false],
  ])('%j → %s', (p, expected) => {
    expect(isMarkdownPath(p)).toBe(expected);
  });
});

describe('isStaticAsset', () => {
  it.each([
    '/app.js',
    '/app.mjs',
    '/style.css',
    '/logo.png',
    '/logo.SVG',
    '/favicon.ico',
    '/font.woff2',
    '/app.js.map',
    '/img.webp',
    '/a.js?v=3',
    'https://h.example/x.css#y',
  ])('%j is a static asset', (p) => {
    expect(isStaticAsset(p)).toBe(true);
  });
  it.each(['/', '/docs/intro', '/docs/intro.md', '/llms.txt', '/guide.pdf', '/openapi.json', '/sitemap.xml', '/js', '/docs/css-guide', '/a.js/'])(
    '%j is a page',
    (p) => {
      expect(isStaticAsset(p)).toBe(false);
    },
  );
});
