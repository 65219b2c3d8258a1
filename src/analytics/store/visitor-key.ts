// How a visitor key (src/analytics/classify/identity.ts) is stored in the visitor dictionary: as bytes, not text
// (migration 0018; since 0019 one key every `width` bytes of an `analytics_visitor_chunks` row). Pure: no I/O.
//
// Why: the dictionary holds one row per visitor, and its key was the largest part of it (`v:<uuid>` is 38
// characters of text, `h:<22 base64url chars>` 24). The two forms the identity module makes carry 16 and 16.5
// bytes of information; stored as such, a row on PostgreSQL falls from 80 to 56 bytes (bench/README.md,
// Decisions, "Visitor keys as bytes").
//
// Layout: one tag byte, then
//   1: `h:` + 22 base64url characters (132 bits) → the 17 bytes those characters decode to (4 zero bits after);
//   2: `v:` + a UUID in lower-case canonical form (8-4-4-4-12 hex digits) → its 16 bytes;
//   0: any other key → its UTF-8 bytes.
// Invariant: decodeVisitorKey(encodeVisitorKey(k)) === k for every string k, and distinct keys encode to distinct
// bytes (a form is used only for the strings it re-creates exactly; the tag tells the forms apart). So equality of
// keys is equality of stored bytes, which is all the ingest writer's lookups need. (Other keys round-trip through
// UTF-8 because stored text is well-formed Unicode: src/lib/text.ts refuses lone surrogates at the door.)

const TAG_TEXT = 0;
const TAG_HASH = 1;
const TAG_UUID = 2;

const UUID_FORM = /^v:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Per ASCII code: its value as a base64url digit, -1 for any other character. */
const B64URL_VALUE = Int8Array.from({ length: 128 }, (_, c) =>
  'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.indexOf(String.fromCharCode(c)),
);

/**
 * The tag-1 bytes of a key of the hash form (`h:` + 22 base64url characters), decoded here; null for any other
 * string. Invariant: the 17 bytes Buffer.from(`${22 characters}AA`, 'base64url') decodes to, after the tag, for
 * exactly the keys /^h:[A-Za-z0-9_-]{22}$/ matches (checked against that in test/analytics/visitor-key.test.ts). Why: every visitor key the import's writer looks up
 * or inserts is encoded, and the regex, the template string and the decoded Buffer were 4% of the writer thread
 * (`npm run bench:import -- --profile`).
 */
function hashFormBytes(key: string): Buffer | null {
  if (key.length !== 24 || key.charCodeAt(0) !== 104 || key.charCodeAt(1) !== 58) return null;
  const out = Buffer.allocUnsafe(18);
  out[0] = TAG_HASH;
  // Six groups of four characters (the last two characters the appended 'A's: zero) → three bytes each; 17 kept.
  for (let g = 0, o = 1; g < 6; g++) {
    let n = 0;
    for (let k = 0; k < 4; k++) {
      const j = 2 + g * 4 + k;
      let v = 0;
      if (j < 24) {
        const c = key.charCodeAt(j);
        v = c < 128 ? (B64URL_VALUE[c] as number) : -1;
        if (v < 0) return null;
      }
      n = (n << 6) | v;
    }
    out[o++] = n >>> 16;
    out[o++] = (n >>> 8) & 255;
    if (o < 18) out[o++] = n & 255;
  }
  return out;
}

export function encodeVisitorKey(key: string): Buffer {
  const hashed = hashFormBytes(key);
  if (hashed !== null) return hashed;
  if (UUID_FORM.test(key)) {
    const out = Buffer.allocUnsafe(17);
    out[0] = TAG_UUID;
    out.write(key.slice(2).replaceAll('-', ''), 1, 'hex');
    return out;
  }
  const text = Buffer.from(key, 'utf8');
  const out = Buffer.allocUnsafe(text.length + 1);
  out[0] = TAG_TEXT;
  text.copy(out, 1);
  return out;
}

export function decodeVisitorKey(stored: Uint8Array): string {
  const b = Buffer.isBuffer(stored) ? stored : Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  const tag = b[0];
  if (tag === TAG_HASH && b.length === 18) return `h:${b.toString('base64url', 1, 18).slice(0, 22)}`;
  if (tag === TAG_UUID && b.length === 17) {
    const h = b.toString('hex', 1, 17);
    return `v:${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }
  if (tag === TAG_TEXT) return b.toString('utf8', 1);
  throw new Error(`visitor dictionary: stored key of unknown form (tag ${tag}, ${b.length} bytes)`);
}

/** Code units of the lower-case hex digits, and of the base64url alphabet. */
const HEX = Uint16Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
const B64URL = Uint16Array.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', (c) => c.charCodeAt(0));

/**
 * The UTF-16 code units of decodeVisitorKey(stored) written to `out` (from 0), without making the string: how the
 * ingest writer's visitor index hashes a held key again when it grows (visitor-index.ts). Returns their count, or
 * −(count) when `out` is too short (nothing useful written: call again with at least that many).
 * Invariant: the units written are exactly those of decodeVisitorKey(stored) (visitor-key.test.ts checks both forms
 * and text).
 */
export function decodeVisitorKeyCodes(stored: Uint8Array, out: Uint16Array): number {
  const tag = stored[0];
  if (tag === TAG_UUID && stored.length === 17) {
    if (out.length < 38) return -38;
    out[0] = 118; // v
    out[1] = 58; // :
    let j = 2;
    for (let i = 1; i < 17; i++) {
      if (i === 5 || i === 7 || i === 9 || i === 11) out[j++] = 45; // -
      const x = stored[i] as number;
      out[j++] = HEX[x >>> 4] as number;
      out[j++] = HEX[x & 15] as number;
    }
    return 38;
  }
  if (tag === TAG_HASH && stored.length === 18) {
    if (out.length < 24) return -24;
    out[0] = 104; // h
    out[1] = 58; // :
    // 22 characters: five groups of 3 bytes (20), then the top 12 bits of bytes 16–17 (2).
    let j = 2;
    for (let i = 1; i < 16; i += 3) {
      const v = ((stored[i] as number) << 16) | ((stored[i + 1] as number) << 8) | (stored[i + 2] as number);
      out[j++] = B64URL[v >>> 18] as number;
      out[j++] = B64URL[(v >>> 12) & 63] as number;
      out[j++] = B64URL[(v >>> 6) & 63] as number;
      out[j++] = B64URL[v & 63] as number;
    }
    const v = ((stored[16] as number) << 8) | (stored[17] as number);
    out[j++] = B64URL[v >>> 10] as number;
    out[j++] = B64URL[(v >>> 4) & 63] as number;
    return 24;
  }
  const key = decodeVisitorKey(stored);
  if (out.length < key.length) return -key.length;
  for (let i = 0; i < key.length; i++) out[i] = key.charCodeAt(i);
  return key.length;
}

/**
 * decodeVisitorKeyCodes into `into.codes`, which is replaced by a larger array when the key needs one (a scratch
 * array reused from key to key); the count of code units.
 */
export function decodeVisitorKeyCodesInto(stored: Uint8Array, into: { codes: Uint16Array }): number {
  let n = decodeVisitorKeyCodes(stored, into.codes);
  if (n < 0) {
    into.codes = new Uint16Array(-n);
    n = decodeVisitorKeyCodes(stored, into.codes);
  }
  return n;
}
