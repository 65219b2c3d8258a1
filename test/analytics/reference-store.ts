// The reference analytics store: every answer recomputed from the accepted events, the simple way (sets and
// counts over one array per project), with no dictionary, day set, facet table or cache. What every real
// AnalyticsStore must equal exactly (store-conformance.ts). It reuses only the pure definitions the contract is
// written in: classification and the qualifying rule, referrer hosts, buckets, row order and paging.
import { classify } from '../../src/analytics/classify/classify.ts';
import { referrerHost } from '../../src/analytics/classify/facets.ts';
import { isStaticAsset } from '../../src/analytics/classify/normalize.ts';
import { isQualifyingParts, isQualifyingView } from '../../src/analytics/classify/qualify.ts';
import { crawlerCategoryOf, listPage, MAX_BUCKETS, SeriesTooLongError } from '../../src/analytics/export/answers.ts';
import { type ExportResult, type PathRow, pageOf, sortRows } from '../../src/analytics/export/rows.ts';
import { bucketCount, bucketLabel, bucketsOf } from '../../src/analytics/export/series.ts';
import {
  NO_STATUS,
  R_ACCEPT,
  R_CATEGORY,
  R_CLASS,
  R_DEDUP,
  R_METHOD,
  R_PATH,
  R_RAW_PATH,
  R_REFERRER,
  R_RULE,
  R_UA,
  R_VKEY,
  textOf,
} from '../../src/analytics/ingest/write-batch.ts';
import type {
  AgentRow,
  AnalyticsStore,
  ExportQuery,
  Page,
  RangeQuery,
  ReclassifyResult,
  ReferrerRow,
  SeriesResult,
} from '../../src/analytics/store/analytics-store.ts';

interface StoredEvent {
  day: number;
  path: string;
  rawPath: string;
  visitor: string;
  userAgent: string | null;
  accept: string | null;
  method: string | null;
  status: number | null;
  referrer: string | null;
  cls: 'human' | 'ai' | 'crawler';
  category: string | null;
  rule: string | null;
  qualifying: 0 | 1;
}

interface Project {
  events: StoredEvent[];
  dedupKeys: Set<string>;
  /** Days that have (or had, before a reclassification) a qualifying view or an agent / referrer request. */
  daysWithData: Set<number>;
}

const inRange = (day: number, q: RangeQuery) => (q.fromDay === null || day >= q.fromDay) && (q.toDay === null || day < q.toDay);
const emptyRange = (q: RangeQuery) => q.fromDay !== null && q.toDay !== null && q.fromDay >= q.toDay;
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function hasData(e: StoredEvent): boolean {
  // A qualifying view (a visit; a referrer request is one too) or an agent request.
  return e.qualifying === 1 || ((e.cls === 'ai' || e.cls === 'crawler') && e.rule !== null);
}

function distinctCounts(events: readonly StoredEvent[]): { human: number; ai: number; total: number } {
  const human = new Set<string>();
  const ai = new Set<string>();
  const all = new Set<string>();
  for (const e of events) {
    (e.cls === 'human' ? human : ai).add(e.visitor);
    all.add(e.visitor);
  }
  return { human: human.size, ai: ai.size, total: all.size };
}

