// The one IP canonicaliser (visitor identity and the webhook address guard).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalIp } from '../../src/lib/ip.ts';

describe('canonicalIp', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    [' 203.0.113.7 ', '203.0.113.7'],
    ['2001:DB8::1', '2001:db8::1'],
    ['2001:db8:0:0:0:0:0:1', '2001:db8::1'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['1:0:0:1:0:0:0:1', '1:0:0:1::1'], // the longer zero run is the one compressed
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'], // a single zero group stays
    ['0:0:0:0:0:0:0:0', '::'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['fe80::1%eth0', 'fe80::1%eth0'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:CB00:7107', '203.0.113.7'],
    ['0:0:0:0:0:ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8::203.0.113.7', '2001:db8::cb00:7107'], // an IPv4 tail that is not a mapped address stays IPv6
  ])('%s → %s', (text, canonical) => {
    expect(canonicalIp(text)).toBe(canonical);
  });

  it.each(['', 'unknown', '256.1.1.1', '1.2.3', '001.2.3.4', '0x7f.0.0.1', '2130706433', '1::2::3', '2001:db8::g', '12345::'])(
    'is null for %j (not an address in standard notation)',
    (text) => {
      expect(canonicalIp(text)).toBeNull();
    },
  );

  it('agrees with the WHATWG URL parser on every IPv4 address and every IPv6 address written out in full', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        expect(canonicalIp(ip)).toBe(ip);
        expect(canonicalIp(`::ffff:${ip}`)).toBe(ip);
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }), (groups) => {
        const full = groups.map((g) => g.toString(16).padStart(4, '0')).join(':');
        const c = canonicalIp(full);
        // The same address as the WHATWG URL parser reads it, which also compresses per RFC 5952; mapped ones become IPv4.
        const viaUrl = new URL(`http://[${full}]/`).hostname.slice(1, -1);
        if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) expect(c).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
        else expect(c).toBe(viaUrl);
      }),
      { numRuns: 300 },
    );
  });
});
