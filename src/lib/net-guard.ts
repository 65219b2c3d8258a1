// Pure IP address classification for outbound requests (webhooks): which addresses a server on the
// public internet may be asked to call. No I/O here; resolving names lives with the caller.
// The parsers read every form the WHATWG URL parser accepts (inet_aton IPv4 such as 0x7f.1), which an address
// library's standard notation does not; the canonical text is lib/ip.ts's.
import { canonicalIp } from './ip.ts';

export type AddressClass = 'public' | 'loopback' | 'private' | 'linkLocal' | 'unspecified' | 'multicast' | 'broadcast' | 'reserved' | 'documentation';

export interface Classified {
  class: AddressClass;
  /** The address in canonical form (lib/ip.ts: IPv4 dotted decimal, IPv6 per RFC 5952, IPv4-mapped IPv6 as IPv4). */
  canonical: string;
  /** For IPv6 forms that embed an IPv4 address (mapped, compatible, NAT64, 6to4): that address. */
  embeddedV4?: string;
}

/**
 * Parses an IPv4 literal the way inet_aton and the WHATWG URL parser accept it: one to four parts,
 * each decimal, octal (leading 0) or hex (0x); the last part fills the remaining bytes. Returns the
 * 32-bit value, or null when the text is not an IPv4 literal.
 */
export function parseIPv4(text: string): number | null {
  if (text.length === 0 || text.length > 64) return null;
  const parts = text.split('.');
  // A trailing dot is allowed once by the URL parser ("127.0.0.1.").
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length < 1 || parts.length > 4) return null;
  const nums: number[] = [];
  for (const p of parts) {
    let n: number;
    if (/^0[xX][0-9a-fA-F]*$/.test(p)) n = p.length === 2 ? 0 : Number.parseInt(p.slice(2), 16);
    else if (/^0[0-7]+$/.test(p)) n = Number.parseInt(p.slice(1), 8);
    else if (/^(0|[1-9][0-9]*)$/.test(p)) n = Number(p);
    else return null;
    if (!Number.isFinite(n)) return null;
    nums.push(n);
  }
  const last = nums.pop() as number;
  for (const n of nums) if (n > 255) return null;
  const rest = 4 - nums.length;
  if (last >= 256 ** rest) return null;
  let value = 0;
  for (const n of nums) value = value * 256 + n;
  return value * 256 ** rest + last;
}

function v4String(v: number): string {
  return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
}

/** Parses an IPv6 literal (optionally in brackets, with a zone id) into eight 16-bit groups. */
export function parseIPv6(text: string): number[] | null {
  let s = text;
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (s.length === 0 || s.length > 45 || !/^[0-9a-fA-F:.]+$/.test(s)) return null;
  let tail: number[] = [];
  // An IPv4 tail (::ffff:1.2.3.4) counts as two groups; here only strict dotted decimal is allowed.
  const lastColon = s.lastIndexOf(':');
  if (lastColon < 0) return null;
  const maybeV4 = s.slice(lastColon + 1);
  if (maybeV4.includes('.')) {
    if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(maybeV4)) return null;
    const octets = maybeV4.split('.').map(Number);
    if (octets.some((o) => o > 255)) return null;
    tail = [((octets[0] as number) << 8) | (octets[1] as number), ((octets[2] as number) << 8) | (octets[3] as number)];
    s = s.slice(0, lastColon + 1);
    // "::ffff:" keeps its trailing colon only when it is part of a "::".
    if (s.endsWith(':') && !s.endsWith('::')) s = s.slice(0, -1);
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const toGroups = (h: string): number[] | null => {
    if (h === '') return [];
    const out: number[] = [];
    for (const g of h.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(Number.parseInt(g, 16));
    }
    return out;
  };
  const head = toGroups(halves[0] as string);
  if (!head) return null;
  if (halves.length === 1) {
    const groups = [...head, ...tail];
    return groups.length === 8 ? groups : null;
  }
  const back = toGroups(halves[1] as string);
  if (!back) return null;
  const known = head.length + back.length + tail.length;
  if (known > 7) return null;
  return [...head, ...new Array<number>(8 - known).fill(0), ...back, ...tail];
}

