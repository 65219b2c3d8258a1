// Day facets at work: the agents and referrers breakdowns over a window of days, exact.
//
// A day's facets are the rows of analytics_daily_facets for one (project, day), grouped by facet and name
// with each group's visitor ordinals (ascending), views and requests. They are valid for exactly one version
// of their (project, day) (analytics_day_facet_versions, bumped by every transaction that changes the day's
// facets: ingest; a rebuild by reclassification bumps them all). A window is loaded in one read transaction:
// the versions are read first, then the days not cached in memory at that version — from the same snapshot,
// so a day's facets always match its version. Counting a window marks each group's visitors in one byte per
// ordinal (counted when first marked, cleared after the name): O(rows of the window), exact. Visitor
// ordinals are numbered across all projects, so when a window's ordinals spread much wider than its rows
// the count uses a Set per name instead of a mark array that large.
import type { Kysely } from 'kysely';
import { createBulkWriter } from '../../db/bulk.ts';
import type { Database } from '../../db/index.ts';
import type { DB } from '../../db/schema.ts';
import { ByteLru } from '../lru.ts';
import { rebuildFacets } from '../store/facet-rebuild.ts';
import { facetStore } from '../store/facet-store.ts';
import { facetSource } from '../store/segment-days.ts';
import type { DayRange } from '../store/store.ts';
import { CLS_CRAWLER, FACET_AGENT, FACET_REFERRER } from '../store/tables.ts';

/** One name's rows of one day. */
interface FacetGroup {
  facet: number;
  name: string;
  cls: number;
  /** Visitor ordinals, ascending. */
  visitors: Float64Array;
  views: number;
  requests: number;
}

export interface DayFacets {
  day: number;
  version: number;
  groups: FacetGroup[];
  /** Requests of crawlers that day (the series' crawler line). */
  crawlerRequests: number;
}

/** A name's counts over a window. */
export interface FacetCount {
  name: string;
  cls: number;
  visitors: number;
  views: number;
  requests: number;
}

export interface FacetServiceDeps {
  db: Database;
  /** Decoded day facets kept in memory, in bytes. */
  cacheBytes?: number;
}

function groupDay(day: number, version: number, rows: Awaited<ReturnType<typeof facetStore.selectDayFacets>>): DayFacets {
  const groups: FacetGroup[] = [];
  let crawlerRequests = 0;
  for (let i = 0; i < rows.length; ) {
    const first = rows[i] as (typeof rows)[number];
    let j = i;
    let views = 0;
    let requests = 0;
    while (j < rows.length && (rows[j] as typeof first).facet === first.facet && (rows[j] as typeof first).name === first.name) {
      views += (rows[j] as typeof first).views;
      requests += (rows[j] as typeof first).requests;
      j++;
    }
    const visitors = new Float64Array(j - i);
    for (let k = i; k < j; k++) visitors[k - i] = (rows[k] as typeof first).visitor;
    groups.push({ facet: first.facet, name: first.name, cls: first.cls, visitors, views, requests });
    if (first.facet === FACET_AGENT && first.cls === CLS_CRAWLER) crawlerRequests += requests;
    i = j;
  }
  return { day, version, groups, crawlerRequests };
}

/** A mark array this long (bytes) is always fine; beyond, only while it stays within 8 bytes per visitor entry. */
const MARK_ARRAY_MIN = 16 * 1024 * 1024;

const dayBytes = (d: DayFacets): number => 200 + d.groups.reduce((n, g) => n + 100 + g.name.length * 2 + g.visitors.byteLength, 0);

/**
 * Exact per-name counts of one facet over days: distinct visitors (a visitor counted once per name however
 * many days it came), summed views and requests. Ordered by visitors, then requests, descending, then name.
 */
export function countFacet(days: readonly DayFacets[], facet: number): FacetCount[] {
  const byName = new Map<string, { cls: number; lists: Float64Array[]; views: number; requests: number }>();
  let lo = Number.POSITIVE_INFINITY;
  let hi = -1;
  for (const d of days) {
    for (const g of d.groups) {
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
    if (!marks) return new Set(lists.flatMap((l) => [...l])).size;
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

export function createFacetService(deps: FacetServiceDeps) {
  const cache = new ByteLru<DayFacets>(deps.cacheBytes ?? 128 * 1024 * 1024);
  const key = (projectOrd: number, day: number) => `${projectOrd}:${day}`;

  /** Rebuilds a project's facets from its stored events inside the caller's write transaction (reclassification). */
  async function rebuildIn(trx: Kysely<DB>, projectOrd: number): Promise<void> {
    const bulk = createBulkWriter(deps.db);
    await rebuildFacets(trx, projectOrd, facetSource(trx, projectOrd), (values) => facetStore.bulkAddFacets(bulk, trx, values));
  }

  /** The day facets of a window (days with data only), consistent with one snapshot. */
  async function loadWindow(projectOrd: number, range: DayRange): Promise<DayFacets[]> {
    return deps.db.kysely
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const out: DayFacets[] = [];
        for (const v of await facetStore.selectDayVersions(trx, projectOrd, range)) {
          const hit = cache.get(key(projectOrd, v.day));
          if (hit && hit.version === v.version) {
            out.push(hit);
            continue;
          }
          const d = groupDay(v.day, v.version, await facetStore.selectDayFacets(trx, projectOrd, v.day));
          cache.set(key(projectOrd, v.day), d, dayBytes(d));
          out.push(d);
        }
        return out;
      });
  }

  return {
    loadWindow,
    rebuildIn,
    /** AI assistants and crawlers by rule name over a day range. */
    async agents(projectOrd: number, range: DayRange): Promise<FacetCount[]> {
      return countFacet(await loadWindow(projectOrd, range), FACET_AGENT);
    },
    /** Referrer hosts of qualifying views over a day range. */
    async referrers(projectOrd: number, range: DayRange): Promise<FacetCount[]> {
      return countFacet(await loadWindow(projectOrd, range), FACET_REFERRER);
    },
    clear(): void {
      cache.clear();
    },
  };
}

export type FacetService = ReturnType<typeof createFacetService>;
