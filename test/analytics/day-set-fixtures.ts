// Day sets from visit rows for the counting tests (daysets, count-threads, range-spill): a row is (path id,
// visitor ordinal, class), the class H (human) or A (ai).
import fc from 'fast-check';
import { buildDaySet, type DaySet } from '../../src/analytics/export/daysets.ts';

export const H = 1;
export const A = 2;

/** A day set of `rows` (duplicates dropped, sorted as the daily-visits table holds them). */
export function daySetOf(day: number, rows: readonly [number, number, number][], version = 1): DaySet {
  const uniq = [...new Map(rows.map((r) => [r.join(':'), r])).values()].sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  return buildDaySet(
    day,
    version,
    uniq.map((r) => r[0]),
    uniq.map((r) => r[1]),
    uniq.map((r) => r[2]),
    H,
    A,
  );
}

/** A visit row with a path id up to `maxPath` and a visitor up to `maxVisitor`. */
export const visitArb = (maxPath: number, maxVisitor: number) =>
  fc.tuple(fc.integer({ min: 0, max: maxPath }), fc.integer({ min: 0, max: maxVisitor }), fc.constantFrom(H, A)) as fc.Arbitrary<[number, number, number]>;

/** The answer by brute force: sets per path and site-wide. */
export function naiveCounts(days: readonly (readonly [number, number, number][])[]) {
  const per = new Map<number, { h: Set<number>; a: Set<number>; t: Set<number> }>();
  const all = { h: new Set<number>(), a: new Set<number>(), t: new Set<number>() };
  for (const rows of days) {
    for (const [p, v, c] of rows) {
      let e = per.get(p);
      if (!e) {
        e = { h: new Set(), a: new Set(), t: new Set() };
        per.set(p, e);
      }
      (c === H ? e.h : e.a).add(v);
      e.t.add(v);
      (c === H ? all.h : all.a).add(v);
      all.t.add(v);
    }
  }
  const ids = [...per.keys()].sort((a, b) => a - b);
  return {
    totals: { human: all.h.size, ai: all.a.size, total: all.t.size },
    rows: ids.map((id) => {
      const e = per.get(id) as { h: Set<number>; a: Set<number>; t: Set<number> };
      return { id, human: e.h.size, ai: e.a.size, total: e.t.size };
    }),
  };
}
