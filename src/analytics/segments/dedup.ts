// The import dedup key as a segment stores it: a 64-bit hash. Pure: no I/O.
//
// Why not the key itself: an imported line's key (src/analytics/ingest/line-key.ts) is ~42
// characters (base-36 time, '.', 32 base64url characters of a sha256): random text that no compressor
// shrinks, ~32 bytes per event of a 40-byte budget. A segment keeps 8 bytes: the first 64 bits of
// sha256(key). (Not the key's own base64url characters: hashing the whole key also covers its time prefix
// and whatever form later keys take.)
//
// What that accepts: two different lines whose hashes are equal look like one line imported twice, so the
// second is skipped (one view short). With n keys in the scope a lookup compares against, the chance of any
// such pair is at most n² / 2^65 (birthday bound):
// - looked up per (project, day) — keys begin with the event time, so equal keys always fall on the same
//   day: 100M imported events a project-year spread over 365 days (274k a day) give
//   365 × 274k² / 2^65 ≈ 7.4 × 10⁻⁷ per project-year; the same 100M in one day 2.7 × 10⁻⁴;
// - looked up project-wide (a line without a timestamp has no time prefix and is stored on the day it was
//   imported, so its scope is the project): 2.7 × 10⁻⁴ per 100M-event project-year.
// One event in 10⁸ missing with a probability below one in a thousand per project-year is far below the
// other ways an access log loses lines (rotation, a crash of the web server), and 96 bits would cost 4 more
// bytes on every imported event (10% of the budget) to move a 10⁻⁷ risk to 10⁻¹⁴. Exactness of live ingest
// is untouched: live events carry no key.
import crypto from 'node:crypto';

/** Bytes of a stored dedup hash. */
export const DEDUP_HASH_BYTES = 8;

/** The 64-bit hash a segment stores for an import dedup key. */
export function dedupHash(key: string): bigint {
  return dedupDigest(key).readBigUInt64BE(0);
}

/**
 * The sha256 digest whose first 8 bytes (big-endian) are dedupHash(key): the writer reads its two 32-bit words
 * for lookups (dedup-cache.ts) without making a bigint. One-shot crypto.hash rather than a Hash object: the
 * writer hashes every imported line's key (its dedup lookup was 27% of its CPU, bench:import --profile).
 */
export function dedupDigest(key: string): Buffer {
  return crypto.hash('sha256', key, 'buffer');
}

/**
 * The UTC day an import key names (its time prefix, src/analytics/ingest/line-key.ts timePrefix), or null
 * for a key without one (a line without a timestamp; a key an API caller chose). A key with a day can only
 * repeat on that day, so its duplicates are looked up among that day's hashes; one without is looked up
 * project-wide (the writer keeps those hashes apart, `analytics_dedup_keys`).
 */
export function dedupKeyDay(key: string): number | null {
  const m = /^([0-9a-z]{9,11})\./.exec(key);
  if (m === null) return null;
  const ms = Number.parseInt(m[1] as string, 36);
  return Number.isSafeInteger(ms) ? Math.floor(ms / 86_400_000) : null;
}

/** A hash as the project-wide table keeps it: 16 lowercase hex digits. */
export function dedupHashHex(h: bigint): string {
  return h.toString(16).padStart(16, '0');
}
