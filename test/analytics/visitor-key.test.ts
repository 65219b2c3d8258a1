import crypto from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { visitorKey } from '../../src/analytics/classify/identity.ts';
import { decodeVisitorKey, decodeVisitorKeyCodes, encodeVisitorKey } from '../../src/analytics/store/visitor-key.ts';

describe('visitor keys as stored bytes', () => {
  it('store the two forms identity makes compactly and give every key back exactly', () => {
    const hashed = visitorKey({ secret: 's', rotation: 'daily', ip: '203.0.113.9', userAgent: 'UA', timestampMs: 0 });
    expect(hashed).toMatch(/^h:/);
    expect(encodeVisitorKey(hashed)).toHaveLength(18);
    const uuid = `v:${crypto.randomUUID()}`;
    expect(encodeVisitorKey(uuid)).toHaveLength(17);
    const others = [
      'v:1',
      'v:',
      'h:short',
      `h:${'A'.repeat(23)}`,
      'v:ABCDEF01-2345-6789-abcd-ef0123456789',
      'v:zzzzzzzz-2345-6789-abcd-ef0123456789',
      'v:ünïcødé ✓',
      '',
      'x',
    ];
    for (const k of [hashed, uuid, ...others]) expect(decodeVisitorKey(encodeVisitorKey(k))).toBe(k);
    // Upper-case UUIDs are not the canonical form: stored as text, so they stay distinct from the lower-case one.
    expect(encodeVisitorKey('v:ABCDEF01-2345-6789-abcd-ef0123456789')[0]).toBe(0);
  });

  it('round-trip every hash key (all last characters) and keep distinct keys distinct', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const body = crypto.randomBytes(17).toString('base64url').slice(0, 21) + (alphabet[i % 64] as string);
      for (const k of [`h:${body}`, `v:${crypto.randomUUID()}`, `v:${body}`]) {
        const bytes = encodeVisitorKey(k);
        expect(decodeVisitorKey(bytes)).toBe(k);
        seen.add(bytes.toString('hex'));
      }
    }
    expect(seen.size).toBe(6000);
    // A Uint8Array that is not a Buffer (as some drivers return) decodes the same.
    const k = `h:${'Zz9_'.repeat(5)}Q-`;
    expect(decodeVisitorKey(new Uint8Array(encodeVisitorKey(k)))).toBe(k);
    expect(() => decodeVisitorKey(Buffer.from([9, 1, 2]))).toThrow(/unknown form/);
  });

  it('give the code units of the decoded key without making it (both forms, text, a short buffer)', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const keys = ['', 'x', 'v:ünïcødé ✓', `v:${'y'.repeat(300)}`, 'v:ABCDEF01-2345-6789-abcd-ef0123456789'];
    for (let i = 0; i < 2000; i++) {
      const body = crypto.randomBytes(17).toString('base64url').slice(0, 21) + (alphabet[i % 64] as string);
      keys.push(`h:${body}`, `v:${crypto.randomUUID()}`);
    }
    const out = new Uint16Array(64);
    for (const k of keys) {
      const stored = encodeVisitorKey(k);
      let n = decodeVisitorKeyCodes(stored, out);
      let codes = out;
      if (n < 0) {
        expect(-n).toBe(k.length);
        codes = new Uint16Array(-n);
        n = decodeVisitorKeyCodes(stored, codes);
      }
      expect(String.fromCharCode(...codes.subarray(0, n))).toBe(k);
    }
    expect(decodeVisitorKeyCodes(encodeVisitorKey(`v:${crypto.randomUUID()}`), new Uint16Array(10))).toBe(-38);
  });

  it('encode hash keys as the regex and base64url decoding did, and every near miss as another form', () => {
    /** encodeVisitorKey's hash form as it was written before its decoder (regex, then Buffer.from base64url). */
    const previous = (key: string): Buffer | null => {
      if (!/^h:[A-Za-z0-9_-]{22}$/.test(key)) return null;
      const bytes = Buffer.from(`${key.slice(2)}AA`, 'base64url');
      const out = Buffer.alloc(18);
      out[0] = 1;
      bytes.copy(out, 1, 0, 17);
      return out;
    };
    const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const unit = fc.oneof(
      { weight: 12, arbitrary: fc.constantFrom(...b64) },
      { weight: 1, arbitrary: fc.constantFrom('=', '+', '/', '.', ' ', 'é', '\u0000', '\u{1F600}', '\u0080', '\u00ff') },
    );
    const key = fc.tuple(
      fc.constantFrom('h:', 'h:', 'h:', 'H:', 'h;', 'v:', ''),
      fc.array(unit, { minLength: 20, maxLength: 24 }).map((u) => u.join('')),
    );
    fc.assert(
      fc.property(key, ([prefix, rest]) => {
        const k = prefix + rest;
        const want = previous(k);
        const got = encodeVisitorKey(k);
        if (want !== null) expect([...got]).toEqual([...want]);
        else expect(got[0]).not.toBe(1);
        expect(decodeVisitorKey(got)).toBe(k);
      }),
      { numRuns: 5000 },
    );
    const edges = ['_', 'A', '-', 'z'].map((c) => `h:${c.repeat(22)}`);
    for (const k of edges) expect([...encodeVisitorKey(k)]).toEqual([...(previous(k) as Buffer)]);
  });
});
