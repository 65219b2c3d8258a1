import crypto from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DedupCache, HashSet64, hashWords } from '../../src/analytics/ingest/writer/dedup-cache.ts';
import { dedupDigest, dedupHash } from '../../src/analytics/segments/dedup.ts';

describe('HashSet64', () => {
  it('holds exactly what a Set<bigint> holds (zero and colliding low words included)', () => {
    const u64 = fc.oneof(
      fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
      fc.constantFrom(0n, 1n, 1n << 32n, (1n << 64n) - 1n),
      // Equal low words, different high words: same probe start.
      fc.bigInt({ min: 0n, max: 15n }).map((h) => (h << 32n) | 7n),
    );
    fc.assert(
      fc.property(fc.array(u64, { maxLength: 300 }), fc.array(u64, { maxLength: 50 }), (added, probes) => {
        const set = new HashSet64();
        const ref = new Set<bigint>();
        for (const h of added) {
          set.addBig(h);
          ref.add(h);
        }
        expect(set.size).toBe(ref.size);
        for (const h of [...added, ...probes]) expect(set.hasBig(h)).toBe(ref.has(h));
        for (const h of added) {
          const [hi, lo] = hashWords(h);
          expect((BigInt(hi) << 32n) | BigInt(lo)).toBe(h);
          expect(set.has(hi, lo)).toBe(true);
        }
      }),
    );
  });
});

describe('DedupCache', () => {
  it('keeps its tables under the byte bound by evicting the least recently used days', () => {
    const cache = new DedupCache(64 * 1024);
    for (let day = 0; day < 20; day++) {
      cache.add(
        1,
        day,
        Array.from({ length: 1000 }, (_, i) => (BigInt(day * 1_000_000 + i + 1) * 0x9e3779b97f4a7c15n) % (1n << 64n)),
        day,
      );
      expect(cache.bytes).toBeLessThanOrEqual(64 * 1024);
    }
    // The last day is held whole; an evicted day comes back empty (read again from its segments).
    expect(cache.entry(1, 19).hashes.size).toBe(1000);
    expect(cache.entry(1, 0).seq).toBe(-1);
  });
});

describe('DedupCache within a transaction', () => {
  it('evicts nothing on an add without eviction: the days caught up for a group stay until checked', () => {
    const cache = new DedupCache(1024);
    const hashes = (day: number) => Array.from({ length: 200 }, (_, i) => BigInt(day * 1000 + i + 1));
    cache.add(1, 1, hashes(1), 5, false);
    cache.add(1, 2, hashes(2), 5, false);
    expect(cache.entry(1, 1).hashes.size).toBe(200);
    expect(cache.entry(1, 2).hashes.size).toBe(200);
    // The next add with eviction brings the cache back under its bound (keeping the day it adds to).
    cache.add(1, 3, hashes(3), 6);
    expect(cache.bytes).toBeLessThanOrEqual(Math.max(1024, cache.entry(1, 3).hashes.bytes));
    expect(cache.entry(1, 3).hashes.size).toBe(200);
  });
});

describe('dedupDigest', () => {
  it('gives the stored 64-bit hash of any key (import or client-supplied) as before: the first 8 bytes of sha256(key)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.stringMatching(/^[0-9a-z]{9}\.[A-Za-z0-9_-]{32}$/)), (key) => {
        const before = crypto.createHash('sha256').update(key).digest().readBigUInt64BE(0);
        const d = dedupDigest(key);
        expect(dedupHash(key)).toBe(before);
        expect((BigInt(d.readUInt32BE(0)) << 32n) | BigInt(d.readUInt32BE(4))).toBe(before);
      }),
    );
  });
});
