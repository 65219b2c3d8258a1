// The import dedup key of a log line (`inkwell analytics import`, import.ts): its text form, and the same key
// written as bytes straight from the line's sha256 digest. Pure: no I/O.
//
// A key is `<event time, base 36 ms, at least 9 digits>.<first 32 base64url characters of a hash>` (no time
// prefix for a line without a time): the hash is the line's sha256 for its first copy in a file and
// sha256(`<line hash, base64url>\n<occurrence>`) for the later identical copies. What a segment stores for it is
// the first 64 bits of sha256(key) (src/analytics/segments/dedup.ts), so the key's exact characters are what
// re-imports are matched on: every form here must give the same characters, or a log imported before would be
// added again.
import crypto from 'node:crypto';

/**
 * The dedup key of the `occurrence`-th identical copy (0-based) of a line with this hash. Keys start with the
 * event time (base 36 ms, when the line has one), so a key names its day and the store looks it up among that
 * day's hashes only (src/analytics/segments/dedup.ts).
 */
export function lineDedupKey(hash: string, occurrence: number, timestamp?: string): string {
  return lineDedupKeyAt(hash, occurrence, timestamp ? Date.parse(timestamp) : Number.NaN);
}

/** lineDedupKey for a time already in epoch ms (NaN: none). */
export function lineDedupKeyAt(hash: string, occurrence: number, ms: number): string {
  const h = occurrence === 0 ? hash : crypto.createHash('sha256').update(`${hash}\n${occurrence}`).digest('base64url');
  return timePrefix(ms) + h.slice(0, 32);
}

/** lineDedupKeyAt for the line's sha256 digest (32 bytes): the same key, without the 43-character hash text. */
export function digestDedupKeyAt(digest: Uint8Array, occurrence: number, ms: number): string {
  const d = Buffer.from(digest.buffer, digest.byteOffset, 32);
  // The first 32 base64url characters of a digest are exactly its first 24 bytes.
  if (occurrence === 0) return timePrefix(ms) + d.toString('base64url', 0, 24);
  return lineDedupKeyAt(d.toString('base64url'), occurrence, ms);
}

/** Two base-36 digits for each of 0 … 36² − 1. */
const BASE36_PAIRS = Array.from({ length: 36 * 36 }, (_, k) => k.toString(36).padStart(2, '0'));
const BASE36_LOW = 36 ** 4;
let highOf = -1;
let highText = '';

/**
 * The key's time prefix: `ms` in base 36, at least 9 digits, then '.'; '' when there is no time. Invariant: for
 * a safe integer it equals `${ms.toString(36).padStart(9, '0')}.`, built from the digits above the lowest four
 * (kept from the line before: they change every 28 minutes) and two pairs of a table. Why: Number#toString(36)
 * was 2% of the import's main thread (bench:import --profile).
 */
export function timePrefix(ms: number): string {
  if (!(Number.isFinite(ms) && ms >= 0)) return '';
  if (!Number.isSafeInteger(ms)) return `${ms.toString(36).padStart(9, '0')}.`;
  const high = Math.floor(ms / BASE36_LOW);
  const low = ms - high * BASE36_LOW;
  if (high === 0) return `${low.toString(36).padStart(9, '0')}.`;
  if (high !== highOf) {
    highOf = high;
    highText = high.toString(36);
  }
  const digits = highText + (BASE36_PAIRS[Math.floor(low / 1296)] as string) + (BASE36_PAIRS[low % 1296] as string);
  return `${digits.length < 9 ? digits.padStart(9, '0') : digits}.`;
}

/** ASCII codes of the base-36 digits and of the base64url alphabet. */
const DIGITS36 = Uint8Array.from('0123456789abcdefghijklmnopqrstuvwxyz', (c) => c.charCodeAt(0));
const B64URL = Uint8Array.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', (c) => c.charCodeAt(0));
const DOT = 46;

/** Bytes a key written by lineKeyBytes may take (11 digits, '.', 32 characters). */
export const LINE_KEY_MAX_BYTES = 44;

/**
 * Writes the first copy's key (occurrence 0) of the line whose digest is `digests[at, at + 32)` and whose time is
 * `ms` into `out` from 0, as ASCII bytes, and returns its length; -1 when `ms` is not a safe integer ≥ 0 (use
 * digestDedupKeyAt). Invariant: the bytes are exactly digestDedupKeyAt(digest, 0, ms)'s characters (the base-36
 * digits of ms, padded to 9, '.', base64url of the digest's first 24 bytes); checked against it on arbitrary
 * digests and times (test/analytics/import.test.ts). Why: the key then crosses to the writer thread as the
 * line's digest (WriteBatch.lineKeys) instead of a string of its own per line, which the hand-off indexed in a
 * Map, structured clone copied and the writer decoded again (npm run bench:import -- --profile).
 */
export function lineKeyBytes(out: Uint8Array, digests: Uint8Array, at: number, ms: number): number {
  if (!(Number.isSafeInteger(ms) && ms >= 0)) return -1;
  let n = 0;
  for (let v = ms; v > 0; v = Math.floor(v / 36)) n++;
  const len = Math.max(n, 9);
  let v = ms;
  for (let i = len - 1; i >= 0; i--) {
    const q = Math.floor(v / 36);
    out[i] = DIGITS36[v - q * 36] as number;
    v = q;
  }
  out[len] = DOT;
  let o = len + 1;
  for (let i = at; i < at + 24; i += 3) {
    const b0 = digests[i] as number;
    const b1 = digests[i + 1] as number;
    const b2 = digests[i + 2] as number;
    out[o] = B64URL[b0 >> 2] as number;
    out[o + 1] = B64URL[((b0 & 3) << 4) | (b1 >> 4)] as number;
    out[o + 2] = B64URL[((b1 & 15) << 2) | (b2 >> 6)] as number;
    out[o + 3] = B64URL[b2 & 63] as number;
    o += 4;
  }
  return o;
}
