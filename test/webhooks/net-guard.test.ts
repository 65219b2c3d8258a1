import net from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyAddress, isPublicAddress, parseIPv4, parseIPv6 } from '../../src/lib/net-guard.ts';

const cls = (a: string) => classifyAddress(a)?.class;

describe('IPv4 classification', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['192.0.0.8', 'reserved'],
    ['192.0.2.1', 'documentation'],
    ['203.0.113.9', 'documentation'],
  ])('%s is %s', (addr, expected) => {
    expect(cls(addr)).toBe(expected);
    expect(isPublicAddress(addr)).toBe(false);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '169.253.0.1',
    '11.0.0.1',
    '223.255.255.255',
    '93.184.216.34',
  ])('%s is public', (addr) => {
    expect(cls(addr)).toBe('public');
    expect(isPublicAddress(addr)).toBe(true);
  });

  it('understands the inet_aton forms a resolver or URL parser accepts', () => {
    expect(parseIPv4('0x7f.1')).toBe(0x7f000001);
    expect(parseIPv4('2130706433')).toBe(0x7f000001);
    expect(parseIPv4('017700000001')).toBe(0x7f000001);
    expect(parseIPv4('127.1')).toBe(0x7f000001);
    expect(parseIPv4('0x7f.0.0.1')).toBe(0x7f000001);
    expect(parseIPv4('0177.0.0.01')).toBe(0x7f000001);
    expect(parseIPv4('10.0x10203')).toBe(0x0a010203);
    expect(parseIPv4('127.0.0.1.')).toBe(0x7f000001);
    for (const weird of ['0x7f.1', '2130706433', '017700000001', '127.1', '0x7F000001', '0300.0250.1.1']) {
      expect(isPublicAddress(weird)).toBe(false);
    }
    expect(classifyAddress('0300.0250.1.1')).toEqual({ class: 'private', canonical: '192.168.1.1' });
  });

  it('rejects text that is not an IPv4 literal', () => {
    for (const s of ['', '256.0.0.1', '1.2.3.4.5', '1.2.3.256', '0x100.1', 'example.com', '1..2', '4294967296', '09.1.1.1', '-1.2.3.4', '1.2.3.4 ']) {
      expect(parseIPv4(s), s).toBeNull();
    }
  });

  it('agrees with the WHATWG URL parser on every address it normalises', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.constantFrom('dec', 'hex', 'octal', 'short'), (v, form) => {
        const bytes = [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255];
        const text =
          form === 'dec'
            ? String(v)
            : form === 'hex'
              ? bytes.map((b) => `0x${b.toString(16)}`).join('.')
              : form === 'octal'
                ? bytes.map((b) => `0${b.toString(8)}`).join('.')
                : `${bytes[0]}.${v & 0xffffff}`;
        const host = new URL(`http://${text}/`).hostname;
        expect(parseIPv4(text)).toBe(v);
        expect(classifyAddress(text)?.canonical).toBe(host);
      }),
      { numRuns: 300 },
    );
  });
});

describe('IPv6 classification', () => {
  it.each([
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['febf::1', 'linkLocal'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['100::1', 'reserved'],
    ['64:ff9b:1::1', 'private'],
    ['2001::1', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:7f00:1]', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['::ffff:a9fe:a9fe', 'linkLocal'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::127.0.0.1', 'loopback'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::7f00:1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:c0a8:101::1', 'private'],
  ])('%s is %s', (addr, expected) => {
    expect(cls(addr)).toBe(expected);
    expect(isPublicAddress(addr)).toBe(false);
  });

  it.each(['2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '2a00:1450:4001:80b::200e'])(
    '%s is public',
    (addr) => {
      expect(cls(addr)).toBe('public');
    },
  );

  it('reports the embedded IPv4 address of mapped forms', () => {
    expect(classifyAddress('::ffff:7f00:1')).toMatchObject({ class: 'loopback', embeddedV4: '127.0.0.1' });
    expect(classifyAddress('2002:c0a8:101::1')).toMatchObject({ embeddedV4: '192.168.1.1' });
  });

  it('parses the same groups as node for valid addresses and refuses invalid ones', () => {
    expect(parseIPv6('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parseIPv6('1::8')).toEqual([1, 0, 0, 0, 0, 0, 0, 8]);
    expect(parseIPv6('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(parseIPv6('1:2:3:4:5:6:1.2.3.4')).toEqual([1, 2, 3, 4, 5, 6, 0x0102, 0x0304]);
    for (const bad of [
      '1:2:3:4:5:6:7:8:9',
      '1::2::3',
      ':::1',
      '12345::',
      '::ffff:1.2.3',
      '::ffff:1.2.3.256',
      '1:2:3:4:5:6:7',
      'g::1',
      '',
      '1.2.3.4',
      'example.com',
    ]) {
      expect(parseIPv6(bad), bad).toBeNull();
      if (!/^\d+\.\d+\.\d+\.\d+$/.test(bad)) expect(net.isIPv6(bad), bad).toBe(false);
    }
  });

  it('classifies the URL parser form of every mapped IPv4 address like the address itself', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (v) => {
        const dotted = [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
        const host = new URL(`http://[::ffff:${dotted}]/`).hostname; // → [::ffff:hhhh:hhhh]
        expect(cls(host)).toBe(cls(dotted));
      }),
      { numRuns: 300 },
    );
  });

  it('agrees with node on which texts are IPv6 addresses', () => {
    fc.assert(
      fc.property(fc.ipV6(), (a) => {
        expect(parseIPv6(a)).not.toBeNull();
        expect(classifyAddress(a)).not.toBeNull();
      }),
      { numRuns: 300 },
    );
  });
});

describe('host names', () => {
  it('are not addresses', () => {
    for (const h of ['localhost', 'example.com', 'metadata.google.internal', '127.0.0.1.nip.io', 'xn--e1afmkfd.xn--p1ai']) {
      expect(classifyAddress(h), h).toBeNull();
    }
  });
});
