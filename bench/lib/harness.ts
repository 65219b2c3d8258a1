// Timing harness shared by the export baselines: "best" (aggregate once, serve every page from the result)
// and "naive" (re-aggregate for every page with LIMIT/OFFSET, as an offset API does by default).
import { digestExport, type ExportResult, PAGE_SIZE, type PageRow, pageCount, type Totals } from './export.ts';
import { round, type Summary, since, summarise } from './stats.ts';

export interface ExportSource {
  name: string;
  /** Site-wide distinct visitors over the window. */
  totals(): Promise<Totals>;
  /** Every page row of the window, in export order. */
  allRows(): Promise<PageRow[]>;
  /** One page of rows in export order (LIMIT/OFFSET on the aggregation). */
  pageRows(offset: number, limit: number): Promise<PageRow[]>;
  /**
   * The totals and the rows can be computed at the same time (separate connections): the best mode then runs
   * them concurrently, so a system whose single query uses one core gets both cores.
   */
  concurrentQueries?: boolean;
}

export interface BestTiming {
  /** Whole export: aggregation + every 250-row page sliced from the result. */
  walkMs: Summary;
  /** Time to the first page (the aggregation). */
  firstPageMs: Summary;
  /** Median time to serve one further page from the computed result. */
  furtherPageMs: Summary;
}

export interface NaiveTiming {
  pages: number;
  pagesMeasured: number;
  /** true when only some pages were timed and the walk is extrapolated from their mean. */
  extrapolated: boolean;
  walkMs: number;
  firstPageMs: number;
  pageMs: Summary;
}

export interface ExportMeasurement {
  system: string;
  rows: number;
  pages: number;
  totals: Totals;
  digest: string;
  best: BestTiming;
  naive: NaiveTiming | null;
  /** The answer itself (not written to results; used to diff systems row by row). */
  answer?: ExportResult;
}

export interface MeasureOptions {
  runs: number;
  warmups: number;
  /** Pages timed in the naive walk: 'all', or a number of evenly spaced pages (first and last included). */
  naivePages: 'all' | number;
  /** Skip the naive measurement. */
  skipNaive?: boolean;
  log?: (msg: string) => void;
}

async function bestOnce(src: ExportSource): Promise<{ result: ExportResult; walk: number; first: number; further: number[] }> {
  const t0 = performance.now();
  const [totals, rows] = src.concurrentQueries ? await Promise.all([src.totals(), src.allRows()]) : [await src.totals(), await src.allRows()];
  const pages: PageRow[][] = [];
  const further: number[] = [];
  let first = 0;
  const n = pageCount(rows.length);
  for (let p = 0; p < n; p++) {
    const tp = performance.now();
    const page = rows.slice(p * PAGE_SIZE, (p + 1) * PAGE_SIZE);
    // Serialise the page as a response would be, so serving from the result is not free.
    JSON.stringify({ totals, visitors: page, hasMore: (p + 1) * PAGE_SIZE < rows.length });
    pages.push(page);
    if (p === 0) first = since(t0);
    else further.push(since(tp));
  }
  return { result: { totals, rows }, walk: since(t0), first, further };
}

export function samplePages(pages: number, wanted: 'all' | number): number[] {
  if (wanted === 'all' || wanted >= pages) return Array.from({ length: pages }, (_, i) => i);
  if (wanted <= 1) return [0];
  const set = new Set<number>();
  for (let i = 0; i < wanted; i++) set.add(Math.round((i * (pages - 1)) / (wanted - 1)));
  return [...set].sort((a, b) => a - b);
}

export async function measureExport(src: ExportSource, o: MeasureOptions): Promise<ExportMeasurement> {
  const log = o.log ?? (() => {});
  let reference: ExportResult | null = null;
  for (let i = 0; i < o.warmups; i++) {
    const r = await bestOnce(src);
    reference = r.result;
    log(`${src.name} warm-up ${i + 1}: ${round(r.walk)} ms`);
  }
  const walks: number[] = [];
  const firsts: number[] = [];
  const furthers: number[] = [];
  for (let i = 0; i < o.runs; i++) {
    const r = await bestOnce(src);
    reference ??= r.result;
    walks.push(r.walk);
    firsts.push(r.first);
    furthers.push(...r.further);
    log(`${src.name} best run ${i + 1}/${o.runs}: ${round(r.walk)} ms`);
  }
  const result = reference as ExportResult;
  const pages = pageCount(result.rows.length);

  let naive: NaiveTiming | null = null;
  if (!o.skipNaive) {
    const which = samplePages(pages, o.naivePages);
    const times: number[] = [];
    const collected: PageRow[] = [];
    let lastTotals: Totals | null = null;
    for (const p of which) {
      const t0 = performance.now();
      // Each page request recomputes the totals and the aggregation, keeping LIMIT+1 rows to know hasMore.
      lastTotals = await src.totals();
      const rows = await src.pageRows(p * PAGE_SIZE, PAGE_SIZE + 1);
      const page = rows.slice(0, PAGE_SIZE);
      JSON.stringify({ totals: lastTotals, visitors: page, hasMore: rows.length > PAGE_SIZE });
      times.push(since(t0));
      collected.push(...page);
      log(`${src.name} naive page ${p + 1}/${pages}: ${round(times[times.length - 1] as number)} ms`);
    }
    const all = which.length === pages;
    if (all && lastTotals) {
      const d = digestExport({ totals: lastTotals, rows: collected });
      if (d !== digestExport(result)) throw new Error(`${src.name}: the naive walk's answer differs from the one-aggregation answer`);
    }
    const sum = times.reduce((a, b) => a + b, 0);
    naive = {
      pages,
      pagesMeasured: which.length,
      extrapolated: !all,
      walkMs: round(all ? sum : (sum / times.length) * pages),
      firstPageMs: round(times[0] as number),
      pageMs: summarise(times),
    };
  }
  return {
    system: src.name,
    rows: result.rows.length,
    pages,
    totals: result.totals,
    digest: digestExport(result),
    best: { walkMs: summarise(walks), firstPageMs: summarise(firsts), furtherPageMs: summarise(furthers.length ? furthers : [0]) },
    naive,
    answer: result,
  };
}
