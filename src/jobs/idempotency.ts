// Idempotency-Key fingerprints (SPEC 3.3). Pure.
import crypto from 'node:crypto';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_KEY_MAX = 255;

/** JSON with object keys sorted at every level, so that key order never changes the fingerprint. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** What makes two requests "the same": method, path and body. */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  return crypto
    .createHash('sha256')
    .update(`${method.toUpperCase()} ${path}\n${canonicalJson(body)}`)
    .digest('hex');
}

/** A usable key: 1–255 visible ASCII characters; null when absent, an error message when invalid. */
export function checkIdempotencyKey(value: string | string[] | undefined): { key: string | null; error?: string } {
  if (value === undefined) return { key: null };
  if (Array.isArray(value)) return { key: null, error: 'Idempotency-Key header must appear once' };
  if (value.length === 0 || value.length > IDEMPOTENCY_KEY_MAX)
    return { key: null, error: `Idempotency-Key header must be 1–${IDEMPOTENCY_KEY_MAX} characters` };
  if (!/^[\x21-\x7e]+$/.test(value)) return { key: null, error: 'Idempotency-Key header must be visible ASCII characters without spaces' };
  return { key: value };
}
