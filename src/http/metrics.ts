// Prometheus metrics (prom-client), one registry per app instance.
import client from 'prom-client';
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
    for (const s of this.#series.values()) {
      let cumulative = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        cumulative += s.counts[i] as number;
        const le = i < this.buckets.length ? (this.buckets[i] as number) : '+Inf';
        values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: `${this.name}_bucket`, exemplar: null });
      }
      values.push({ labels: { ...s.labels }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...s.labels }, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.#series.clear();
  }
}

/**
 * A counter whose values are read at scrape time from counts kept elsewhere (e.g. the analytics store's), in
 * prom-client's shape like DurationHistogram: nothing is copied on the hot path.
 */
export class ReadCounter {
  readonly type = 'counter';
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    private readonly read: () => { labels: Record<string, string>; value: number }[],
  ) {}

  get(): { name: string; help: string; type: string; values: { labels: Record<string, string>; value: number }[]; aggregator: string } {
    return { name: this.name, help: this.help, type: this.type, values: this.read(), aggregator: this.aggregator };
  }

  reset(): void {}
}

/** One unlabelled value, or none when the backend does not report it. */
const unlabelled = (n: number | undefined) => (n === undefined ? [] : [{ labels: {}, value: n }]);

/** The analytics store's counters (AnalyticsStore.counters) as Prometheus counters; a part the backend does not report is left out. */
function analyticsCounters(read: () => AnalyticsCounters): ReadCounter[] {
  return [
    new ReadCounter(
      'inkwell_analytics_summary_days_total',
      'Day summaries loaded by reads and by the background sealer, by source: memory, blob (stored), extended (from an older one), rebuilt (from segments)',
      ['source'],
      () => Object.entries(read().summaryDays ?? {}).map(([source, value]) => ({ labels: { source }, value })),
    ),
    new ReadCounter('inkwell_analytics_summaries_sealed_total', 'Day summaries stored by the background sealer', [], () => unlabelled(read().summariesSealed)),
    new ReadCounter('inkwell_analytics_segments_compacted_total', 'Raw-event segments merged by compaction', [], () => unlabelled(read().segmentsCompacted)),
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
