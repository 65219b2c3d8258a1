import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseClfTime, parseCombinedLine, parseJsonLine } from '../../src/analytics/ingest/logparse.ts';

const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

describe('parseCombinedLine', () => {
  it('parses the Apache documentation example', () => {
    expect(
      parseCombinedLine(
        '127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326 "http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)"',
      ),
    ).toEqual({
      ip: '127.0.0.1',
      timestamp: '2000-10-10T20:55:36.000Z',
      method: 'GET',
      path: '/apache_pb.gif',
      status: 200,
      referrer: 'http://www.example.com/start.html',
      userAgent: 'Mozilla/4.08 [en] (Win98; I ;Nav)',
    });
  });

  it('parses an nginx line with extra trailing fields, IPv6, "-" referrer and size', () => {
    const line = `2001:db8::7 - - [01/Jan/2025:00:00:01 +0000] "GET /docs/intro?x=1 HTTP/2.0" 304 - "-" "${UA}" "203.0.113.9" rt=0.002`;
    expect(parseCombinedLine(line)).toEqual({
      ip: '2001:db8::7',
      timestamp: '2025-01-01T00:00:01.000Z',
      method: 'GET',
      path: '/docs/intro?x=1',
      status: 304,
      userAgent: UA,
    });
  });

  it('turns a "-" user agent into an empty one (the request had none)', () => {
    expect(parseCombinedLine('10.0.0.1 - - [01/Jan/2025:00:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "-"')?.userAgent).toBe('');
  });

  it('accepts the common log format (no referrer, no user agent)', () => {
    expect(parseCombinedLine('10.0.0.1 - - [01/Jan/2025:00:00:00 +0000] "HEAD /a HTTP/1.1" 200 5')).toEqual({
      ip: '10.0.0.1',
      timestamp: '2025-01-01T00:00:00.000Z',
      method: 'HEAD',
      path: '/a',
      status: 200,
    });
  });

  it('unescapes Apache \\" and nginx \\x22 inside quoted fields', () => {
    const apache = parseCombinedLine('10.0.0.1 - - [01/Jan/2025:00:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "Agent \\"quoted\\" \\\\ end"');
    expect(apache?.userAgent).toBe('Agent "quoted" \\ end');
    const nginx = parseCombinedLine('10.0.0.1 - - [01/Jan/2025:00:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "Agent \\x22quoted\\x22"');
    expect(nginx?.userAgent).toBe('Agent "quoted"');
  });

  it('converts time zones to UTC across day boundaries', () => {
    expect(parseCombinedLine('h - - [01/Jan/2025:01:30:00 +0200] "GET /a HTTP/1.1" 200 1 "-" "x"')?.timestamp).toBe('2024-12-31T23:30:00.000Z');
    expect(parseCombinedLine('h - - [31/Dec/2024:22:30:00 -0330] "GET /a HTTP/1.1" 200 1 "-" "x"')?.timestamp).toBe('2025-01-01T02:00:00.000Z');
  });

  it.each([
    '',
    'garbage',
    '{"path":"/a"}',
    '10.0.0.1 - - [01/Jan/2025:00:00:00 +0000] "-" 400 0 "-" "-"',
    '10.0.0.1 - - [01/Jan/2025:00:00:00 +0000] "\\x16\\x03\\x01" 400 0 "-" "-"',
    '10.0.0.1 - - [01/Jan/2025:00:00:00 +0000] "GET /a b c HTTP/1.1" 200 0 "-" "-"',
    '10.0.0.1 - - [32/Jan/2025:00:00:00 +0000] "GET /a HTTP/1.1" 200 0 "-" "-"',
    '10.0.0.1 - - [29/Feb/2025:00:00:00 +0000] "GET /a HTTP/1.1" 200 0 "-" "-"',
    '10.0.0.1 - - [01/Foo/2025:00:00:00 +0000] "GET /a HTTP/1.1" 200 0 "-" "-"',
    '10.0.0.1 - - [01/Jan/2025:00:00:00] "GET /a HTTP/1.1" 200 0 "-" "-"',
    '10.0.0.1 - - [01/Jan/2025:00:00:00 +0000] "GET /a HTTP/1.1" 099 0 "-" "-"',
    '10.0.0.1 - - [01/Jan/2025:00:00:00 +0000] "GET /a HTTP/1.1" 200 0 "-" "unterminated',
  ])('rejects %j', (line) => {
    expect(parseCombinedLine(line)).toBeNull();
  });

  it('round-trips generated lines (Apache escaping, any offset)', () => {
    const MON = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    const esc = (s: string) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
    const pad = (n: number, w = 2) => String(n).padStart(w, '0');
    fc.assert(
      fc.property(
        fc.ipV4(),
        fc.date({ min: new Date('1971-01-01T00:00:00Z'), max: new Date('9998-12-31T00:00:00Z'), noInvalidDate: true }),
        fc.integer({ min: -14 * 60, max: 14 * 60 }),
        fc.constantFrom('GET', 'HEAD', 'POST'),
        fc.stringMatching(/^\/[A-Za-z0-9._~/%?=&-]{0,40}$/),
        fc.integer({ min: 100, max: 599 }),
        fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s !== '-' && !/[\n\r]/.test(s)),
        fc.string({ minLength: 1, maxLength: 80 }).filter((s) => s !== '-' && !/[\n\r]/.test(s)),
        (ip, date, offsetMin, method, path, status, referrer, ua) => {
          const t = new Date(Math.floor(date.getTime() / 1000) * 1000);
          const local = new Date(t.getTime() + offsetMin * 60_000);
          const off = `${offsetMin < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offsetMin) / 60))}${pad(Math.abs(offsetMin) % 60)}`;
          const stamp = `${pad(local.getUTCDate())}/${MON[local.getUTCMonth()]}/${pad(local.getUTCFullYear(), 4)}:${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())} ${off}`;
          const line = `${ip} - - [${stamp}] "${method} ${path} HTTP/1.1" ${status} 123 "${esc(referrer)}" "${esc(ua)}"`;
          expect(parseCombinedLine(line)).toEqual({ ip, timestamp: t.toISOString(), method, path, status, referrer, userAgent: ua });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('parseClfTime validates the calendar', () => {
    expect(parseClfTime('29/Feb/2024:12:00:00 +0000')).toBe('2024-02-29T12:00:00.000Z');
    expect(parseClfTime('29/Feb/2023:12:00:00 +0000')).toBeNull();
    expect(parseClfTime('01/Jan/2025:24:00:00 +0000')).toBeNull();
  });
});

describe('parseJsonLine', () => {
  it('reads the event shape', () => {
    const ev = {
      path: '/a',
      timestamp: '2025-01-01T00:00:00Z',
      userAgent: UA,
      ip: '10.0.0.1',
      visitorId: 'v1',
      accept: 'text/markdown',
      status: 200,
      method: 'GET',
      referrer: 'https://example.com/',
    };
    expect(parseJsonLine(JSON.stringify(ev))).toEqual(ev);
    expect(parseJsonLine(`  ${JSON.stringify({ url: 'https://x.example/a' })}\r`)).toEqual({ url: 'https://x.example/a' });
  });

  it('ignores unknown keys and nulls', () => {
    expect(parseJsonLine('{"path":"/a","host":"x","bytes":12,"referrer":null}')).toEqual({ path: '/a' });
  });

  it('converts numeric timestamps (ms or s) and numeric-string status', () => {
    expect(parseJsonLine('{"path":"/a","timestamp":1735689600000}')?.timestamp).toBe('2025-01-01T00:00:00.000Z');
    expect(parseJsonLine('{"path":"/a","timestamp":1735689600}')?.timestamp).toBe('2025-01-01T00:00:00.000Z');
    expect(parseJsonLine('{"path":"/a","status":"404"}')?.status).toBe(404);
  });

  it.each([
    '',
    '   ',
    'not json',
    '[{"path":"/a"}]',
    '{"path":"/a"',
    '"string"',
    '{"path":1}',
    '{"path":"/a","status":"ok"}',
    '{"path":"/a","timestamp":true}',
    '{"path":"/a","timestamp":1e300}',
    '{"path":"/a","userAgent":{"x":1}}',
  ])('rejects %j', (line) => {
    expect(parseJsonLine(line)).toBeNull();
  });
});
