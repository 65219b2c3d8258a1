// Prometheus metrics (prom-client), one registry per app instance.
import client from 'prom-client';
import { type SecondsHistogram, WRITER_SECONDS_BUCKETS } from '../analytics/ingest/writer/writer-stats.ts';
import type { AnalyticsCounters } from '../analytics/store/analytics-store.ts';

const HTTP_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];

interface HistogramValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
  /** Bucket entries carry `exemplar: null` like prom-client's (no exemplars here). */
  exemplar?: null;
}

/** One labelled series of a DurationHistogram. */
export class DurationSeries {
  /** Count per bucket (not cumulative); the last slot is above the highest bound. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    private readonly bounds: readonly number[],
    readonly labels: Readonly<Record<string, string>>,
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    let i = 0;
    while (i < this.bounds.length && value > (this.bounds[i] as number)) i++;
    (this.counts as Float64Array)[i] = (this.counts[i] as number) + 1;
    this.sum += value;
    this.count++;
  }
}

/** One series of a histogram in prom-client's shape: cumulative buckets (`counts` per bucket, the last above the highest bound), sum, count. */
function pushHistogram(
  values: HistogramValue[],
  name: string,
  bounds: readonly number[],
  h: { counts: ArrayLike<number>; sum: number; count: number },
  labels: Readonly<Record<string, string>>,
): void {
  let cumulative = 0;
  for (let i = 0; i <= bounds.length; i++) {
    cumulative += h.counts[i] ?? 0;
    const le = i < bounds.length ? (bounds[i] as number) : '+Inf';
    values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${name}_bucket`, exemplar: null });
  }
  values.push({ labels: { ...labels }, value: h.sum, metricName: `${name}_sum` });
  values.push({ labels: { ...labels }, value: h.count, metricName: `${name}_count` });
}

/**
 * A histogram for the per-request duration, read by the prom-client registry like its own (`get()` in
 * prom-client's shape, the same text output). prom-client's Histogram hashes the label set on every
 * observation, ~2.5 µs of the API's CPU per request in `perf`; here a series is looked up once per
 * (method, route, status) and an observation is a bucket search and three additions.
 */
export class DurationHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #series = new Map<string, DurationSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {}

  /** The series of these label values (in `labelNames` order), made on first use. */
  series(...values: string[]): DurationSeries {
    const key = values.join('\u0000');
    let s = this.#series.get(key);
    if (!s) {
      s = new DurationSeries(this.buckets, Object.fromEntries(this.labelNames.map((n, i) => [n, values[i] ?? ''])));
      this.#series.set(key, s);
    }
    return s;
  }

  /** What the registry reads: prom-client's own histogram shape (type as the string prom-client uses at run time). */
  get(): { name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: HistogramValue[] } {
    const values: HistogramValue[] = [];
    for (const s of this.#series.values()) pushHistogram(values, this.name, this.buckets, s, s.labels);
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.#series.clear();
  }
}

/**
 * A metric whose values are read at scrape time from counts kept elsewhere (e.g. the analytics store's), in
 * prom-client's shape like DurationHistogram: nothing is copied on the hot path. A counter's `read` gives its
 * labelled values; a histogram's, its series in prom-client's shape (histogramValues).
 */
export class ReadMetric {
  readonly aggregator = 'sum';

  constructor(
    readonly type: 'counter' | 'histogram',
    readonly name: string,
    readonly help: string,
    private readonly read: () => { labels: Record<string, string | number>; value: number; metricName?: string }[],
  ) {}

  get(): { name: string; help: string; type: string; values: { labels: Record<string, string | number>; value: number }[]; aggregator: string } {
    return { name: this.name, help: this.help, type: this.type, values: this.read(), aggregator: this.aggregator };
  }

  reset(): void {}
}

/** The series of one unlabelled histogram (counts per bucket of `bounds`, the last above them), none when absent. */
function histogramValues(name: string, bounds: readonly number[], h: { counts: ArrayLike<number>; sum: number; count: number } | undefined): HistogramValue[] {
  const values: HistogramValue[] = [];
  if (h) pushHistogram(values, name, bounds, h, {});
  return values;
}

/** One unlabelled value, or none when the backend does not report it. */
const unlabelled = (n: number | undefined) => (n === undefined ? [] : [{ labels: {}, value: n }]);

/** The analytics store's counters (AnalyticsStore.counters) as Prometheus counters and histograms; a part the backend does not report is left out. */
function analyticsCounters(read: () => AnalyticsCounters): ReadMetric[] {
  const seconds = (name: string, help: string, h: (c: AnalyticsCounters) => SecondsHistogram | undefined) =>
    new ReadMetric('histogram', name, help, () => histogramValues(name, WRITER_SECONDS_BUCKETS, h(read())));
  return [
    new ReadMetric(
      'counter',
      'inkwell_analytics_summary_days_total',
      'Day summaries loaded by reads and by the background sealer, by source: memory, blob (stored), extended (from an older one), rebuilt (from segments)',
      () => Object.entries(read().summaryDays ?? {}).map(([source, value]) => ({ labels: { source }, value })),
    ),
    new ReadMetric('counter', 'inkwell_analytics_summaries_sealed_total', 'Day summaries stored by the background sealer', () =>
      unlabelled(read().summariesSealed),
    ),
    new ReadMetric('counter', 'inkwell_analytics_segments_compacted_total', 'Raw-event segments merged by compaction', () =>
      unlabelled(read().segmentsCompacted),
    ),
    new ReadMetric('counter', 'inkwell_analytics_ingest_groups_total', 'Group transactions the ingest writer committed (one WAL sync covers a group)', () =>
      unlabelled(read().ingest?.groups),
    ),
    new ReadMetric(
      'counter',
      'inkwell_analytics_ingest_group_events_total',
      'Events in the group transactions committed (over the groups: the mean group size)',
      () => unlabelled(read().ingest?.events),
    ),
    seconds(
      'inkwell_analytics_ingest_transaction_seconds',
      "An ingest group's transaction, from its first statement to COMMIT",
      (c) => c.ingest?.transactionSeconds,
    ),
    seconds(
      'inkwell_analytics_ingest_sync_seconds',
      "How long a committed group's writes waited for the WAL sync that made them durable (SQLite's ingest worker; none where COMMIT syncs itself)",
      (c) => c.ingest?.syncSeconds,
    ),
  ];
}

/** `analytics`: the store's counters, exposed when given (the app passes its store's). */
export function createMetrics(analytics?: () => AnalyticsCounters) {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const httpDuration = new DurationHistogram(
    'inkwell_http_request_duration_seconds',
    'HTTP request duration by route and status',
    ['method', 'route', 'status'],
    HTTP_BUCKETS,
  );
  // The registry only reads name, help, type, aggregator, get() and reset() (a structural fit its typings do not declare).
  for (const m of [httpDuration, ...(analytics ? analyticsCounters(analytics) : [])]) registry.registerMetric(m as unknown as client.Metric);
  return { registry, httpDuration, client };
}

export type Metrics = ReturnType<typeof createMetrics>;
