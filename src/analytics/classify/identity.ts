// Visitor identity (SPEC 4.3). Pure: no I/O (node:crypto is computation only).
//
// visitorKey returns the key a visitor is counted under:
//   - `v:<visitorId>` when the event carries a visitorId (trimmed, non-empty);
//   - otherwise `h:<22 base64url chars>` = the first 132 bits of HMAC-SHA256(key, ip + '\n' + userAgent),
//     where key = the project's secret for rotation 'none', or secret + '\n' + period for rotation
//     'daily' ('d:' + UTC day number) or 'monthly' ('m:YYYY-MM' in UTC).
// The prefixes keep the two namespaces apart: a client cannot send a visitorId that equals a hash key.
// The raw IP is never part of the result; it is hashed in its canonical form (lib/ip.ts: IPv6 compressed and
// lower case, IPv4-mapped IPv6 as IPv4) so one client seen through different proxies hashes the same.
import crypto from 'node:crypto';
import { canonicalIp } from '../../lib/ip.ts';
import type { VisitorIdRotation } from '../../projects/service.ts';
import { utcDay } from '../dates.ts';

export type { VisitorIdRotation };

const HASH_CHARS = 22;

/** The IP text that is hashed: the canonical address; anything else (not an address) trimmed and lower-cased. */
function hashedIp(ip: string | null | undefined): string {
  if (!ip) return '';
  return canonicalIp(ip) ?? ip.trim().toLowerCase();
}

/** The rotation period a timestamp falls in ('' for rotation 'none'). */
export function rotationPeriod(rotation: VisitorIdRotation, timestampMs: number): string {
  if (rotation === 'daily') return `d:${utcDay(timestampMs)}`;
  if (rotation === 'monthly') return `m:${new Date(timestampMs).toISOString().slice(0, 7)}`;
  return '';
}

export function visitorKey(input: {
  secret: string;
  rotation: VisitorIdRotation;
  visitorId?: string | null;
  ip?: string | null;
  userAgent?: string | null;
  timestampMs: number;
}): string {
  const id = input.visitorId?.trim();
  if (id) return `v:${id}`;
  return hashedVisitorKey(input.secret, rotationPeriod(input.rotation, input.timestampMs), input.ip, input.userAgent);
}

/** The HMAC key text of the last (secret, period) hashed with, and the two it was made of. */
let lastSecret = '';
let lastPeriod = '';
let lastKeyText = '';

/**
 * visitorKey of a visitor without an id whose rotation period (rotationPeriod's: '' for rotation 'none') is given.
 * The HMAC key text is made again only when the secret or the period changes, so the same string is looked up in
 * the pads' Map (its hash kept). Why: an import computes a key for most of its lines (bench:import's log: 700,000 of
 * 1M lines miss the preparer's visitor cache: daily keys), each of which built the key text and hashed it anew.
 */
export function hashedVisitorKey(secret: string, period: string, ip: string | null | undefined, userAgent: string | null | undefined): string {
  if (secret !== lastSecret || period !== lastPeriod || lastKeyText === '') {
    lastSecret = secret;
    lastPeriod = period;
    lastKeyText = period === '' ? secret : `${secret}\n${period}`;
  }
  return `h:${hmacSha256(lastKeyText, `${hashedIp(ip)}\n${userAgent ?? ''}`).slice(0, HASH_CHARS)}`;
}

/** HMAC-SHA256's block (RFC 2104: B = 64 bytes for SHA-256). */
const BLOCK = 64;

/**
 * Per key text (the project's secret, with the rotation period when there is one): the key's block XOR ipad and XOR
 * opad (RFC 2104), dropped whole past PADS_MAX entries.
 */
const pads = new Map<string, { inner: Buffer; outer: Buffer }>();
const PADS_MAX = 1024;
function padsOf(text: string): { inner: Buffer; outer: Buffer } {
  let p = pads.get(text);
  if (p === undefined) {
    if (pads.size >= PADS_MAX) pads.clear();
    let k = Buffer.from(text, 'utf8');
    if (k.length > BLOCK) k = crypto.hash('sha256', k, 'buffer');
    const inner = Buffer.alloc(BLOCK, 0x36);
    const outer = Buffer.alloc(BLOCK, 0x5c);
    for (let i = 0; i < k.length; i++) {
      inner[i] = (inner[i] as number) ^ (k[i] as number);
      outer[i] = (outer[i] as number) ^ (k[i] as number);
    }
    p = { inner, outer };
    pads.set(text, p);
  }
  return p;
}

/** Room for a message after the inner pad: ip + '\n' + a user agent within EVENT_LIMITS, UTF-8. */
const MESSAGE_ROOM = 16 * 1024;
const innerScratch = Buffer.allocUnsafe(BLOCK + MESSAGE_ROOM);
const outerScratch = Buffer.allocUnsafe(BLOCK + 32);

/**
 * HMAC-SHA256(key, message) as base64url, the key and message encoded as UTF-8: RFC 2104's two hashes,
 * sha256((K ^ opad) || sha256((K ^ ipad) || message)), each one crypto.hash call over a buffer reused from call to
 * call. Invariant: exactly createHmac('sha256', key).update(message).digest('base64url'), checked against it on
 * arbitrary keys (longer than a block too) and messages (test/analytics/identity.test.ts); a message too long
 * for the scratch buffer goes through createHmac. Why: an import computes a visitor key for every (ip, user agent)
 * its preparer's cache misses (most of bench:import's log's 200,000 visitors, more than once each), and
 * createHmac (its Hmac object, update, digest) was a fifth of the import thread's time (`npm run bench:import --
 * --profile`, 1M lines); two one-shot hashes took about half of it (200k keys, loaded 2-core machine).
 */
export function hmacSha256(key: string, message: string): string {
  if (message.length * 3 > MESSAGE_ROOM) return crypto.createHmac('sha256', key).update(message).digest('base64url');
  const { inner, outer } = padsOf(key);
  inner.copy(innerScratch, 0);
  const n = innerScratch.write(message, BLOCK, 'utf8');
  outer.copy(outerScratch, 0);
  outerScratch.write(crypto.hash('sha256', innerScratch.subarray(0, BLOCK + n), 'binary'), BLOCK, 'latin1');
  return crypto.hash('sha256', outerScratch, 'base64url');
}
