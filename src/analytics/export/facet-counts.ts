// The agents and referrers breakdowns over a window of day summaries (day-summary.ts), exact. Pure: no I/O.
//
// Counting a window marks each name's visitors in one byte per ordinal (counted when first marked, cleared after
// the name): O(visitor entries of the window), exact. Visitor ordinals are dense per project since migration 0019,
// but ordinals moved from before it were numbered across all projects, so when a window's ordinals spread much
// wider than its entries the count sorts each name's entries instead of marking an array that large.
import type { FacetGroup } from './day-summary.ts';

/** A name's counts over a window. */
export interface FacetCount {
  name: string;
  cls: number;
  visitors: number;
  views: number;
  requests: number;
}

/** A mark array this long (bytes) is always fine; beyond, only while it stays within 8 bytes per visitor entry. */
const MARK_ARRAY_MIN = 16 * 1024 * 1024;

/** Distinct values of the lists by sorting them together (a Set would stop at V8's 2^24 entries). */
function distinctSorted(lists: readonly Float64Array[]): number {
  let n = 0;
  for (const l of lists) n += l.length;
  const all = new Float64Array(n);
  let k = 0;
  for (const l of lists) {
    all.set(l, k);
    k += l.length;
  }
  all.sort();
  let d = 0;
  for (let i = 0; i < n; i++) if (i === 0 || all[i] !== all[i - 1]) d++;
  return d;
}

/**
 * Exact per-name counts of one facet over days: distinct visitors (a visitor counted once per name however
 * many days it came), summed views and requests. Ordered by visitors, then requests, descending, then name.
 */
export function countFacet(days: readonly { facets: readonly FacetGroup[] }[], facet: number): FacetCount[] {
  const byName = new Map<string, { cls: number; lists: Float64Array[]; views: number; requests: number }>();
  let lo = Number.POSITIVE_INFINITY;
  let hi = -1;
  for (const d of days) {
    for (const g of d.facets) {
      if (g.facet !== facet || g.visitors.length === 0) continue;
      let e = byName.get(g.name);
      if (!e) {
        e = { cls: g.cls, lists: [], views: 0, requests: 0 };
        byName.set(g.name, e);
      }
      e.lists.push(g.visitors);
      e.views += g.views;
      e.requests += g.requests;
      if ((g.visitors[0] as number) < lo) lo = g.visitors[0] as number;
      if ((g.visitors[g.visitors.length - 1] as number) > hi) hi = g.visitors[g.visitors.length - 1] as number;
    }
  }
  let entries = 0;
  for (const e of byName.values()) for (const list of e.lists) entries += list.length;
  const span = hi >= lo ? hi - lo + 1 : 0;
  const marks = span <= Math.max(MARK_ARRAY_MIN, 8 * entries) ? new Uint8Array(span) : null;
  const distinct = (lists: Float64Array[]): number => {
    if (!marks) return distinctSorted(lists);
    let n = 0;
    for (const list of lists) {
      for (const v of list) {
        if (marks[v - lo] === 0) {
          marks[v - lo] = 1;
          n++;
        }
      }
    }
    for (const list of lists) for (const v of list) marks[v - lo] = 0;
    return n;
  };
  const out: FacetCount[] = [];
  for (const [name, e] of byName) out.push({ name, cls: e.cls, visitors: distinct(e.lists), views: e.views, requests: e.requests });
  return out.sort((a, b) => b.visitors - a.visitors || b.requests - a.requests || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
