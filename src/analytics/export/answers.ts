// The shapes of the analytics reads every AnalyticsStore answers (src/analytics/store/analytics-store.ts), with the
// pure rules they share: the series' bucket limit, the agents' crawler categories, list paging. Pure: no I/O.
import type { CrawlerCategory } from '../classify/classify.ts';
import { USER_AGENT_RULES } from '../classify/rules.ts';
import type { Interval, VisitorCounts } from './series.ts';

export interface RangeQuery {
  /** Inclusive UTC day number; null = from the first day with data. */
  fromDay: number | null;
  /** Exclusive UTC day number; null = to the last day with data. */
  toDay: number | null;
}

export interface ExportQuery extends RangeQuery {
  projectId: string;
  /** Who is walking the pages (the API key id); pages of one walk come from one snapshot. */
  walkId: string;
  offset: number;
  limit: number;
}

export interface ListQuery extends RangeQuery {
  offset: number;
  limit: number;
}

/** Most buckets one series request may span (four years of days). */
export const MAX_BUCKETS = 1500;

export class SeriesTooLongError extends Error {
  constructor(readonly interval: Interval) {
    super(
      `the range spans more than ${MAX_BUCKETS.toLocaleString('en-US')} ${interval === 'day' ? 'days' : `${interval}s`}: ask for a shorter range (dateFrom, dateTo) or a longer interval`,
    );
  }
}

export interface SeriesPoint extends VisitorCounts {
  date: string;
  crawlerRequests: number;
}

export interface SeriesResult {
  interval: Interval;
  series: SeriesPoint[];
  totals: VisitorCounts & { crawlerRequests: number };
}

export interface AgentRow {
  agent: string;
  class: 'ai' | 'crawler';
  category: CrawlerCategory | null;
  visitors: number;
  views: number;
  requests: number;
}

export interface ReferrerRow {
  host: string;
  visitors: number;
  views: number;
}

export interface Paged<T> {
  rows: T[];
  hasMore: boolean;
}

const CATEGORY = new Map(USER_AGENT_RULES.map((r) => [r.name, r.class === 'crawler' ? (r.category ?? 'other') : null]));

/** The crawler category an agents row shows for a crawler rule's name (`other` for names without one). */
export function crawlerCategoryOf(rule: string): CrawlerCategory {
  return CATEGORY.get(rule) ?? 'other';
}

/** One page of an ordered list: `hasMore` exact. */
export function listPage<T>(rows: readonly T[], offset: number, limit: number): Paged<T> {
  return { rows: rows.slice(offset, offset + limit), hasMore: rows.length > offset + limit };
}
