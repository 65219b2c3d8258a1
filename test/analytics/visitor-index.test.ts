import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type HeldKeys, VisitorHashIndex } from '../../src/analytics/ingest/writer/visitor-index.ts';

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

  describe('held keys (one word a slot: ordinal and tag; the key store holds the key)', () => {
    /** A key store holding the keys of the ordinals in `held` (as visitor-keys.ts would: for good). */
    function heldKeys(): HeldKeys & { map: Map<number, string>; reads: number; codes: Uint16Array } {
      return {
        map: new Map(),
        reads: 0,
        codes: new Uint16Array(64),
        holds(ord) {
          return this.map.has(ord);
        },
        keyCodesOf(ord) {
          this.reads++;
          const key = this.map.get(ord);
          if (key === undefined) return -1;
          if (this.codes.length < key.length) this.codes = new Uint16Array(key.length);
          for (let i = 0; i < key.length; i++) this.codes[i] = key.charCodeAt(i);
          return key.length;
        },
      };
    }

    it('finds every key, held or not, through growths and tag cuts, in 4 bytes a held slot', () => {
      const keys = heldKeys();
      const index = new VisitorHashIndex(16, [11, 12], keys);
      const n = 200_000;
      // The first 150,000 held (a key store's prefix), the rest not: ordinals cross 2^17, so tags are cut to 15 bits.
      for (let i = 1; i <= n; i++) {
        const key = `v:${i.toString(36)}-visitor`;
        if (i <= 150_000) keys.map.set(i, key);
        index.add(key, i);
      }
      expect(index.size).toBe(n);
      let missing = 0;
      for (let i = 1; i <= n; i++) if (!candidates(index, `v:${i.toString(36)}-visitor`).includes(i)) missing++;
      expect(missing).toBe(0);
      // Held entries in 4-byte slots 64–80% full, the others in 8-byte ones (plus the 16 slots a shard has at least).
      const bound = 4 * Math.ceil(150_000 / 0.64) + 8 * Math.ceil(50_000 / 0.64) + 64 * 12 * 16;
      expect(index.bytes).toBeLessThanOrEqual(bound);
      expect(index.bytes).toBeGreaterThanOrEqual(4 * Math.floor(150_000 / 0.8) + 8 * Math.floor(50_000 / 0.8));
      // Growths computed held entries' hashes again from their keys.
      expect(keys.reads).toBeGreaterThan(150_000);
      // Absent keys: held candidates need shard, home region and a 15-bit tag equal (the caller compares the key).
      let false_ = 0;
      for (let i = 0; i < 20_000; i++) false_ += candidates(index, `h:absent-${i}`).length;
      expect(false_).toBeLessThanOrEqual(40);
    });

    it('with no tag bits left (an ordinal of 32 bits) every held entry on the probe path is a candidate, and the key is still found', () => {
      const keys = heldKeys();
      const index = new VisitorHashIndex(16, [3, 4], keys);
      const ords = Array.from({ length: 3_000 }, (_, i) => i + 1);
      ords.push(0xffff_fff0);
      for (const o of ords) {
        keys.map.set(o, `v:k${o}`);
        index.add(`v:k${o}`, o);
      }
      let offered = 0;
      for (const o of ords) {
        const c = candidates(index, `v:k${o}`);
        expect(c).toContain(o);
        offered += c.length;
      }
      // More candidates than keys (tags of 0 bits), each one a held ordinal.
      expect(offered).toBeGreaterThan(ords.length);
      for (const o of candidates(index, 'v:absent')) expect(keys.map.has(o)).toBe(true);
    });

    it('keeps ordinals past 32 bits, and the keys the store does not hold, with their hash', () => {
      const keys = heldKeys();
      const index = new VisitorHashIndex(16, [5, 6], keys);
      keys.map.set(2 ** 33, 'v:wide');
      index.add('v:wide', 2 ** 33);
      index.add('v:unheld', 7);
      keys.map.set(8, 'v:held');
      index.add('v:held', 8);
      expect(candidates(index, 'v:wide')).toEqual([2 ** 33]);
      expect(candidates(index, 'v:unheld')).toEqual([7]);
      expect(candidates(index, 'v:held')).toContain(8);
    });

    it('sized for a whole dictionary at once, hashes few keys again while loading it', () => {
      const keys = heldKeys();
      const index = new VisitorHashIndex(undefined, [9, 10], keys);
      index.reserveHeld(50_000);
      const reserved = index.bytes;
      for (let i = 1; i <= 50_000; i++) {
        keys.map.set(i, `v:${i}`);
        index.add(`v:${i}`, i);
      }
      // Without it every entry is hashed again ~4 times; here only in the few shards (195 ± 14 entries each) past
      // their tenth of headroom.
      expect(keys.reads).toBeLessThan(50_000 / 5);
      expect(reserved).toBeGreaterThanOrEqual((4 * 1.1 * 50_000) / 0.8);
      expect(index.bytes).toBeLessThan(reserved * 1.1);
      for (let i = 1; i <= 50_000; i += 37) expect(candidates(index, `v:${i}`)).toContain(i);
      // Not once entries are in.
      index.reserveHeld(10 ** 7);
      expect(index.bytes).toBeLessThan(reserved * 1.1);
    });

    it('refuses to grow when a held key is gone (the key store never drops one)', () => {
      const keys = heldKeys();
      const index = new VisitorHashIndex(16, [7, 8], keys);
      expect(() => {
        for (let i = 1; i <= 10_000; i++) {
          keys.map.set(i, `v:${i}`);
          index.add(`v:${i}`, i);
          keys.map.delete(i);
        }
      }).toThrow(/has no key/);
    });

    it('agrees with a Map for any keys, any held prefix and any order of additions, held ones added by key or by ordinal', () => {
      fc.assert(
        fc.property(fc.uniqueArray(fc.string({ maxLength: 40 }), { maxLength: 600 }), fc.nat(), fc.integer({ min: 0, max: 2 ** 31 }), (list, cut, base) => {
          const keys = heldKeys();
          const index = new VisitorHashIndex(1, undefined, keys);
          const heldUpTo = list.length === 0 ? 0 : cut % (list.length + 1);
          const truth = new Map<string, number>();
          for (const [i, k] of list.entries()) {
            const ord = base + i + 1;
            if (i < heldUpTo) keys.map.set(ord, k);
            // A held one is added either from its key or from the key store's copy (addHeldOrd, as a load does).
            if (i < heldUpTo && ord % 2 === 0) expect(index.addHeldOrd(ord)).toBe(true);
            else {
              if (i >= heldUpTo) expect(index.addHeldOrd(ord)).toBe(false);
              index.add(k, ord);
            }
            truth.set(k, ord);
          }
          expect(index.size).toBe(truth.size);
          for (const [k, ord] of truth) {
            const c = candidates(index, k);
            expect(c).toContain(ord);
            // Every other candidate is a held ordinal (confirmed by its key) or an unheld one of the same hash.
            for (const o of c) if (o !== ord) expect(keys.map.get(o) === k).toBe(false);
          }
        }),
        { numRuns: 100 },
      );
    });
  });
});
