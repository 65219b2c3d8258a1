// A long window counted a range of paths at a time (src/analytics/export/range-spill.ts, count-threads.ts
// countRanges): the same answer as countWindow over the whole sets, exactly, whatever the budget (so the number of
// ranges), which sets are resident (kept whole), the threads, the bases and the ordinals' size.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { countWindow } from '../../src/analytics/export/count-paths.ts';
import { createWindowCounter, splitPath } from '../../src/analytics/export/count-threads.ts';
import { type DaySet, daySetLayout, decodeDaySet, encodeDaySet, MAX_VISITOR } from '../../src/analytics/export/daysets.ts';
import { RangeSpill, rangeBounds } from '../../src/analytics/export/range-spill.ts';
import { A, daySetOf, H, visitArb } from './day-set-fixtures.ts';

/** Days of visits, each day with whether it is resident (kept whole). */
const windowArb = fc.array(fc.tuple(fc.array(visitArb(40, 300), { maxLength: 80 }), fc.boolean()), { maxLength: 12 });

/** A spill of `sets` with `budget` bytes: the non-resident ones from their blobs, cut from the bytes (addEncoded) or decoded first, in turn. */
function spillOf(sets: readonly [DaySet, boolean][], budget: number, dir?: string): RangeSpill {
  const spill = new RangeSpill(budget, dir);
  spill.expect(sets.filter(([, resident]) => !resident).length);
  sets.forEach(([s, resident], i) => {
    if (resident) spill.add(s, true);
    else if (i % 2 === 0) spill.addEncoded(s.day, s.version, encodeDaySet(s));
    else spill.add(decodeDaySet(s.day, s.version, encodeDaySet(s)), false);
  });
  return spill;
}

