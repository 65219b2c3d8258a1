// The time series: exact distinct visitors per day, week or month bucket. Pure: no I/O.
//
// Buckets are UTC: a day; an ISO week (Monday to Sunday); a calendar month. A bucket is clipped to the range
// asked for, and named by its first day inside it. Counting a bucket marks each visitor of its days' sets
// in one byte per ordinal (bit 0 human, bit 1 ai), counting a class when its bit is first set and the
// visitor when any bit is, then clears what it marked: O(pairs of the window) per pass, exact.
import { dayToIso } from '../dates.ts';
import { type DaySet, densify, MAX_MARKS, MarkBuffer } from './daysets.ts';

export type Interval = 'day' | 'week' | 'month';
export const INTERVALS: readonly Interval[] = ['day', 'week', 'month'];

/** Days [start, end) of one bucket. */
export interface Bucket {
  start: number;
  end: number;
}

export interface VisitorCounts {
  human: number;
  ai: number;
  total: number;
}

/** The first day of the bucket after the one `day` falls in. */
function nextStart(day: number, interval: Interval): number {
  if (interval === 'day') return day + 1;
  if (interval === 'week') {
    // Day 0 (1970-01-01) was a Thursday: (day + 3) mod 7 is 0 on Mondays.
    return day - ((((day + 3) % 7) + 7) % 7) + 7;
  }
  const d = new Date(day * 86_400_000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 86_400_000;
}

/** How many buckets [fromDay, toDay) spans, counting no further than `max + 1`. */
export function bucketCount(fromDay: number, toDay: number, interval: Interval, max: number): number {
  let n = 0;
  for (let d = fromDay; d < toDay && n <= max; d = nextStart(d, interval)) n++;
  return n;
}

/** The buckets of [fromDay, toDay), clipped to it. */
export function bucketsOf(fromDay: number, toDay: number, interval: Interval): Bucket[] {
  const out: Bucket[] = [];
  for (let d = fromDay; d < toDay; ) {
    const end = Math.min(nextStart(d, interval), toDay);
    out.push({ start: d, end });
    d = end;
  }
  return out;
}

export const bucketLabel = (b: Bucket): string => dayToIso(b.start);

/** Distinct visitors of each bucket and of all of them together, from the day sets of the window. */
export function countBuckets(
  days: readonly DaySet[],
  buckets: readonly Bucket[],
  marksBuffer = new MarkBuffer(),
): { buckets: VisitorCounts[]; totals: VisitorCounts } {
  let base = Number.POSITIVE_INFINITY;
  let top = -1;
  for (const s of days) {
    if (s.pairs.length === 0) continue;
    if (s.minVisitor < base) base = s.minVisitor;
    if (s.maxVisitor > top) top = s.maxVisitor;
  }
  if (top - base + 1 > MAX_MARKS) return countBuckets(densify(days), buckets, marksBuffer);
  const marks = marksBuffer.take(top >= base ? top - base + 1 : 0);
  const count = (sets: readonly DaySet[]): VisitorCounts => {
    const c = { human: 0, ai: 0, total: 0 };
    for (const s of sets) {
      const pairs = s.pairs;
      const sh = s.base - base;
      for (let i = 0; i < pairs.length; i++) {
        const p = pairs[i] as number;
        const at = (p >>> 2) + sh;
        const m = marks[at] as number;
        const f = p & 3;
        if ((m | f) === m) continue;
        if (m === 0) c.total++;
        if (f & 1 && !(m & 1)) c.human++;
        if (f & 2 && !(m & 2)) c.ai++;
        marks[at] = m | f;
      }
    }
    for (const s of sets) for (const p of s.pairs) marks[(p >>> 2) + s.base - base] = 0;
    return c;
  };
  let k = 0;
  const counts = buckets.map((b) => {
    const inBucket: DaySet[] = [];
    while (k < days.length && (days[k] as DaySet).day < b.end) {
      if ((days[k] as DaySet).day >= b.start) inBucket.push(days[k] as DaySet);
      k++;
    }
    return count(inBucket);
  });
  return { buckets: counts, totals: count(days) };
}
