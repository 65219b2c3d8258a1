// HTTP client side of the Inkwell analytics benchmark: batch ingest of the dataset and the export walk.
import { type DatasetMeta, readEvents, toApiEvent } from './dataset.ts';
import { digestExport, type ExportResult, PAGE_SIZE, type PageRow, sortedDigest, type Totals } from './export.ts';
import { since } from './stats.ts';

export interface IngestStats {
  events: number;
  accepted: number;
  rejected: number;
  firstRejections: unknown[];
  requests: number;
  ms: number;
  eventsPerSecond: number;
  concurrency: number;
  batchSize: number;
}

/** Sends the dataset's events in batches of `batchSize` with `concurrency` requests in flight. */
export async function ingestDataset(
  baseUrl: string,
  projectId: string,
  key: string,
  csv: string,
  meta: DatasetMeta,
  o: {
    concurrency: number;
    batchSize: number;
    log?: (m: string) => void;
    /** Events between two progress lines (default 1M). */
    logEvery?: number;
    /** Told each batch's size once its 202 has come back (in the order the answers arrive). */
    onAcknowledged?: (events: number) => void;
  },
): Promise<IngestStats> {
  const url = `${baseUrl}/v1/analytics/${encodeURIComponent(projectId)}/events`;
  const stats: IngestStats = {
    events: 0,
    accepted: 0,
    rejected: 0,
    firstRejections: [],
    requests: 0,
    ms: 0,
    eventsPerSecond: 0,
    concurrency: o.concurrency,
    batchSize: o.batchSize,
  };
  const inflight = new Set<Promise<void>>();
  const send = async (batch: Record<string, unknown>[]) => {
    const r = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events: batch }),
    });
    const text = await r.text();
    if (r.status !== 202) throw new Error(`ingest returned ${r.status}: ${text.slice(0, 500)}`);
    const body = JSON.parse(text) as { accepted: number; rejected: { index: number; error: string }[] };
    stats.requests++;
    o.onAcknowledged?.(batch.length);
    stats.accepted += body.accepted;
    stats.rejected += body.rejected.length;
    for (const rej of body.rejected) {
      if (stats.firstRejections.length < 5) stats.firstRejections.push({ ...rej, event: batch[rej.index] });
    }
  };
  const t0 = performance.now();
  let batch: Record<string, unknown>[] = [];
  const logEvery = o.logEvery ?? 1_000_000;
  let nextLog = logEvery;
  for await (const e of readEvents(csv)) {
    batch.push(toApiEvent(e, meta));
    stats.events++;
    if (batch.length === o.batchSize) {
      const p = send(batch).finally(() => inflight.delete(p));
      inflight.add(p);
      batch = [];
      if (inflight.size >= o.concurrency) await Promise.race(inflight);
      if (stats.events >= nextLog) {
        o.log?.(`  ingested ${stats.events.toLocaleString('en')} events (${Math.round(stats.events / (since(t0) / 1000)).toLocaleString('en')}/s)`);
        nextLog += logEvery;
      }
    }
  }
  if (batch.length) {
    const p = send(batch);
    inflight.add(p);
  }
  await Promise.all(inflight);
  stats.ms = Math.round(since(t0));
  stats.eventsPerSecond = Math.round(stats.events / (stats.ms / 1000));
  return stats;
}

export interface WalkTiming {
  walkMs: number;
  firstPageMs: number;
  furtherPageMs: number[];
  pages: number;
  result: ExportResult;
  /** Rows came back in SPEC order (total desc, path asc), every path once. */
  orderOk: boolean;
  digest: string;
  sortedDigest: string;
}

