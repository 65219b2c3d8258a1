import crypto from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hashedVisitorKey, hmacSha256, rotationPeriod, type VisitorIdRotation, visitorKey } from '../../src/analytics/classify/identity.ts';

const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';
const T = Date.UTC(2025, 0, 15, 12, 0, 0);
const DAY = 86_400_000;
const base = { secret: 's3cret', rotation: 'none' as const, ip: '203.0.113.7', userAgent: UA, timestampMs: T };

describe('visitorKey', () => {
  it('uses the visitorId when given, namespaced apart from hashes', () => {
    expect(visitorKey({ ...base, visitorId: 'abc' })).toBe('v:abc');
    expect(visitorKey({ ...base, visitorId: '  abc ' })).toBe('v:abc');
    const hashed = visitorKey(base);
    expect(hashed).toMatch(/^h:[A-Za-z0-9_-]{22}$/);
    // a client sending a hash-looking visitorId cannot collide with the hashed identity
    expect(visitorKey({ ...base, visitorId: hashed })).toBe(`v:${hashed}`);
    expect(visitorKey({ ...base, visitorId: hashed })).not.toBe(hashed);
  });

  it('falls back to the hash for empty or blank visitorIds', () => {
    expect(visitorKey({ ...base, visitorId: '' })).toBe(visitorKey(base));
    expect(visitorKey({ ...base, visitorId: '   ' })).toBe(visitorKey(base));
    expect(visitorKey({ ...base, visitorId: null })).toBe(visitorKey(base));
  });

  it('is deterministic and depends on secret, ip and user agent', () => {
    const k = visitorKey(base);
    expect(visitorKey({ ...base })).toBe(k);
    expect(visitorKey({ ...base, secret: 'other' })).not.toBe(k);
    expect(visitorKey({ ...base, ip: '203.0.113.8' })).not.toBe(k);
    expect(visitorKey({ ...base, userAgent: `${UA} x` })).not.toBe(k);
    // ip + '\n' + ua is unambiguous: moving characters between the two changes the key
    expect(visitorKey({ ...base, ip: 'a', userAgent: 'b c' })).not.toBe(visitorKey({ ...base, ip: 'a b', userAgent: 'c' }));
  });

  it('treats missing ip / user agent as empty and still hashes', () => {
    expect(visitorKey({ secret: 's', rotation: 'none', timestampMs: T })).toMatch(/^h:/);
    expect(visitorKey({ secret: 's', rotation: 'none', timestampMs: T, ip: null, userAgent: null })).toBe(
      visitorKey({ secret: 's', rotation: 'none', timestampMs: T }),
    );
  });

  it('normalises IPv4-mapped IPv6 and IPv6 letter case', () => {
    expect(visitorKey({ ...base, ip: '::ffff:203.0.113.7' })).toBe(visitorKey(base));
    expect(visitorKey({ ...base, ip: '2001:DB8::1' })).toBe(visitorKey({ ...base, ip: '2001:db8::1' }));
    expect(visitorKey({ ...base, ip: ' 203.0.113.7 ' })).toBe(visitorKey(base));
  });

  it('hashes every spelling of one IPv6 address the same (compression, leading zeros, mapped forms)', () => {
    const v6 = visitorKey({ ...base, ip: '2001:db8::1' });
    for (const ip of ['2001:db8:0:0:0:0:0:1', '2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8:0::0:1', '[2001:db8::1]']) {
      expect(visitorKey({ ...base, ip }), ip).toBe(v6);
    }
    for (const ip of ['::ffff:cb00:7107', '0:0:0:0:0:ffff:203.0.113.7', '::FFFF:203.0.113.7']) expect(visitorKey({ ...base, ip }), ip).toBe(visitorKey(base));
    expect(visitorKey({ ...base, ip: '2001:db8::2' })).not.toBe(v6);
  });

  it('keeps the visitor ids already counted: IPv4, mapped and compressed IPv6 and non-addresses hash as before', () => {
    // Computed with the implementation these ids were first stored under.
    const before: [VisitorIdRotation, string, string][] = [
      ['none', '203.0.113.7', 'h:ptOYSxZsBZAeHXLUeyptSv'],
      ['none', '10.0.0.1', 'h:rjzVfGNRLxQfckrihrvkFM'],
      ['none', '::ffff:198.51.100.1', 'h:_q6Ez3k-pV_wOn-4hVTrTd'],
      ['none', '2001:db8::1', 'h:05dvL-p3YB4sn1MMn_HLLw'],
      ['none', 'unknown', 'h:B3zI-wZkjqLjjYNjyr-gUo'],
      ['daily', '203.0.113.7', 'h:wyHn1OrFHNZm-uLQDYi79p'],
      ['daily', '2001:db8::1', 'h:RG2OHCwo-_ifM8hULj201D'],
    ];
    for (const [rotation, ip, key] of before) expect(visitorKey({ ...base, rotation, ip }), `${rotation} ${ip}`).toBe(key);
  });

  it('hashedVisitorKey is the HMAC of its key text whichever secrets and periods came before (the kept key text)', () => {
    const keyOf = (secret: string, period: string, ip: string, ua: string) => {
      const key = period === '' ? secret : `${secret}\n${period}`;
      return `h:${crypto.createHmac('sha256', key).update(`${ip}\n${ua}`).digest('base64url').slice(0, 22)}`;
    };
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.constantFrom('s', 's\nd:1', '', 'other'),
            fc.constantFrom('', 'd:1', 'd:2', 'm:2025-01'),
            fc.constantFrom('10.0.0.1', ''),
            fc.constantFrom('UA', ''),
          ),
          {
            minLength: 1,
            maxLength: 12,
          },
        ),
        (calls) => {
          for (const [secret, period, ip, ua] of calls) expect(hashedVisitorKey(secret, period, ip, ua)).toBe(keyOf(secret, period, ip, ua));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('rotation none: stable across time', () => {
    expect(visitorKey({ ...base, timestampMs: T + 400 * DAY })).toBe(visitorKey(base));
  });

  it('rotation daily: same within a UTC day, different across the UTC midnight', () => {
    const d = { ...base, rotation: 'daily' as const };
    const midnight = Date.UTC(2025, 0, 16);
    expect(visitorKey({ ...d, timestampMs: midnight - DAY })).toBe(visitorKey({ ...d, timestampMs: midnight - 1 }));
    expect(visitorKey({ ...d, timestampMs: midnight - 1 })).not.toBe(visitorKey({ ...d, timestampMs: midnight }));
    expect(visitorKey({ ...d, timestampMs: T })).not.toBe(visitorKey({ ...base, timestampMs: T }));
  });

  it('rotation monthly: same within a UTC month, different across months', () => {
    const m = { ...base, rotation: 'monthly' as const };
    const feb = Date.UTC(2025, 1, 1);
    expect(visitorKey({ ...m, timestampMs: Date.UTC(2025, 0, 1) })).toBe(visitorKey({ ...m, timestampMs: feb - 1 }));
    expect(visitorKey({ ...m, timestampMs: feb - 1 })).not.toBe(visitorKey({ ...m, timestampMs: feb }));
    expect(rotationPeriod('monthly', feb)).toBe('m:2025-02');
    expect(rotationPeriod('daily', feb)).toBe(`d:${feb / DAY}`);
    expect(rotationPeriod('none', feb)).toBe('');
  });

  it('rotation does not affect an explicit visitorId', () => {
    expect(visitorKey({ ...base, rotation: 'daily', visitorId: 'x' })).toBe('v:x');
  });

  it('never contains the IP address', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.ipV4(), fc.ipV6()),
        fc.string({ maxLength: 80 }),
        fc.constantFrom('none', 'daily', 'monthly'),
        fc.integer({ min: 0, max: 4_102_444_800_000 }),
        (ip, ua, rotation, ts) => {
          const key = visitorKey({ secret: 'k', rotation: rotation as 'none', ip, userAgent: ua, timestampMs: ts });
          expect(key).toMatch(/^h:[A-Za-z0-9_-]{22}$/);
          if (ip.length >= 3) expect(key).not.toContain(ip);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('hmacSha256 is createHmac exactly: any key (longer than a block too), any message (lone surrogates, long ones)', () => {
    const slow = (k: string, m: string) => crypto.createHmac('sha256', k).update(m).digest('base64url');
    const text = fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 50 }));
    fc.assert(
      fc.property(text, text, fc.boolean(), (key, message, long) => {
        const m = long ? message.repeat(6000 / Math.max(1, message.length)) : message;
        expect(hmacSha256(key, m)).toBe(slow(key, m));
      }),
      { numRuns: 2000 },
    );
    for (const len of [0, 63, 64, 65, 128, 5461, 5462, 16384, 20000]) {
      const m = 'é'.repeat(len);
      expect(hmacSha256('k'.repeat(len % 200), m)).toBe(slow('k'.repeat(len % 200), m));
    }
    // Keys a visitor key is made under: the secret, then with its rotation period (a new pad each).
    for (const k of ['s3cret', 's3cret\nd:20103', 's3cret\nm:2025-01']) expect(hmacSha256(k, `203.0.113.7\n${UA}`)).toBe(slow(k, `203.0.113.7\n${UA}`));
  });
});
