// The dashboard's analytics reads: the visitor time series, the AI agents and crawlers, the referrers. Exact,
// on UTC days, `toDay` exclusive, with the export's range rules (absent bounds: from the first / to the last
// day with data).
import type { Database } from '../../db/index.ts';
import { analyticsStore as store } from '../store/store.ts';
import { CLS_AI } from '../store/tables.ts';
import {
  type AgentRow,
  crawlerCategoryOf,
  listPage,
  MAX_BUCKETS,
  type Paged,
  type RangeQuery,
  type ReferrerRow,
  type SeriesResult,
  SeriesTooLongError,
} from './answers.ts';
import type { FacetCount } from './facet-counts.ts';
import { bucketCount, bucketLabel, bucketsOf, countBuckets, type Interval, type VisitorCounts } from './series.ts';
import type { SummaryService } from './summary-service.ts';

export type { AgentRow, Paged, RangeQuery, ReferrerRow, SeriesPoint, SeriesResult } from './answers.ts';
export { MAX_BUCKETS, SeriesTooLongError } from './answers.ts';

export interface InsightsDeps {
  db: Database;
  /** The day summaries every answer here counts from. */
  summaries: SummaryService;
}

export function createInsightsService(deps: InsightsDeps) {
  const kysely = deps.db.kysely;

  /** The range with absent bounds resolved to the days with data; null when it holds no day. */
  async function resolve(projectOrd: number, q: RangeQuery): Promise<{ fromDay: number; toDay: number } | null> {
    if (q.fromDay !== null && q.toDay !== null) return q.fromDay < q.toDay ? { fromDay: q.fromDay, toDay: q.toDay } : null;
    // Days with a qualifying view or an agent request (a day of 404s only has segments but no data).
    const days = (await deps.summaries.dayVersions(projectOrd, q)).filter((v) => v.hasData).map((v) => v.day);
    if (days.length === 0) return null;
    return { fromDay: q.fromDay ?? Math.min(...days), toDay: q.toDay ?? Math.max(...days) + 1 };
  }

  async function series(projectId: string, q: RangeQuery & { interval: Interval }): Promise<SeriesResult> {
    const empty: SeriesResult = { interval: q.interval, series: [], totals: { human: 0, ai: 0, total: 0, crawlerRequests: 0 } };
    if (q.fromDay !== null && q.toDay !== null && bucketCount(q.fromDay, q.toDay, q.interval, MAX_BUCKETS) > MAX_BUCKETS)
      throw new SeriesTooLongError(q.interval);
    const ord = await store.selectProjectOrd(kysely, projectId);
    // A project that never sent an event still gets the buckets of an explicit range, at zero.
    const range =
      ord === undefined
        ? q.fromDay !== null && q.toDay !== null && q.fromDay < q.toDay
          ? { fromDay: q.fromDay, toDay: q.toDay }
          : null
        : await resolve(ord, q);
    if (range === null) return empty;
    if (bucketCount(range.fromDay, range.toDay, q.interval, MAX_BUCKETS) > MAX_BUCKETS) throw new SeriesTooLongError(q.interval);
    const buckets = bucketsOf(range.fromDay, range.toDay, q.interval);
    const zero = { human: 0, ai: 0, total: 0 };
    // Visitors and crawler requests from the same summaries: one snapshot.
    const window = ord === undefined ? [] : (await deps.summaries.loadWindow(ord, range)).days;
    const visitors =
      ord === undefined
        ? { buckets: buckets.map(() => zero), totals: zero }
        : countBuckets(
            window.map((d) => d.visitors),
            buckets,
          );
    const crawlerByDay = new Map(window.map((d) => [d.day, d.crawlerRequests]));
    let crawlerTotal = 0;
    const points = buckets.map((b, i) => {
      let crawlerRequests = 0;
      for (let d = b.start; d < b.end; d++) crawlerRequests += crawlerByDay.get(d) ?? 0;
      crawlerTotal += crawlerRequests;
      return { date: bucketLabel(b), ...(visitors.buckets[i] as VisitorCounts), crawlerRequests };
    });
    return { interval: q.interval, series: points, totals: { ...visitors.totals, crawlerRequests: crawlerTotal } };
  }

  async function facetCounts(projectId: string, q: RangeQuery, kind: 'agents' | 'referrers'): Promise<FacetCount[]> {
    const ord = await store.selectProjectOrd(kysely, projectId);
    if (ord === undefined || (q.fromDay !== null && q.toDay !== null && q.fromDay >= q.toDay)) return [];
    return kind === 'agents' ? deps.summaries.agents(ord, q) : deps.summaries.referrers(ord, q);
  }

  return {
    series,
    /** AI assistants and crawlers by the name of the rule that classified them; most visitors first. */
    async agents(projectId: string, q: RangeQuery & { offset: number; limit: number }): Promise<Paged<AgentRow>> {
      const rows = (await facetCounts(projectId, q, 'agents')).map(
        (c): AgentRow => ({
          agent: c.name,
          class: c.cls === CLS_AI ? 'ai' : 'crawler',
          category: c.cls === CLS_AI ? null : crawlerCategoryOf(c.name),
          visitors: c.visitors,
          views: c.views,
          requests: c.requests,
        }),
      );
      return listPage(rows, q.offset, q.limit);
    },
    /** Referrer hosts of qualifying views; most visitors first. */
    async referrers(projectId: string, q: RangeQuery & { offset: number; limit: number }): Promise<Paged<ReferrerRow>> {
      const rows = (await facetCounts(projectId, q, 'referrers')).map((c): ReferrerRow => ({ host: c.name, visitors: c.visitors, views: c.views }));
      return listPage(rows, q.offset, q.limit);
    },
  };
}

export type InsightsService = ReturnType<typeof createInsightsService>;