function inV4(v: number, base: string, bits: number): boolean {
  const b = parseIPv4(base) as number;
  if (bits === 0) return true;
  const shift = 32 - bits;
  return Math.floor(v / 2 ** shift) === Math.floor(b / 2 ** shift);
}

const V4_RANGES: [string, number, AddressClass][] = [
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'linkLocal'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['255.255.255.255', 32, 'broadcast'],
  ['240.0.0.0', 4, 'reserved'],
];

function classifyV4Value(v: number): AddressClass {
  for (const [base, bits, cls] of V4_RANGES) if (inV4(v, base, bits)) return cls;
  return 'public';
}

function classifyV6Groups(g: number[]): Classified {
  const canonical = canonicalIp(g.map((x) => x.toString(16)).join(':')) as string;
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const v4From = (hi: number, lo: number) => hi * 65536 + lo;
  const embedded = (v: number): Classified => ({ class: classifyV4Value(v), canonical, embeddedV4: v4String(v) });
  const zeroTo = (n: number) => g.slice(0, n).every((x) => x === 0);

  if (g.every((x) => x === 0)) return { class: 'unspecified', canonical };
  if (zeroTo(7) && g7 === 1) return { class: 'loopback', canonical };
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated)
  if (zeroTo(5) && g5 === 0xffff) return embedded(v4From(g6, g7));
  if (zeroTo(4) && g4 === 0xffff && g5 === 0) return embedded(v4From(g6, g7));
  // ::a.b.c.d (deprecated IPv4-compatible)
  if (zeroTo(6)) return embedded(v4From(g6, g7));
  // 64:ff9b::/96 NAT64 well-known prefix; 64:ff9b:1::/48 local-use NAT64
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return embedded(v4From(g6, g7));
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return { class: 'private', canonical };
  // 2002::/16 6to4: the IPv4 address sits in groups 1-2
  if (g0 === 0x2002) return embedded(v4From(g1, g2));
  if (g0 === 0x2001 && g1 === 0x0db8) return { class: 'documentation', canonical };
  if (g0 === 0x3fff && g1 <= 0x0fff) return { class: 'documentation', canonical };
  if (g0 === 0x2001 && g1 < 0x0200) return { class: 'reserved', canonical }; // Teredo, ORCHID, benchmarking…
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return { class: 'reserved', canonical }; // discard-only
  if ((g0 & 0xfe00) === 0xfc00) return { class: 'private', canonical }; // ULA fc00::/7
  if ((g0 & 0xffc0) === 0xfe80) return { class: 'linkLocal', canonical }; // fe80::/10
  if ((g0 & 0xffc0) === 0xfec0) return { class: 'private', canonical }; // deprecated site-local fec0::/10
  if ((g0 & 0xff00) === 0xff00) return { class: 'multicast', canonical };
  // Global unicast is 2000::/3; everything else is unassigned.
  if ((g0 & 0xe000) !== 0x2000) return { class: 'reserved', canonical };
  return { class: 'public', canonical };
}

/**
 * Classifies an IP literal (IPv4 in any inet_aton form, IPv6 with or without brackets and zone), or
 * returns null when the text is not an IP address (a host name).
 */
export function classifyAddress(text: string): Classified | null {
  const s = text.trim();
  const v4 = parseIPv4(s);
  if (v4 !== null) return { class: classifyV4Value(v4), canonical: v4String(v4) };
  const v6 = parseIPv6(s);
  if (v6 !== null) return classifyV6Groups(v6);
  return null;
}

/** True when a webhook (or any server-side request on a user's behalf) may call this address. */
export function isPublicAddress(text: string): boolean {
  return classifyAddress(text)?.class === 'public';
}

const CLASS_WORDS: Record<AddressClass, string> = {
  public: 'a public address',
  loopback: 'a loopback address',
  private: 'a private network address',
  linkLocal: 'a link-local address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  broadcast: 'a broadcast address',
  reserved: 'a reserved address',
  documentation: 'a documentation-only address',
};

export function describeClass(c: AddressClass): string {
  return CLASS_WORDS[c];
}
