// Visitor identity (SPEC 4.3). Pure: no I/O (node:crypto is computation only).
//
// visitorKey returns the key a visitor is counted under:
//   - `v:<visitorId>` when the event carries a visitorId (trimmed, non-empty);
//   - otherwise `h:<22 base64url chars>` = the first 132 bits of HMAC-SHA256(key, ip + '\n' + userAgent),
//     where key = the project's secret for rotation 'none', or secret + '\n' + period for rotation
//     'daily' ('d:' + UTC day number) or 'monthly' ('m:YYYY-MM' in UTC).
// The prefixes keep the two namespaces apart: a client cannot send a visitorId that equals a hash key.
// The raw IP is never part of the result; IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) and letter
// case in IPv6 are normalised first so one client seen through different proxies hashes the same.
import crypto from 'node:crypto';
import type { VisitorIdRotation } from '../../projects/service.ts';
import { utcDay } from '../dates.ts';

export type { VisitorIdRotation };

const HASH_CHARS = 22;

/** Canonical text of an IP address for hashing (no validation: unknown formats are used as sent, trimmed). */
export function canonicalIp(ip: string | null | undefined): string {
  if (!ip) return '';
  let s = ip.trim().toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(s);
  if (mapped) s = mapped[1];
  return s;
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
    .createHmac('sha256', key)
    .update(`${canonicalIp(input.ip)}\n${input.userAgent ?? ''}`)
    .digest('base64url');
  return `h:${digest.slice(0, HASH_CHARS)}`;
}
