import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DedupCache, HashSet64, hashWords } from '../../src/analytics/ingest/dedup-cache.ts';

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
