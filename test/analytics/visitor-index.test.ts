import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VisitorHashIndex } from '../../src/analytics/ingest/writer/visitor-index.ts';

function candidates(index: VisitorHashIndex, key: string): number[] {
  const out: number[] = [];
  index.candidates(key, out);
  return out;
}

describe('VisitorHashIndex', () => {
  it('finds every key added, through many growths, and almost never offers a candidate for an absent key', () => {
    const index = new VisitorHashIndex(16);
    const n = 60_000;
    for (let i = 1; i <= n; i++) index.add(`v:${i.toString(36)}-visitor`, i);
    expect(index.size).toBe(n);
    for (let i = 1; i <= n; i++) expect(candidates(index, `v:${i.toString(36)}-visitor`)).toContain(i);
    let false_ = 0;
    for (let i = 0; i < 20_000; i++) false_ += candidates(index, `h:absent-${i}`).length;
    // 64 shards of ~1,200 slots: the top ~10 bits of the 32-bit hash place an entry, so ~2^-22 per entry compared
    // (a few per lookup): ~0.02 expected in 20k.
    expect(false_).toBeLessThanOrEqual(3);
    // 64–80% full, 8 bytes a slot (plus the 16 slots a shard has at least).
    expect(index.bytes).toBeLessThanOrEqual(8 * Math.ceil(n / 0.64) + 64 * 8 * 16);
    expect(index.bytes).toBeGreaterThanOrEqual(8 * Math.floor(n / 0.8));
  });

  it('grows a shard at a time: no growth allocates more than a few hundredths of the whole', () => {
    const index = new VisitorHashIndex(16, [7, 8]);
    let before = index.bytes;
    let largest = 0;
    for (let i = 1; i <= 200_000; i++) {
      index.add(`v:${i}`, i);
      const now = index.bytes;
      if (now !== before) largest = Math.max(largest, (now - before) / before);
      before = now;
    }
    // A shard (1/64 of the slots) grows by a quarter, and while it does both its tables live: at most 1/64 × 2.25.
    expect(largest).toBeLessThan(0.01);
    for (let i = 1; i <= 200_000; i += 997) expect(candidates(index, `v:${i}`)).toContain(i);
  });

  it('keeps 32-bit ordinals until one needs more, then every entry in 64-bit ones, through growths', () => {
    const index = new VisitorHashIndex(16, [5, 6]);
    for (let i = 1; i <= 100; i++) index.add(`v:${i}`, i);
    const small = index.bytes;
    index.add('v:big', 2 ** 40 + 3);
    expect(index.bytes).toBe(small + small / 2);
    for (let i = 101; i <= 1_000; i++) index.add(`v:${i}`, i);
    for (let i = 1; i <= 1_000; i++) expect(candidates(index, `v:${i}`)).toContain(i);
    expect(candidates(index, 'v:big')).toContain(2 ** 40 + 3);
  });

  it('keeps several entries under one hash: every one is a candidate (callers confirm the stored key)', () => {
    const index = new VisitorHashIndex(4, [1, 2]);
    index.add('v:same', 5);
    index.add('v:same', 9);
    index.add('v:other', 7);
    expect(candidates(index, 'v:same').sort()).toEqual([5, 9]);
    expect(candidates(index, 'v:other')).toEqual([7]);
    expect(candidates(index, 'v:none')).toEqual([]);
  });

  it('is seeded: two instances hash differently, both find their keys', () => {
    const a = new VisitorHashIndex(8, [1, 2]);
    const b = new VisitorHashIndex(8, [3, 4]);
    a.add('v:x', 1);
    b.add('v:x', 1);
    expect(candidates(a, 'v:x')).toEqual([1]);
    expect(candidates(b, 'v:x')).toEqual([1]);
  });

  it('refuses ordinals that are not positive safe integers', () => {
    const index = new VisitorHashIndex();
    expect(() => index.add('v:a', 0)).toThrow();
    expect(() => index.add('v:a', 1.5)).toThrow();
    expect(() => index.add('v:a', 2 ** 53)).toThrow();
    index.add('v:big', 2 ** 32 + 7);
    expect(candidates(index, 'v:big')).toEqual([2 ** 32 + 7]);
  });

  it('finds arbitrary keys (unicode, empty, long)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ maxLength: 300 }), { maxLength: 400 }), (keys) => {
        const index = new VisitorHashIndex(1);
        for (const [i, k] of keys.entries()) index.add(k, i + 1);
        for (const [i, k] of keys.entries()) expect(candidates(index, k)).toContain(i + 1);
      }),
      { numRuns: 50 },
    );
  });
});
