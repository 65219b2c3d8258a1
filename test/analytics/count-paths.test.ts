import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COUNT_SHAPE, type CountShape, countPaths, countPathsMerged, countWindow } from '../../src/analytics/export/count-paths.ts';
import { type DaySet, lowerBound, MarkBuffer, type PathRows, siteWideCounts, windowRange } from '../../src/analytics/export/daysets.ts';
import { A, daySetOf, H, naiveCounts, visitArb } from './day-set-fixtures.ts';

const rowsOf = (c: PathRows) => [...c.pathIds].map((id, i) => ({ id, human: c.human[i] as number, ai: c.ai[i] as number, total: c.total[i] as number }));

/** Shapes small enough that a few dozen pairs reach every branch: chunks of a few pairs, paths counted in place, blocks of 2–16 visitors, the merge. */
const shapeArb: fc.Arbitrary<CountShape> = fc.record({
  chunkPairs: fc.integer({ min: 1, max: 40 }),
  blockMinPairs: fc.integer({ min: 1, max: 12 }),
  blockBits: fc.integer({ min: 1, max: 4 }),
  maxPathSpan: fc.constantFrom(1, 5, 1 << 20),
});

/** The merge's answer over the same sets and range (the count before gathering). */
function merged(sets: readonly DaySet[], marks: Uint8Array, base: number, from: number, to: number): PathRows {
  return countPathsMerged(
    sets,
    marks,
    base,
    Int32Array.from(sets, (s) => lowerBound(s.pathIds, from)),
    Int32Array.from(sets, (s) => lowerBound(s.pathIds, to)),
  );
}

describe('counting the paths of a window (count-paths.ts)', () => {
  it('is exact however the work is cut: chunks, paths counted in place, blocks of visitors, or the merge', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(visitArb(12, 60), { maxLength: 50 }), { maxLength: 9 }),
        fc.integer({ min: 0, max: 3000 }),
        shapeArb,
        (days, offset, shape) => {
          const shifted = days.map((rows) => rows.map(([p, v, c]) => [p, v + offset, c] as [number, number, number]));
          const c = countWindow(
            shifted.map((rows, d) => daySetOf(d, rows)),
            new MarkBuffer(),
            shape,
          );
          const want = naiveCounts(shifted);
          expect(c.totals).toEqual(want.totals);
          expect(rowsOf(c)).toEqual(want.rows);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('counts ranges of paths one after the other on the same marks, as one count of them all would', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(visitArb(20, 50), { maxLength: 60 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 0, max: 21 }), { maxLength: 4 }),
        shapeArb,
        (days, cuts, shape) => {
          const { sets, base, top } = windowRange(days.map((rows, d) => daySetOf(d, rows)));
          const size = Math.max(top - base + 1, 1);
          const bounds = [0, ...[...new Set(cuts)].sort((a, b) => a - b), 0x1_0000_0000];
          const marks = new Uint8Array(size);
          const before = new Uint8Array(size);
          const parts: PathRows[] = [];
          const old: PathRows[] = [];
          for (let r = 0; r + 1 < bounds.length; r++) {
            parts.push(countPaths(sets, marks, base, bounds[r], bounds[r + 1], shape));
            old.push(merged(sets, before, base, bounds[r] as number, bounds[r + 1] as number));
          }
          expect(parts.flatMap(rowsOf)).toEqual(old.flatMap(rowsOf));
          expect(parts.flatMap(rowsOf)).toEqual(naiveCounts(days).rows);
          expect(siteWideCounts(marks, null, size)).toEqual(naiveCounts(days).totals);
          // Only the site-wide bits are left, as the merge leaves them.
          expect(marks).toEqual(before);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives a row to a path a day holds without pairs, and each set of rows arrays of its own', () => {
    const bare: DaySet = {
      day: 1,
      version: 1,
      base: 0,
      pathIds: Uint32Array.of(3, 5),
      starts: Uint32Array.of(0, 0, 2),
      pairs: Uint32Array.of(7 * 4 + H, 9 * 4 + A),
      minVisitor: 7,
      maxVisitor: 9,
    };
    for (const shape of [COUNT_SHAPE, { chunkPairs: 1, blockMinPairs: 1, blockBits: 1, maxPathSpan: 1 << 20 }, { ...COUNT_SHAPE, maxPathSpan: 1 }]) {
      const rows = countPaths([bare, daySetOf(2, [[5, 9, H]])], new Uint8Array(10), 0, 0, 0x1_0000_0000, shape);
      expect(rowsOf(rows)).toEqual([
        { id: 3, human: 0, ai: 0, total: 0 },
        { id: 5, human: 2, ai: 1, total: 2 },
      ]);
      const buffers = new Set([rows.pathIds, rows.human, rows.ai, rows.total].map((a) => a.buffer));
      expect(buffers.size).toBe(4);
    }
    const none = countPaths([bare], new Uint8Array(10), 0, 6, 9);
    expect(new Set([none.pathIds, none.human, none.ai, none.total].map((a) => a.buffer)).size).toBe(4);
  });

  it('counts path ids far apart (beyond the per-path tables) through the merge, exactly', () => {
    const days = [
      [
        [0, 4, H],
        [2 ** 32 - 1, 4, A],
      ],
      [
        [0, 5, A],
        [2 ** 32 - 1, 4, H],
      ],
    ] as [number, number, number][][];
    const c = countWindow(days.map((rows, d) => daySetOf(d, rows)));
    expect(rowsOf(c)).toEqual(naiveCounts(days).rows);
    expect(c.totals).toEqual(naiveCounts(days).totals);
  });
});
