import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { combinedBytesState, parseClfTime, parseCombinedBytes, parseCombinedLine, parseJsonLine } from '../../src/analytics/import/logparse.ts';

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

describe('parseCombinedBytes', () => {
  /** The byte parser on a line's UTF-8 bytes (placed inside a larger buffer, as the splitter gives them). */
  const bytes = (line: string, state = combinedBytesState()) => {
    const b = Buffer.from(`xx\n${line}\nyy`);
    return parseCombinedBytes(b, 3, b.length - 3, state);
  };
  const VALID = '203.0.113.9 - - [01/Jan/2025:00:00:01 +0100] "GET /docs/a?x=1 HTTP/1.1" 200 5120 "https://www.google.com/" "Mozilla/5.0 (X11) Firefox/125.0"';

  it('reads a line as parseCombinedLine does, and sets the time in ms', () => {
    const state = combinedBytesState();
    expect(bytes(VALID, state)).toEqual(parseCombinedLine(VALID));
    expect(state.ms).toBe(Date.parse('2024-12-31T23:00:01Z'));
  });

  it('leaves lines with non-ASCII bytes or a backslash to parseCombinedLine (undefined)', () => {
    expect(bytes(VALID.replace('/docs/a', '/docs/é'))).toBeUndefined();
    expect(bytes(VALID.replace('Firefox', 'Fire\\"fox'))).toBeUndefined();
    expect(bytes(`\ufeff${VALID}`)).toBeUndefined();
  });

  it('finds a backslash in any line of a buffer, whatever order its lines are read in', () => {
    const b = Buffer.from(`${VALID}\n${VALID.replace('Firefox', 'Fire\\"fox')}\n${VALID}`);
    const [l1, l2] = [VALID.length, VALID.length + 1 + VALID.length + 2];
    const state = combinedBytesState();
    expect(parseCombinedBytes(b, l1 + 1, l2, state)).toBeUndefined();
    expect(parseCombinedBytes(b, 0, l1, state)).toEqual(parseCombinedLine(VALID));
    expect(parseCombinedBytes(b, l1 + 1, l2, state)).toBeUndefined();
    expect(parseCombinedBytes(b, l2 + 1, b.length, state)).toEqual(parseCombinedLine(VALID));
  });

  it('in a buffer with non-ASCII bytes on some lines, leaves only those lines to parseCombinedLine', () => {
    const other = VALID.replace('/docs/a', '/docs/é');
    const b = Buffer.from(`${VALID}\n${other}\n${VALID}`);
    const l1 = VALID.length;
    const l2 = l1 + 1 + Buffer.byteLength(other);
    const state = combinedBytesState();
    expect(parseCombinedBytes(b, 0, l1, state)).toEqual(parseCombinedLine(VALID));
    expect(parseCombinedBytes(b, l1 + 1, l2, state)).toBeUndefined();
    expect(parseCombinedBytes(b, l2 + 1, b.length, state)).toEqual(parseCombinedLine(VALID));
    // An ASCII buffer after it is checked as a whole again.
    expect(bytes(VALID, state)).toEqual(parseCombinedLine(VALID));
  });

  it('reuses the previous time only for the same time field', () => {
    const state = combinedBytesState();
    bytes(VALID, state);
    const next = VALID.replace(':01 +0100', ':02 +0100');
    expect(bytes(next, state)?.timestamp).toBe('2024-12-31T23:00:02.000Z');
    expect(bytes(VALID.replace('+0100', '+0200'), state)?.timestamp).toBe('2024-12-31T22:00:01.000Z');
    expect(bytes(VALID.replace('01/Jan', '32/Jan'), state)).toBeNull();
  });

  it('agrees with parseCombinedLine on runs of lines read through one state (times on the same day, offset or not)', () => {
    const pad = (n: number, w: number) => String(n).padStart(w, '0');
    const MONTHS = ['Jan', 'Feb', 'Mar', 'Dec', 'jAN', 'Foo'];
    // Few dates and offsets, so that successive lines often share them; the time of day and its bounds vary.
    const time = fc
      .record({
        d: fc.constantFrom(0, 1, 28, 29, 31, 32),
        mon: fc.constantFrom(...MONTHS),
        y: fc.constantFrom(1969, 2024, 2025),
        hh: fc.constantFrom(0, 12, 23, 24),
        mm: fc.constantFrom(0, 59, 60),
        ss: fc.constantFrom(0, 1, 59, 60, 61),
        sign: fc.constantFrom('+', '-'),
        oh: fc.constantFrom(0, 1, 23, 24),
        om: fc.constantFrom(0, 30, 60),
      })
      .map((t) => `${pad(t.d, 2)}/${t.mon}/${pad(t.y, 4)}:${pad(t.hh, 2)}:${pad(t.mm, 2)}:${pad(t.ss, 2)} ${t.sign}${pad(t.oh, 2)}${pad(t.om, 2)}`);
    const line = fc.oneof(
      { weight: 8, arbitrary: time.map((t) => `10.0.0.1 - - [${t}] "GET /a HTTP/1.1" 200 5 "-" "ua"`) },
      { weight: 1, arbitrary: time.map((t) => `10.0.0.1 - - [${t.slice(0, 25)}] "GET /a HTTP/1.1" 200 5`) },
      { weight: 1, arbitrary: time.map((t) => `10.0.0.1 - - [${t.replace(':', '/')}] "GET /a HTTP/1.1" 200 5`) },
    );
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 30 }), (lines) => {
        const state = combinedBytesState();
        // Without timestamps (the import's state): the same events less their timestamp, the same ms.
        const bare = combinedBytesState(false);
        for (const l of lines) {
          const got = bytes(l, state);
          const want = parseCombinedLine(l);
          expect(got).toEqual(want);
          if (want?.timestamp !== undefined) expect(state.ms).toBe(Date.parse(want.timestamp));
          const noIso = bytes(l, bare);
          if (want === null || want === undefined) expect(noIso).toBe(want);
          else {
            const { timestamp, ...rest } = want;
            expect(noIso).toEqual(rest);
            expect(Object.keys(noIso ?? {})).toEqual(Object.keys(rest));
            expect(bare.ms).toBe(state.ms);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    '',
    ' ',
    VALID.replace('"GET /docs/a?x=1 HTTP/1.1"', '"GET /a b c"'),
    VALID.replace('"GET /docs/a?x=1 HTTP/1.1"', '"-"'),
    VALID.replace('"GET /docs/a?x=1 HTTP/1.1"', '"GET  /a"'),
    VALID.replace('"GET', '"G3T'),
    VALID.replace(' 200 ', ' 099 '),
    VALID.replace(' 200 ', ' 2000 '),
    VALID.replace(' 5120 ', ' 51x '),
    VALID.replace('+0100', '+2400'),
    VALID.replace('- - [', '- -\t['),
    VALID.replace('"Mozilla/5.0 (X11) Firefox/125.0"', '"unterminated'),
    `${VALID}x`,
    VALID.slice(0, 60),
  ])('agrees with parseCombinedLine on %j', (line) => {
    const b = bytes(line);
    expect(b === undefined ? 'undefined' : b).toEqual(parseCombinedLine(line) ?? null);
  });

  it('agrees with parseCombinedLine on generated ASCII lines, valid and broken (quotes, brackets, tabs, spaces, digits)', () => {
    const token = fc.constantFrom(
      '203.0.113.9',
      '-',
      ' ',
      '  ',
      '\t',
      '[',
      ']',
      '"',
      '" "',
      '[01/Jan/2025:00:00:01 +0000]',
      '[29/Feb/2024:23:59:60 -0330]',
      'GET',
      'get',
      ' /a',
      ' https://x.example/a#b',
      ' HTTP/1.1',
      ' 200 ',
      ' 304 - ',
      '0',
      'Mozilla/5.0 (X; Y)',
      'x',
      '\u0001',
      '\u007f',
    );
    const valid = fc.record({
      ip: fc.constantFrom('10.0.0.1', '-', '2001:db8::1'),
      method: fc.constantFrom('GET', 'get', 'GEt', 'GETS', 'GE', 'HEAD', 'head', 'HEADS', 'POST', 'PoST', 'POS', 'PUT', 'OPTIONS'),
      target: fc.stringMatching(/^[!#-~]{1,20}$/),
      proto: fc.constantFrom(' HTTP/1.1', '', ' '),
      status: fc.integer({ min: 0, max: 999 }).map((n) => String(n).padStart(3, '0')),
      size: fc.constantFrom('0', '-', '123'),
      tail: fc.constantFrom('', ' "-" "-"', ' "" "ua"', ' "https://r.example/" "UA 1.0" extra', ' "r" "u"\t', ' "r"', ' "r" "u"x', '  '),
    });
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(token, { maxLength: 24 }).map((ts) => ts.join('')),
          valid.map((v) => `${v.ip} - - [01/Jan/2025:00:00:01 +0000] "${v.method} ${v.target}${v.proto}" ${v.status} ${v.size}${v.tail}`),
        ),
        (line) => {
          const b = bytes(line);
          if (b === undefined) expect(/[\\\u0080-\uffff]/.test(line)).toBe(true);
          else expect(b).toEqual(parseCombinedLine(line));
        },
      ),
      { numRuns: 3000 },
    );
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
