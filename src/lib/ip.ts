// The one canonical text of an IP address (ipaddr.js parses), for everything that compares or hashes addresses.
import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * IPv4 in dotted decimal; IPv6 in RFC 5952 form (lower case, the longest run of zero groups compressed, a zone
 * id kept); an IPv4-mapped IPv6 address (::ffff:a.b.c.d, in any spelling) as its IPv4 address. Null when the text
 * is not an address in standard notation: IPv4 must be four decimal parts without leading zeros (the inet_aton
 * forms such as 0x7f.1 are for the URL parser to read, see net-guard.ts), IPv6 may be bracketed.
 */
export function canonicalIp(text: string): string | null {
  let s = text.trim();
  // Node's checks first: they are native and cheap, and a dotted-decimal IPv4 they accept is already canonical
  // (this runs for every new visitor at ingest).
  if (isIPv4(s)) return s;
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  if (!isIPv6(s)) return null;
  const v6 = ipaddr.IPv6.parse(s);
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address().toString() : v6.toRFC5952String();
}