describe('counting a window a range of paths at a time', () => {
  const two = createWindowCounter({ threads: 2, minPairs: 0 });
  const one = createWindowCounter({ threads: 1 });
  two.prepare();
  afterAll(() => Promise.all([two.close(), one.close()]));

  it('answers as countWindow over the whole sets, for random windows, budgets, resident days, bases and threads', async () => {
    let ranged = 0;
    await fc.assert(
      fc.asyncProperty(windowArb, fc.constantFrom(1, 64, 400, 1e9), fc.constantFrom(0, 5000, 2 ** 31), fc.boolean(), async (days, budget, offset, threaded) => {
        const sets = days.map(
          ([rows, resident], d) =>
            [
              daySetOf(
                d,
                rows.map(([p, v, c]) => [p, v + (d % 2 === 0 ? offset : 0), c]),
              ),
              resident,
            ] as [DaySet, boolean],
        );
        const spill = spillOf(sets, budget);
        if (spill.ranges > 1) ranged++;
        try {
          const got = await (threaded ? two : one).countRanges(spill);
          expect(got).toEqual(countWindow(sets.map(([s]) => s)));
          // Twice: the spill reads its ranges again (the arena reused).
          expect(await (threaded ? one : two).countRanges(spill)).toEqual(got);
        } finally {
          spill.close();
        }
      }),
      { numRuns: 200 },
    );
    expect(ranged).toBeGreaterThan(50);
    expect(two.stats.threadFailed).toBe(0);
  });

  it('edge cases: no days, empty days, one path, one pair, every day resident, a path per range', async () => {
    const cases: [DaySet, boolean][][] = [
      [],
      [[daySetOf(1, []), false]],
      [
        [daySetOf(1, []), false],
        [daySetOf(2, [[7, 3, H]]), false],
        [daySetOf(3, []), true],
      ],
      [
        [
          daySetOf(1, [
            [5, 1, H],
            [5, 2, A],
            [5, 9, H],
          ]),
          false,
        ],
        [
          daySetOf(2, [
            [5, 2, H],
            [5, 4, A],
          ]),
          false,
        ],
      ],
      [
        [
          daySetOf(1, [
            [1, 1, H],
            [2, 2, A],
          ]),
          true,
        ],
        [
          daySetOf(2, [
            [1, 2, H],
            [3, 4, A],
          ]),
          true,
        ],
      ],
      Array.from(
        { length: 5 },
        (_, d) =>
          [
            daySetOf(
              d,
              Array.from({ length: 20 }, (_, p) => [p * 3, (p * 7 + d) % 11, (p + d) % 2 ? H : A] as [number, number, number]),
            ),
            d === 2,
          ] as [DaySet, boolean],
      ),
    ];
    for (const c of cases)
      for (const budget of [1, 100, 1e9]) {
        const spill = spillOf(c, budget);
        expect(await two.countRanges(spill)).toEqual(countWindow(c.map(([s]) => s)));
        expect(await one.countRanges(spill)).toEqual(countWindow(c.map(([s]) => s)));
        spill.close();
      }
  });

  it('a spill whose file cannot be made holds its parts in memory: the same answer', async () => {
    const sets = Array.from(
      { length: 6 },
      (_, d) =>
        [
          daySetOf(
            d,
            Array.from({ length: 30 }, (_, i) => [i % 9, (i * 5 + d) % 17, i % 2 ? H : A] as [number, number, number]),
          ),
          d === 0,
        ] as [DaySet, boolean],
    );
    const spill = spillOf(sets, 1, '/nonexistent/inkwell-spill-test');
    expect(spill.ranges).toBeGreaterThan(1);
    expect(spill.spilled).toBe(0);
    expect(await two.countRanges(spill)).toEqual(countWindow(sets.map(([s]) => s)));
    expect(await one.countRanges(spill)).toEqual(countWindow(sets.map(([s]) => s)));
    spill.close();
  });

  it('ordinals near the limits: a day set based above 32 bits (30-bit span), the largest path id, and windows too wide for marks', async () => {
    const big = 2 ** 40;
    const based = [
      daySetOf(1, [
        [0, big, H],
        [0xffff_fffe, big + MAX_VISITOR, A],
        [9, big + 5, A],
      ]),
      daySetOf(2, [
        [0, big + 1, A],
        [0xffff_fffe, big + MAX_VISITOR, H],
        [4, big + 2, H],
      ]),
    ];
    expect(based[0]?.base).toBe(big);
    const low = [
      daySetOf(3, [
        [0, MAX_VISITOR, H],
        [9, 0, A],
        [0xffff_ffff, 1, H],
      ]),
      daySetOf(4, [
        [0, 2 ** 30 - 2, A],
        [0xffff_ffff, 1, A],
      ]),
    ];
    for (const sets of [based, low, [...based, ...low]])
      for (const budget of [1, 1e9]) {
        const spill = spillOf(
          sets.map((s, i) => [s, i === 1] as [DaySet, boolean]),
          budget,
        );
        expect(await two.countRanges(spill)).toEqual(countWindow(sets));
        spill.close();
      }
  });

  it('a blob read up to its pairs (daySetLayout) agrees with the decoded set, for random sets, empty ones and bases above 32 bits', () => {
    fc.assert(
      fc.property(fc.array(visitArb(50, 2000), { maxLength: 100 }), fc.constantFrom(0, 2 ** 31, 2 ** 45), (rows, offset) => {
        const s = daySetOf(
          3,
          rows.map(([p, v, c]) => [p, v + offset, c]),
        );
        const blob = encodeDaySet(s);
        const l = daySetLayout(blob);
        const d = decodeDaySet(3, 1, blob);
        expect(l).not.toBeNull();
        if (!l) return;
        expect([...l.pathIds]).toEqual([...d.pathIds]);
        expect([...l.starts]).toEqual([...d.starts]);
        expect(l.nPairs).toBe(d.pairs.length);
        expect({ base: l.base, min: l.minVisitor, max: l.maxVisitor }).toEqual({ base: d.base, min: d.minVisitor, max: d.maxVisitor });
        const words = new DataView(blob.buffer, blob.byteOffset + l.pairsAt, l.nPairs * 4);
        for (let i = 0; i < l.nPairs; i++) expect(words.getUint32(i * 4, true)).toBe(d.pairs[i]);
      }),
      { numRuns: 150 },
    );
  });

  it('range bounds start at 0, end at 2^32, ascend, and cut a day about evenly; splitPath stays within a range', () => {
    const rows: [number, number, number][] = [];
    for (let p = 0; p < 100; p++) for (let v = 0; v < 10; v++) rows.push([p * 2, v, H]);
    const s = daySetOf(1, rows);
    expect(rangeBounds(s, 1)).toEqual([0, 2 ** 32]);
    expect(rangeBounds(s, 4)).toEqual([0, 50, 100, 150, 2 ** 32]);
    expect(rangeBounds(daySetOf(1, [[5, 1, H]]), 8)).toEqual([0, 5, 2 ** 32]);
    fc.assert(
      fc.property(
        fc.array(visitArb(1000, 50), { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 1, max: 70 }),
        fc.integer({ min: 0, max: 1000 }),
        (rs, k, from) => {
          const d = daySetOf(1, rs);
          const b = rangeBounds(d, k);
          expect(b[0]).toBe(0);
          expect(b[b.length - 1]).toBe(2 ** 32);
          for (let i = 1; i < b.length; i++) expect(b[i] as number).toBeGreaterThan(b[i - 1] as number);
          expect(b.length - 1).toBeLessThanOrEqual(k);
          const mid = splitPath([d], from, from + 300);
          expect(mid).toBeGreaterThanOrEqual(from);
          expect(mid).toBeLessThanOrEqual(from + 300);
        },
      ),
      { numRuns: 200 },
    );
  });
});
