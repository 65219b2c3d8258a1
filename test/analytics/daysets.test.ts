import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countWindow } from '../../src/analytics/export/count-paths.ts';
import {
  buildDaySet,
  buildDaySetFromWords,
  DaySetFormatError,
  DaySetIdRangeError,
  decodeDaySet,
  densify,
  encodeDaySet,
  FLAG_AI,
  FLAG_HUMAN,
  MarkBuffer,
  pairFlags,
  pairVisitor,
  siteWideCounts,
} from '../../src/analytics/export/daysets.ts';
import { PathDictionary } from '../../src/analytics/export/path-order.ts';
import { compareRows, type PathRow } from '../../src/analytics/export/rows.ts';
import { A, daySetOf, H, naiveCounts, visitArb } from './day-set-fixtures.ts';

describe('day sets: build, encode, decode', () => {
  it('merges the classes of one (path, visitor) into flags and keeps paths and visitors sorted', () => {
    const s = daySetOf(7, [
      [5, 9, H],
      [5, 9, A],
      [5, 3, A],
      [2, 9, H],
    ]);
    expect([...s.pathIds]).toEqual([2, 5]);
    expect([...s.starts]).toEqual([0, 1, 3]);
    expect([...s.pairs].map(pairVisitor)).toEqual([9, 3, 9]);
    expect([...s.pairs].map(pairFlags)).toEqual([FLAG_HUMAN, FLAG_AI, FLAG_HUMAN | FLAG_AI]);
    expect([s.minVisitor, s.maxVisitor]).toEqual([3, 9]);
  });

  it('refuses unsorted rows, unknown classes, path ids beyond 32 bits and a day whose visitors span more than 30 bits', () => {
    expect(() => buildDaySet(1, 1, [2, 1], [1, 1], [H, H], H, A)).toThrow(/sorted/);
    expect(() => buildDaySet(1, 1, [1], [1], [3], H, A)).toThrow(/class/);
    expect(() => buildDaySet(1, 1, [2 ** 32], [1], [H], H, A)).toThrow(DaySetIdRangeError);
    expect(() => buildDaySet(1, 1, [1, 1], [1, 2 ** 30 + 1], [H, H], H, A)).toThrow(DaySetIdRangeError);
    expect(buildDaySet(1, 1, [2 ** 32 - 1], [2 ** 30 - 1], [A], H, A).maxVisitor).toBe(2 ** 30 - 1);
  });

  it('holds visitor ordinals beyond 30 bits relative to a base, through the encoding too', () => {
    const big = 2 ** 40;
    const s = daySetOf(4, [
      [1, big + 7, H],
      [1, big, A],
      [2, big + 2 ** 30 - 1, H],
    ]);
    expect(s.base).toBe(big);
    expect([s.minVisitor, s.maxVisitor]).toEqual([big, big + 2 ** 30 - 1]);
    expect([...s.pairs].map(pairVisitor)).toEqual([0, 7, 2 ** 30 - 1]);
    expect(decodeDaySet(4, 1, encodeDaySet(s))).toEqual(s);
    expect(daySetOf(4, [[1, 2 ** 30 - 1, H]]).base).toBe(0);
  });

  it('round-trips through the encoding for random sets, including large ids and empty days', () => {
    fc.assert(
      fc.property(
        fc.array(visitArb(50, 300), { maxLength: 300 }),
        fc.integer({ min: 0, max: 2 ** 30 - 400 }),
        fc.integer({ min: 0, max: 2 ** 32 - 60 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        (rows, visitorOffset, pathOffset, version) => {
          const shifted = rows.map(([p, v, c]) => [p + pathOffset, v + visitorOffset, c] as [number, number, number]);
          const s = daySetOf(20_000, shifted, version);
          const blob = encodeDaySet(s);
          const back = decodeDaySet(20_000, version, blob);
          expect(back).toEqual(s);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('encodes pairs as 4-byte words after a small path header', () => {
    const rows: [number, number, number][] = [];
    for (let p = 1; p <= 200; p++) for (let v = 0; v < 50; v++) rows.push([p, 1000 + p * 7 + v * 13, v % 3 === 0 ? A : H]);
    const s = daySetOf(1, rows);
    const blob = encodeDaySet(s);
    expect(blob.length).toBeGreaterThanOrEqual(s.pairs.length * 4);
    expect(blob.length).toBeLessThan(s.pairs.length * 4 + s.pathIds.length * 3 + 16);
  });

  it('still reads format 1 blobs (delta varints), as written before format 2', () => {
    fc.assert(
      fc.property(fc.array(visitArb(40, 5000), { maxLength: 200 }), fc.integer({ min: 0, max: 2 ** 30 - 6000 }), (rows, offset) => {
        const s = daySetOf(
          5,
          rows.map(([p, v, c]) => [p, v + offset, c]),
          3,
        );
        const bytes: number[] = [];
        const varint = (v: number) => {
          while (v >= 0x80) {
            bytes.push((v % 0x80) | 0x80);
            v = Math.floor(v / 0x80);
          }
          bytes.push(v);
        };
        varint(1);
        varint(s.pathIds.length);
        varint(s.pairs.length);
        let prev = 0;
        for (let k = 0; k < s.pathIds.length; k++) {
          varint((s.pathIds[k] as number) - prev);
          prev = s.pathIds[k] as number;
          varint((s.starts[k + 1] as number) - (s.starts[k] as number));
        }
        for (let k = 0; k < s.pathIds.length; k++) {
          let pv = 0;
          for (let i = s.starts[k] as number; i < (s.starts[k + 1] as number); i++) {
            const v = pairVisitor(s.pairs[i] as number);
            varint((v - pv) * 4 + pairFlags(s.pairs[i] as number));
            pv = v;
          }
        }
        expect(decodeDaySet(5, 3, new Uint8Array(bytes))).toEqual(s);
      }),
      { numRuns: 100 },
    );
  });

  it('refuses truncated, padded or foreign blobs with a format error', () => {
    const blob = encodeDaySet(
      daySetOf(1, [
        [1, 5, H],
        [1, 900, A],
        [3, 70_000, H],
      ]),
    );
    expect(() => decodeDaySet(1, 1, blob.slice(0, blob.length - 1))).toThrow(DaySetFormatError);
    expect(() => decodeDaySet(1, 1, new Uint8Array([...blob, 0]))).toThrow(DaySetFormatError);
    expect(() => decodeDaySet(1, 1, new Uint8Array([9, 0, 0]))).toThrow(DaySetFormatError);
    expect(() => decodeDaySet(1, 1, new Uint8Array([]))).toThrow(DaySetFormatError);
  });
});

describe('day sets: counting a window', () => {
  it('counts site-wide marks a word at a time as one byte at a time would, one array or two, at any size and offset', () => {
    const byByte = (a: Uint8Array, b: Uint8Array | null, size: number) => {
      const out = { human: 0, ai: 0, total: 0 };
      for (let v = 0; v < size; v++) {
        const m = (a[v] as number) | (b === null ? 0 : (b[v] as number));
        if (m === 0) continue;
        out.total++;
        out.human += (m >>> 2) & 1;
        out.ai += (m >>> 3) & 1;
      }
      return out;
    };
    const site = fc.constantFrom(0, 0, 0, 4, 8, 12);
    fc.assert(
      fc.property(
        fc.array(site, { maxLength: 200 }),
        fc.array(site, { maxLength: 200 }),
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        (xs, ys, offset, two) => {
          const size = Math.min(xs.length, ys.length + (two ? 0 : 1_000));
          // Over shared memory at a byte offset, as a count thread's marks may be, and with bytes past `size` set.
          const a = new Uint8Array(new SharedArrayBuffer(offset + xs.length + 4), offset, xs.length + 4).fill(12);
          a.set(xs);
          const b = two ? Uint8Array.from([...ys, 12, 12, 12, 12]) : null;
          expect(siteWideCounts(a, b, size)).toEqual(byByte(a, b, size));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('is exact for random windows (per path and site-wide), with a reused marks buffer', () => {
    const marks = new MarkBuffer();
    fc.assert(
      fc.property(fc.array(fc.array(visitArb(12, 40), { maxLength: 60 }), { maxLength: 8 }), fc.integer({ min: 0, max: 5000 }), (days, offset) => {
        const shifted = days.map((rows) => rows.map(([p, v, c]) => [p, v + offset, c] as [number, number, number]));
        const c = countWindow(
          shifted.map((rows, d) => daySetOf(d, rows)),
          marks,
        );
        const want = naiveCounts(shifted);
        expect(c.totals).toEqual(want.totals);
        expect([...c.pathIds].map((id, i) => ({ id, human: c.human[i] as number, ai: c.ai[i] as number, total: c.total[i] as number }))).toEqual(want.rows);
      }),
      { numRuns: 300 },
    );
  });

  it('is exact for windows whose sets have different bases, and for windows too wide for a marks array (renumbered)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(visitArb(6, 20), { maxLength: 30 }), { maxLength: 6 }),
        fc.array(fc.constantFrom(0, 2 ** 31, 2 ** 31 + 5, 2 ** 45), { minLength: 6, maxLength: 6 }),
        (days, offsets) => {
          // Each day's visitors offset by one of a few large values: bases differ, spans may be huge.
          const shifted = days.map((rows, d) => rows.map(([p, v, c]) => [p, v + (offsets[d] as number), c] as [number, number, number]));
          const sets = shifted.map((rows, d) => daySetOf(d, rows));
          const c = countWindow(sets);
          const want = naiveCounts(shifted);
          expect(c.totals).toEqual(want.totals);
          expect([...c.pathIds].map((id, i) => ({ id, human: c.human[i] as number, ai: c.ai[i] as number, total: c.total[i] as number }))).toEqual(want.rows);
          expect(countWindow(densify(sets)).totals).toEqual(want.totals);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('renumbers more distinct visitors than a V8 Set or Map holds (2^24) for a window too wide for marks', () => {
    // One day of 2^24 + 2 visitors far up the ordinals, another with one visitor at 0: the span forces densify.
    const n = 2 ** 24 + 2;
    const words = new Uint32Array(n);
    for (let i = 0; i < n; i++) words[i] = i * 4 + FLAG_HUMAN;
    const wide = buildDaySetFromWords(1, 1, 2 ** 40, [7], [words]);
    const low = daySetOf(2, [[7, 0, H]]);
    const dense = densify([low, wide]);
    expect(dense[0]?.pairs[0]).toBe(FLAG_HUMAN);
    expect(dense[1]?.minVisitor).toBe(1);
    expect(dense[1]?.maxVisitor).toBe(n);
    const c = countWindow([low, wide]);
    expect(c.totals).toEqual({ human: n + 1, ai: 0, total: n + 1 });
    expect([...c.total]).toEqual([n + 1]);
  }, 120_000);

  it('counts a visitor seen as human on one day and as AI on another once in total', () => {
    const c = countWindow([daySetOf(1, [[1, 10, H]]), daySetOf(2, [[1, 10, A]]), daySetOf(3, [[2, 10, A]])]);
    expect(c.totals).toEqual({ human: 1, ai: 1, total: 1 });
    expect([...c.total]).toEqual([1, 1]);
    expect([...c.human]).toEqual([1, 0]);
    expect([...c.ai]).toEqual([1, 1]);
  });

  it('gives an empty answer for no days or empty days', () => {
    expect(countWindow([]).totals).toEqual({ human: 0, ai: 0, total: 0 });
    expect(countWindow([daySetOf(1, [])]).pathIds.length).toBe(0);
  });
});

describe('path order', () => {
  const pathArb = fc.oneof(
    fc.constantFrom('/', '/a', '/A', '/b', '/a/b', '/é', '/日本', '/😀', '/z', '/a-b', '/a_b'),
    fc.string({ minLength: 1, maxLength: 6 }).map((s) => `/${s}`),
  );

  it('orders rows exactly as compareRows (total desc, path asc in UTF-16 order), also after new paths arrive', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(pathArb, { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 40, maxLength: 40 }),
        fc.integer({ min: 0, max: 39 }),
        (paths, totals, split) => {
          const dict = new PathDictionary();
          const cut = Math.min(split, paths.length);
          for (const [i, p] of paths.slice(0, cut).entries()) dict.add(i + 100, p);
          // Rank once with part of the paths, then add the rest (ranks must be recomputed).
          if (cut > 0) {
            const ids = Uint32Array.from(paths.slice(0, cut), (_, i) => i + 100);
            dict.orderedRows({
              totals: { human: 0, ai: 0, total: 0 },
              pathIds: ids,
              human: new Uint32Array(cut),
              ai: new Uint32Array(cut),
              total: new Uint32Array(cut).fill(1),
            });
          }
          for (const [i, p] of paths.slice(cut).entries()) dict.add(i + cut + 100, p);
          const n = paths.length;
          const total = Uint32Array.from(paths, (_, i) => totals[i] as number);
          const human = Uint32Array.from(total, (t) => t - 1);
          const ai = Uint32Array.from(total, () => 1);
          const rows = dict.orderedRows({ totals: { human: 0, ai: 0, total: 0 }, pathIds: Uint32Array.from(paths, (_, i) => i + 100), human, ai, total });
          const want: PathRow[] = paths
            .map((path, i) => ({ path, human: human[i] as number, ai: ai[i] as number, total: total[i] as number }))
            .sort(compareRows);
          expect(rows).toEqual(want);
          expect(rows.length).toBe(n);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('refuses a path id it does not know', () => {
    const dict = new PathDictionary();
    dict.add(1, '/a');
    const one = Uint32Array.of(1);
    expect(() => dict.orderedRows({ totals: { human: 0, ai: 0, total: 0 }, pathIds: Uint32Array.of(2), human: one, ai: one, total: one })).toThrow(/no text/);
  });
});