/** Walks the whole visitors (or views) export of [dateFrom, dateTo) through HTTP at limit 250, timing every page. */
export async function walkExport(
  baseUrl: string,
  projectId: string,
  key: string,
  dateFrom: string,
  dateTo: string,
  kind: 'visitors' | 'views' = 'visitors',
): Promise<WalkTiming> {
  const rows: PageRow[] = [];
  let totals: Totals | null = null;
  const further: number[] = [];
  let first = 0;
  const t0 = performance.now();
  for (let offset = 0; ; offset += PAGE_SIZE) {
    const tp = performance.now();
    const r = await fetch(
      `${baseUrl}/v1/analytics/${encodeURIComponent(projectId)}/${kind}?dateFrom=${dateFrom}&dateTo=${dateTo}&limit=${PAGE_SIZE}&offset=${offset}`,
      { headers: { authorization: `Bearer ${key}` } },
    );
    const text = await r.text();
    if (r.status !== 200) throw new Error(`${kind} export returned ${r.status} at offset ${offset}: ${text.slice(0, 500)}`);
    const parsed = JSON.parse(text) as { totals: Totals; visitors?: PageRow[]; views?: PageRow[]; hasMore: boolean };
    const body = { totals: parsed.totals, visitors: (kind === 'views' ? parsed.views : parsed.visitors) ?? [], hasMore: parsed.hasMore };
    const ms = since(tp);
    if (offset === 0) first = ms;
    else further.push(ms);
    totals ??= body.totals;
    for (const v of body.visitors) rows.push({ path: v.path, human: v.human, ai: v.ai, total: v.total });
    if (!body.hasMore) break;
    if (body.visitors.length === 0) throw new Error(`hasMore is true but page at offset ${offset} is empty`);
  }
  const walkMs = since(t0);
  const result: ExportResult = { totals: totals as Totals, rows };
  const digest = digestExport(result);
  const sd = sortedDigest(result);
  return {
    walkMs,
    firstPageMs: first,
    furtherPageMs: further,
    pages: further.length + 1,
    result,
    orderOk: digest === sd && new Set(rows.map((r) => r.path)).size === rows.length,
    digest,
    sortedDigest: sd,
  };
}

/** The analytics store's counters from the service's /metrics (null from a service too old to have them). */
export interface StoreCounters {
  memory: number;
  blob: number;
  extended: number;
  rebuilt: number;
  segmentsCompacted: number;
}

export async function storeCounters(baseUrl: string): Promise<StoreCounters | null> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const read = (re: RegExp) => {
    const m = re.exec(text);
    return m ? Number(m[1]) : null;
  };
  const day = (source: string) => read(new RegExp(`^inkwell_analytics_summary_days_total\\{source="${source}"\\} (\\d+)$`, 'm'));
  const c = {
    memory: day('memory'),
    blob: day('blob'),
    extended: day('extended'),
    rebuilt: day('rebuilt'),
    segmentsCompacted: read(/^inkwell_analytics_segments_compacted_total (\d+)$/m),
  };
  return Object.values(c).some((v) => v === null) ? null : (c as StoreCounters);
}

const COUNTER_KEYS = ['memory', 'blob', 'extended', 'rebuilt', 'segmentsCompacted'] as const;

/** What changed between two readings (null when either is). */
export function countersDelta(a: StoreCounters | null, b: StoreCounters | null): StoreCounters | null {
  if (!a || !b) return null;
  return Object.fromEntries(COUNTER_KEYS.map((k) => [k, b[k] - a[k]])) as unknown as StoreCounters;
}

/** Two deltas summed (null counts as nothing; null when both are). */
export function addCounters(a: StoreCounters | null, b: StoreCounters | null): StoreCounters | null {
  if (!a || !b) return a ?? b;
  return Object.fromEntries(COUNTER_KEYS.map((k) => [k, a[k] + b[k]])) as unknown as StoreCounters;
}

/** A delta as one line for the log. */
export function countersText(d: StoreCounters): string {
  return `day summaries from memory ${d.memory}, blob ${d.blob}, extended ${d.extended}, rebuilt ${d.rebuilt}; segments compacted meanwhile ${d.segmentsCompacted}`;
}
