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
  const period = rotationPeriod(input.rotation, input.timestampMs);
  const key = period === '' ? input.secret : `${input.secret}\n${period}`;
  const digest = crypto
    .createHmac('sha256', secretKeyOf(key))
    .update(`${hashedIp(input.ip)}\n${input.userAgent ?? ''}`)
    .digest('base64url');
  return `h:${digest.slice(0, HASH_CHARS)}`;
}

/**
 * HMAC keys as KeyObjects, by their text (the project's secret, with the rotation period when there is one).
 * Invariant: HMAC under createSecretKey(Buffer.from(text)) is HMAC under the text itself (createHmac encodes a
 * string key as UTF-8), so the keys are the same; a new secret or period is a new entry, and the map is dropped
 * whole past KEY_OBJECTS_MAX entries. Why: createHmac with a string key prepares a key object per call, the
 * larger part of a visitor key's cost: an import computes one per (ip, user agent) its cache misses, 480k for
 * bench:import's 1M lines (createHmac was 1.5 of the main thread's 22.9 µs/line under
 * `npm run bench:import -- --profile`; with a KeyObject, 7-8 against 10-13 µs a key in a loaded microbench).
 */
const keyObjects = new Map<string, crypto.KeyObject>();
const KEY_OBJECTS_MAX = 1024;
function secretKeyOf(text: string): crypto.KeyObject {
  let k = keyObjects.get(text);
  if (k === undefined) {
    if (keyObjects.size >= KEY_OBJECTS_MAX) keyObjects.clear();
    k = crypto.createSecretKey(Buffer.from(text, 'utf8'));
    keyObjects.set(text, k);
  }
  return k;
}
