// Which events count for the agents and referrers breakdowns, and how. Pure: no I/O. The day summaries
// (src/analytics/export/day-summary.ts) apply these rules; FacetAccumulator, the per-visitor rows of the
// analytics_daily_facets table that migration 0010 fills (0017 drops it), stays as their reference (and tests').
//
// - Agent facet: every request of class ai or crawler, under the name of the rule that classified it
//   (ChatGPT-User, GPTBot, …). `views` counts its page views: a GET (or no method) answered 2xx/304 (or no
//   status) for a page, not a static asset — the qualifying-view rule without the class condition, since
//   crawlers never qualify (SPEC 4.3) but still read pages. `requests` counts every request.
// - Referrer facet: every qualifying view (human or ai) that carries a referrer with a host, under that host
//   (lower case, without a leading `www.`).
import { CLS_AI, CLS_CRAWLER, FACET_AGENT, FACET_REFERRER } from '../store/tables.ts';
import { isQualifyingParts } from './qualify.ts';

/** The host a referrer names (lower case, no leading `www.` or trailing dot), or null (none, unparsable, no host). */
export function referrerHost(referrer: string | null | undefined): string | null {
  if (!referrer) return null;
  let host: string;
  try {
    host = new URL(referrer.trim()).hostname.toLowerCase();
  } catch {
    return null;
  }
  if (host.endsWith('.')) host = host.slice(0, -1);
  if (host.startsWith('www.') && host.length > 4) host = host.slice(4);
  return host === '' ? null : host;
}

/** The facet-relevant fields of one event. */
export interface FacetInput {
  day: number;
  visitor: number;
  cls: 'human' | 'ai' | 'crawler';
  rule: string | null;
  qualifying: number;
  method: string | null;
  status: number | null;
  /** Whether the event's path is a static asset (asked only for ai and crawler requests). */
  staticAsset: () => boolean;
  referrer: string | null;
}

/** Key columns of a facet row, joined (day, facet, name, visitor). */
const keyOf = (day: number, facet: number, name: string, visitor: number) => `${day}\u0000${facet}\u0000${visitor}\u0000${name}`;

/** Facet rows of many events, summed per (day, facet, name, visitor). */
export class FacetAccumulator {
  private readonly rows = new Map<string, [day: number, facet: number, name: string, visitor: number, cls: number, views: number, requests: number]>();
  /** Days that got a row. */
  readonly days = new Set<number>();

  add(e: FacetInput): void {
    if ((e.cls === 'ai' || e.cls === 'crawler') && e.rule !== null) {
      const view = isQualifyingParts(e.method, e.status, 'human', e.staticAsset) ? 1 : 0;
      this.bump(e.day, FACET_AGENT, e.rule, e.visitor, e.cls === 'ai' ? CLS_AI : CLS_CRAWLER, view);
    }
    if (e.qualifying === 1 && e.referrer !== null) {
      const host = referrerHost(e.referrer);
      if (host !== null) this.bump(e.day, FACET_REFERRER, host, e.visitor, 0, 1);
    }
  }

  private bump(day: number, facet: number, name: string, visitor: number, cls: number, views: number): void {
    const k = keyOf(day, facet, name, visitor);
    const row = this.rows.get(k);
    if (row) {
      row[5] += views;
      row[6] += 1;
      return;
    }
    this.rows.set(k, [day, facet, name, visitor, cls, views, 1]);
    this.days.add(day);
  }

  get size(): number {
    return this.rows.size;
  }

  /** The rows for a bulk insert, one after the other: project_ord, day, facet, name, visitor_ord, cls, views, requests. */
  flat(projectOrd: number): unknown[] {
    const out: unknown[] = [];
    for (const r of this.rows.values()) out.push(projectOrd, ...r);
    return out;
  }

  clear(): void {
    this.rows.clear();
    this.days.clear();
  }
}
