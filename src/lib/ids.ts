// Random identifiers and API keys (base62, from the CSPRNG).
import crypto from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function base62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of crypto.randomBytes(length * 2)) {
      // 248 = 62 * 4: reject the tail to keep the distribution uniform.
      if (b < 248) out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function newId(prefix: string, length = 16): string {
  return `${prefix}_${base62(length)}`;
}

export const ADMIN_KEY_RE = /^ink_[0-9A-Za-z]{40}$/;
export const INGEST_KEY_RE = /^ink_pub_[0-9A-Za-z]{32}$/;
export const INGEST_SECRET_KEY_RE = /^ink_ing_[0-9A-Za-z]{40}$/;

/**
 * admin (`ink_…`): every endpoint of its project. ingest (`ink_pub_…`, public: safe in a web page): the ingest
 * endpoints only, and it cannot set an event's `timestamp` or `visitorId`. ingest-secret (`ink_ing_…`, a
 * server-side secret for edge middleware and log shippers): the ingest endpoints only, `timestamp` and
 * `visitorId` allowed.
 */
export type KeyKind = 'admin' | 'ingest' | 'ingest-secret';

export const KEY_KINDS: readonly KeyKind[] = ['admin', 'ingest', 'ingest-secret'];

export function generateKey(kind: KeyKind): string {
  if (kind === 'admin') return `ink_${base62(40)}`;
  if (kind === 'ingest-secret') return `ink_ing_${base62(40)}`;
  return `ink_pub_${base62(32)}`;
}

/** The kind a well-formed key claims, or null for anything malformed. */
export function keyKindOf(key: string): KeyKind | null {
  if (ADMIN_KEY_RE.test(key)) return 'admin';
  if (INGEST_KEY_RE.test(key)) return 'ingest';
  if (INGEST_SECRET_KEY_RE.test(key)) return 'ingest-secret';
  return null;
}

// One-shot hashing (no Hash object per call; Node ≥ 20.12): this runs on every authenticated request.
const oneShotHash = typeof crypto.hash === 'function' ? crypto.hash : undefined;

export function hashKey(key: string): string {
  return oneShotHash ? oneShotHash('sha256', key, 'hex') : crypto.createHash('sha256').update(key).digest('hex');
}

/** What listings show of a key: enough to recognise it, never enough to use it. */
export function keyPrefix(key: string): string {
  return key.startsWith('ink_pub_') || key.startsWith('ink_ing_') ? key.slice(0, 12) : key.slice(0, 8);
}