export function createReferenceStore(): AnalyticsStore {
  const projects = new Map<string, Project>();
  /** Walks (walkId, kind, project, range) → the result their offset-0 page was served from. */
  const walks = new Map<string, ExportResult>();

  const project = (id: string): Project | undefined => projects.get(id);
  const qualifying = (id: string, q: RangeQuery) => (project(id)?.events ?? []).filter((e) => e.qualifying === 1 && inRange(e.day, q));

  function visitorsResult(q: ExportQuery): ExportResult {
    const events = qualifying(q.projectId, q);
    const byPath = new Map<string, StoredEvent[]>();
    for (const e of events) byPath.set(e.path, [...(byPath.get(e.path) ?? []), e]);
    const rows: PathRow[] = [...byPath].map(([path, es]) => ({ path, ...distinctCounts(es) }));
    return { totals: distinctCounts(events), rows: sortRows(rows) };
  }

  function viewsResult(q: ExportQuery): ExportResult {
    const byPath = new Map<string, PathRow>();
    const totals = { human: 0, ai: 0, total: 0 };
    for (const e of qualifying(q.projectId, q)) {
      let row = byPath.get(e.path);
      if (!row) {
        row = { path: e.path, human: 0, ai: 0, total: 0 };
        byPath.set(e.path, row);
      }
      const k = e.cls === 'human' ? 'human' : 'ai';
      row[k]++;
      row.total++;
      totals[k]++;
      totals.total++;
    }
    return { totals, rows: sortRows([...byPath.values()]) };
  }

  function walkPage(kind: string, q: ExportQuery, compute: (q: ExportQuery) => ExportResult): Page {
    if (emptyRange(q)) return pageOf({ totals: { human: 0, ai: 0, total: 0 }, rows: [] }, q.offset, q.limit);
    const key = JSON.stringify([q.walkId, kind, q.projectId, q.fromDay, q.toDay]);
    const pinned = q.offset > 0 ? walks.get(key) : undefined;
    if (pinned) return pageOf(pinned, q.offset, q.limit);
    const result = compute(q);
    walks.set(key, result);
    return pageOf(result, q.offset, q.limit);
  }

  /** Per name: distinct visitors, views and requests, ordered by visitors, requests, then name. */
  function facetCounts(events: StoredEvent[], nameOf: (e: StoredEvent) => string | null, isView: (e: StoredEvent) => boolean) {
    const by = new Map<string, { first: StoredEvent; visitors: Set<string>; views: number; requests: number }>();
    for (const e of events) {
      const name = nameOf(e);
      if (name === null) continue;
      let c = by.get(name);
      if (!c) {
        c = { first: e, visitors: new Set(), views: 0, requests: 0 };
        by.set(name, c);
      }
      c.visitors.add(e.visitor);
      if (isView(e)) c.views++;
      c.requests++;
    }
    return [...by]
      .map(([name, c]) => ({ name, cls: c.first.cls, visitors: c.visitors.size, views: c.views, requests: c.requests }))
      .sort((a, b) => b.visitors - a.visitors || b.requests - a.requests || byName(a.name, b.name));
  }

  const agentName = (e: StoredEvent) => ((e.cls === 'ai' || e.cls === 'crawler') && e.rule !== null ? e.rule : null);
  const eventsIn = (projectId: string, q: RangeQuery) => (emptyRange(q) ? [] : (project(projectId)?.events ?? []).filter((e) => inRange(e.day, q)));

  return {
    async append(projectId, _source, b) {
      let p = projects.get(projectId);
      if (!p) {
        p = { events: [], dedupKeys: new Set(), daysWithData: new Set() };
        projects.set(projectId, p);
      }
      let inserted = 0;
      for (let i = 0; i < b.n; i++) {
        const key = textOf(b, i, R_DEDUP);
        if (key !== null) {
          if (p.dedupKeys.has(key)) continue;
          p.dedupKeys.add(key);
        }
        const status = b.status[i] as number;
        const e: StoredEvent = {
          day: b.day[i] as number,
          path: textOf(b, i, R_PATH) as string,
          rawPath: textOf(b, i, R_RAW_PATH) as string,
          visitor: textOf(b, i, R_VKEY) as string,
          userAgent: textOf(b, i, R_UA),
          accept: textOf(b, i, R_ACCEPT),
          method: textOf(b, i, R_METHOD),
          status: status === NO_STATUS ? null : status,
          referrer: textOf(b, i, R_REFERRER),
          cls: textOf(b, i, R_CLASS) as StoredEvent['cls'],
          category: textOf(b, i, R_CATEGORY),
          rule: textOf(b, i, R_RULE),
          qualifying: b.qualifying[i] === 1 ? 1 : 0,
        };
        p.events.push(e);
        if (hasData(e)) p.daysWithData.add(e.day);
        inserted++;
      }
      return inserted;
    },

    async visitors(q) {
      return walkPage('visitors', q, visitorsResult);
    },

    async views(q) {
      return walkPage('views', q, viewsResult);
    },

    async series(projectId, q): Promise<SeriesResult> {
      const empty: SeriesResult = { interval: q.interval, series: [], totals: { human: 0, ai: 0, total: 0, crawlerRequests: 0 } };
      if (q.fromDay !== null && q.toDay !== null && bucketCount(q.fromDay, q.toDay, q.interval, MAX_BUCKETS) > MAX_BUCKETS)
        throw new SeriesTooLongError(q.interval);
      let range: { fromDay: number; toDay: number } | null;
      if (q.fromDay !== null && q.toDay !== null) range = q.fromDay < q.toDay ? { fromDay: q.fromDay, toDay: q.toDay } : null;
      else {
        const days = [...(project(projectId)?.daysWithData ?? [])].filter((d) => inRange(d, q));
        range = days.length === 0 ? null : { fromDay: q.fromDay ?? Math.min(...days), toDay: q.toDay ?? Math.max(...days) + 1 };
      }
      if (range === null) return empty;
      if (bucketCount(range.fromDay, range.toDay, q.interval, MAX_BUCKETS) > MAX_BUCKETS) throw new SeriesTooLongError(q.interval);
      const events = eventsIn(projectId, range);
      const crawler = (es: StoredEvent[]) => es.filter((e) => e.cls === 'crawler' && e.rule !== null).length;
      const series = bucketsOf(range.fromDay, range.toDay, q.interval).map((b) => {
        const inBucket = events.filter((e) => e.day >= b.start && e.day < b.end);
        return { date: bucketLabel(b), ...distinctCounts(inBucket.filter((e) => e.qualifying === 1)), crawlerRequests: crawler(inBucket) };
      });
      return { interval: q.interval, series, totals: { ...distinctCounts(events.filter((e) => e.qualifying === 1)), crawlerRequests: crawler(events) } };
    },

    async agents(projectId, q) {
      const counts = facetCounts(eventsIn(projectId, q), agentName, (e) => isQualifyingParts(e.method, e.status, 'human', () => isStaticAsset(e.path)));
      const rows = counts.map(
        (c): AgentRow => ({
          agent: c.name,
          class: c.cls === 'ai' ? 'ai' : 'crawler',
          category: c.cls === 'ai' ? null : crawlerCategoryOf(c.name),
          visitors: c.visitors,
          views: c.views,
          requests: c.requests,
        }),
      );
      return listPage(rows, q.offset, q.limit);
    },

    async referrers(projectId, q) {
      const counts = facetCounts(
        eventsIn(projectId, q),
        (e) => (e.qualifying === 1 ? referrerHost(e.referrer) : null),
        () => true,
      );
      return listPage(
        counts.map((c): ReferrerRow => ({ host: c.name, visitors: c.visitors, views: c.views })),
        q.offset,
        q.limit,
      );
    },

    async reclassify(projectId, onProgress): Promise<ReclassifyResult> {
      const p = project(projectId);
      if (!p) return { scanned: 0, changed: 0 };
      let changed = 0;
      onProgress?.(0, p.events.length);
      for (const e of p.events) {
        const c = classify({ userAgent: e.userAgent, path: e.rawPath, accept: e.accept });
        const q = isQualifyingView({ method: e.method, status: e.status, path: e.path, class: c.class }) ? 1 : 0;
        if (c.class !== e.cls || c.category !== e.category || c.rule !== e.rule || q !== e.qualifying) {
          e.cls = c.class;
          e.category = c.category;
          e.rule = c.rule;
          e.qualifying = q;
          changed++;
        }
        if (hasData(e)) p.daysWithData.add(e.day);
      }
      onProgress?.(p.events.length, p.events.length);
      return { scanned: p.events.length, changed };
    },

    counters: () => ({}),
    async health() {
      return { ok: true };
    },
    async warmUp() {},
    startBackground() {},
    clearCaches() {},
    async close() {},
  };
}
