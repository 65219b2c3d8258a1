// Counting a window in two threads (src/analytics/export/count-threads.ts): the same answer as countWindow in one
// thread, exactly, whatever the split, the sets' memory (shared or copied), the bases, and counts asked at once.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { countPaths, countWindow } from '../../src/analytics/export/count-paths.ts';
import { createWindowCounter, splitPath } from '../../src/analytics/export/count-threads.ts';
import { type DaySet, decodeDaySet, encodeDaySet, isShared, windowRange } from '../../src/analytics/export/daysets.ts';
import { A, daySetOf, H, visitArb } from './day-set-fixtures.ts';

/** The same set over plain (unshared) arrays: the counter copies it into shared memory. */
const unshared = (s: DaySet): DaySet => ({ ...s, pathIds: s.pathIds.slice(), starts: s.starts.slice(), pairs: s.pairs.slice() });

const windowArb = fc.array(fc.array(visitArb(30, 300), { maxLength: 80 }), { maxLength: 10 });

describe('counting a window in two threads', () => {
  const counter = createWindowCounter({ threads: 2, minPairs: 0 });
  counter.prepare();
  afterAll(() => counter.close());

  it('answers as countWindow in one thread, for random windows, shared or copied sets and different bases', async () => {
    await fc.assert(
      fc.asyncProperty(windowArb, fc.constantFrom(0, 5000, 2 ** 31), fc.boolean(), async (days, offset, copy) => {
        const sets = days.map((rows, d) =>
          daySetOf(
            d,
            rows.map(([p, v, c]) => [p, v + (d % 2 === 0 ? offset : 0), c]),
          ),
        );
        for (const s of sets) expect(isShared(s)).toBe(true);
        const got = await counter.count(copy ? sets.map(unshared) : sets);
        expect(got).toEqual(countWindow(sets));
      }),
      { numRuns: 150 },
    );
    expect(counter.stats.threaded).toBeGreaterThan(100);
    expect(counter.stats.threadFailed).toBe(0);
  });

  it('answers counts asked at once each exactly (they take turns with the marks arrays)', async () => {
    const windows = fc.sample(windowArb, { numRuns: 12, seed: 7 }).map((days) => days.map((rows, d) => daySetOf(d, rows)));
    const got = await Promise.all(windows.map((w) => counter.count(w)));
    expect(got).toEqual(windows.map((w) => countWindow(w)));
  });

  it('decoded sets are in shared memory; windows too wide for marks and small ones are counted in this thread, the same', async () => {
    const s = daySetOf(1, [
      [1, 10, H],
      [2, 11, A],
    ]);
    expect(isShared(decodeDaySet(1, 1, encodeDaySet(s)))).toBe(true);
    const wide = [daySetOf(1, [[3, 0, H]]), daySetOf(2, [[3, 2 ** 40, A]])];
    const before = counter.stats.threaded;
    expect(await counter.count(wide)).toEqual(countWindow(wide));
    expect(counter.stats.threaded).toBe(before);
    const one = createWindowCounter({ threads: 1, minPairs: 0 });
    one.prepare();
    expect(await one.count([s])).toEqual(countWindow([s]));
    expect(one.stats.threaded).toBe(0);
    await one.close();
  });

  it('splits where about half the pairs lie, and the two ranges of paths add up to the window', () => {
    fc.assert(
      fc.property(windowArb, (days) => {
        const { sets, base, top } = windowRange(days.map((rows, d) => daySetOf(d, rows)));
        const split = splitPath(sets);
        const marks = new Uint8Array(Math.max(0, top - base + 1));
        const low = countPaths(sets, marks, base, 0, split);
        const high = countPaths(sets, marks, base, split);
        const all = countWindow(sets);
        expect([...low.pathIds, ...high.pathIds]).toEqual([...all.pathIds]);
        expect([...low.total, ...high.total]).toEqual([...all.total]);
        for (const id of low.pathIds) expect(id).toBeLessThan(split);
      }),
      { numRuns: 100 },
    );
    // Pairs by path: 10, 10, 10, 10 → the upper half starts at the third path.
    const rows: [number, number, number][] = [];
    for (const p of [1, 2, 3, 4]) for (let v = 0; v < 10; v++) rows.push([p, v, H]);
    expect(splitPath([daySetOf(1, rows)])).toBe(3);
  });
});
