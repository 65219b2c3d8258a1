// Insights benchmark: the series, agents and referrers endpoints over the whole 90-day dataset on the embedded
// default, through HTTP, with the visitors export's first page (30 and 90 days) measured in the same run for
// comparison. Every answer is checked against the dataset's own ground truth.
//
//   npm run bench:insights -- [--events 200k] [--rounds 10] [--concurrency 4] [--keep] [--reuse] [--results-dir DIR]
//
// Writes bench/results/insights-latest.json and a line in bench/results/history.jsonl (or both under
// --results-dir, for trial runs), prints a table and exits 1 when an answer is wrong.
import { genArgs, intArg, parseArgs } from './lib/args.ts';
import { DAY_MS, type DatasetMeta, dayString, ensureDataset, genOptions, readEvents } from './lib/dataset.ts';
import { inkwellData, type LoadRecord, loadInkwellData, releaseInkwellData } from './lib/inkwell-data.ts';
import { environment, writeResults } from './lib/results.ts';
import { dirSizeMb, startService } from './lib/service.ts';
import { median, percentile, round, since } from './lib/stats.ts';

const args = parseArgs(process.argv.slice(2));
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const rounds = intArg(args, 'rounds') ?? 10;
const concurrency = intArg(args, 'concurrency') ?? 4;
const resultsDir = args.get('results-dir');
const TARGET_MS = 300;
const { meta, csv } = ensureDataset(genOptions(genArgs(args)), log);
/** The whole dataset: 90 days by default, dateTo exclusive. */
const whole = { dateFrom: meta.startDay, dateTo: meta.endDay };
log(`dataset ${meta.name}: ${meta.counts.events.toLocaleString('en')} events, ${whole.dateFrom} … ${whole.dateTo} (exclusive)`);

// ---------------------------------------------------------------------------------------------------------
// Ground truth from the dataset file: per day, a bitmap of the visitors with a qualifying human view and one of
// those with a qualifying ai view (over visitor indexes given in first-seen order), and row counts by class.

interface DayTruth {
  human: Uint32Array;
  ai: Uint32Array;
  crawlerRows: number;
  aiRows: number;
  /** Page views of ai and crawler rows: the qualifying rule without its class condition (how agents count views). */
  agentViews: number;
}

interface Counts {
  human: number;
  ai: number;
  total: number;
}

class GroundTruth {
  readonly days: DayTruth[];
  private readonly memo = new Map<string, Counts>();
  private readonly startMs: number;

  constructor(
    readonly meta: DatasetMeta,
    readonly words: number,
  ) {
    this.startMs = Date.parse(`${meta.startDay}T00:00:00.000Z`);
    this.days = Array.from({ length: meta.options.days }, () => ({
      human: new Uint32Array(words),
      ai: new Uint32Array(words),
      crawlerRows: 0,
      aiRows: 0,
      agentViews: 0,
    }));
  }

  /** Day index of a `YYYY-MM-DD` (may fall outside the dataset). */
  dayIndex(iso: string): number {
    return Math.round((Date.parse(`${iso}T00:00:00.000Z`) - this.startMs) / DAY_MS);
  }

  private slice(from: string, to: string): DayTruth[] {
    return this.days.slice(Math.max(0, this.dayIndex(from)), Math.max(0, this.dayIndex(to)));
  }

  /** Distinct visitors with a qualifying view in [from, to): human, ai, and either (deduplicated). */
  distinct(from: string, to: string): Counts {
    const key = `${from}/${to}`;
    const known = this.memo.get(key);
    if (known) return known;
    const h = new Uint32Array(this.words);
    const a = new Uint32Array(this.words);
    for (const d of this.slice(from, to)) {
      for (let i = 0; i < this.words; i++) {
        h[i] = (h[i] as number) | (d.human[i] as number);
        a[i] = (a[i] as number) | (d.ai[i] as number);
      }
    }
    const out: Counts = { human: 0, ai: 0, total: 0 };
    for (let i = 0; i < this.words; i++) {
      out.human += popcount(h[i] as number);
      out.ai += popcount(a[i] as number);
      out.total += popcount((h[i] as number) | (a[i] as number));
    }
    this.memo.set(key, out);
    return out;
  }

  rows(from: string, to: string): { crawler: number; ai: number; agentViews: number } {
    const out = { crawler: 0, ai: 0, agentViews: 0 };
    for (const d of this.slice(from, to)) {
      out.crawler += d.crawlerRows;
      out.ai += d.aiRows;
      out.agentViews += d.agentViews;
    }
    return out;
  }
}

function popcount(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** The generator's static assets (its counts use the same test); page paths never end so. */
const STATIC_ASSET = /\.(js|css|png|svg|ico|woff2|map)$/;

/** One pass over the CSV (streamed: the full dataset is 10M rows). */
async function groundTruth(): Promise<GroundTruth> {
  const capacity = meta.counts.distinctVisitors;
  const truth = new GroundTruth(meta, Math.ceil(capacity / 32));
  const visitorIndex = new Map<string, number>();
  for await (const e of readEvents(csv)) {
    const d = truth.days[truth.dayIndex(e.day)];
    if (!d) throw new Error(`event on ${e.day}, outside the dataset's days`);
    if (e.cls !== 'human') {
      if (e.cls === 'crawler') d.crawlerRows++;
      else d.aiRows++;
      if (e.method === 'GET' && ((e.status >= 200 && e.status < 300) || e.status === 304) && !STATIC_ASSET.test(e.path)) d.agentViews++;
    }
    if (!e.q) continue;
    let v = visitorIndex.get(e.visitor);
    if (v === undefined) {
      v = visitorIndex.size;
      if (v >= capacity) throw new Error(`more visitors than the meta file's ${capacity}`);
      visitorIndex.set(e.visitor, v);
    }
    const bits = e.cls === 'ai' ? d.ai : d.human;
    bits[v >>> 5] = (bits[v >>> 5] as number) | (1 << (v & 31));
  }
  return truth;
}

// ---------------------------------------------------------------------------------------------------------
// The queries and how each answer is checked.

interface Client {
  baseUrl: string;
  projectId: string;
  key: string;
}

interface Timed {
  ms: number;
  body: any;
}

async function get(c: Client, pathAndQuery: string): Promise<Timed> {
  const t0 = performance.now();
  const r = await fetch(`${c.baseUrl}/v1/analytics/${encodeURIComponent(c.projectId)}/${pathAndQuery}`, { headers: { authorization: `Bearer ${c.key}` } });
  const text = await r.text();
  const ms = since(t0);
  if (r.status !== 200) throw new Error(`GET …/${pathAndQuery} returned ${r.status}: ${text.slice(0, 500)}`);
  return { ms, body: JSON.parse(text) };
}

interface Query {
  name: string;
  label: string;
  path: string;
  /** Problems with the answer (empty when it is right). */
  check(body: any, c: Client): Promise<string[]>;
}

interface Bucket {
  date: string;
  human: number;
  ai: number;
  total: number;
  crawlerRequests: number;
}

const PAGE = 50;
const addDays = (iso: string, n: number) => dayString(iso, n);
const nextMonth = (iso: string) => {
  const d = new Date(`${iso.slice(0, 7)}-01T00:00:00.000Z`);
  d.setUTCMonth(d.getUTCMonth() + 1);
  return d.toISOString().slice(0, 10);
};

function seriesQuery(truth: GroundTruth, interval: 'day' | 'week' | 'month'): Query {
  const { dateFrom, dateTo } = whole;
  return {
    name: `series-${interval}`,
    label: `series, ${interval}, ${meta.options.days} days`,
    path: `series?dateFrom=${dateFrom}&dateTo=${dateTo}&interval=${interval}`,
    async check(body) {
      const problems: string[] = [];
      if (body.interval !== interval) problems.push(`interval ${JSON.stringify(body.interval)}`);
      const series = body.series as Bucket[];
      if (!Array.isArray(series) || series.length === 0) return [...problems, 'no series'];
      // Bucket i covers [date_i, date_i+1) within [dateFrom, dateTo): the first may start before dateFrom (the
      // start of its week or month), and no day may be left out.
      for (let i = 0; i < series.length; i++) {
        const b = series[i] as Bucket;
        const start = truth.dayIndex(b.date) < truth.dayIndex(dateFrom) ? dateFrom : b.date;
        const end = i + 1 < series.length ? (series[i + 1] as Bucket).date : dateTo;
        if (i === 0 && start !== dateFrom) problems.push(`first bucket ${b.date} starts after ${dateFrom}`);
        if (end <= start || end > dateTo) {
          problems.push(`bucket ${b.date}: bad bounds [${start}, ${end})`);
          continue;
        }
        const expectedEnd = interval === 'day' ? addDays(b.date, 1) : interval === 'week' ? addDays(b.date, 7) : nextMonth(b.date);
        // The first and last buckets may be cut short by the range.
        if (i > 0 && i + 1 < series.length ? end !== expectedEnd : end > expectedEnd)
          problems.push(`bucket ${b.date} is followed by ${end} (a ${interval} ends ${expectedEnd})`);
        const want = { ...truth.distinct(start, end), crawlerRequests: truth.rows(start, end).crawler };
        const got = { human: b.human, ai: b.ai, total: b.total, crawlerRequests: b.crawlerRequests };
        if (JSON.stringify(got) !== JSON.stringify(want)) problems.push(`${b.date}: got ${JSON.stringify(got)}, dataset ${JSON.stringify(want)}`);
      }
      const want = { ...truth.distinct(dateFrom, dateTo), crawlerRequests: truth.rows(dateFrom, dateTo).crawler };
      const t = body.totals ?? {};
      const got = { human: t.human, ai: t.ai, total: t.total, crawlerRequests: t.crawlerRequests };
      if (JSON.stringify(got) !== JSON.stringify(want)) problems.push(`totals: got ${JSON.stringify(got)}, dataset ${JSON.stringify(want)}`);
      return problems;
    },
  };
}

interface AgentRow {
  agent: string;
  class: string;
  category: string | null;
  visitors: number;
  views: number;
  requests: number;
}

/** The agents table's sums beside the dataset's, and its first rows (visitors per agent are not checked). */
let agentsInfo: Record<string, unknown> = {};

function agentsQuery(truth: GroundTruth): Query {
  const { dateFrom, dateTo } = whole;
  return {
    name: 'agents',
    label: `agents, first page, ${meta.options.days} days`,
    path: `agents?dateFrom=${dateFrom}&dateTo=${dateTo}&limit=${PAGE}&offset=0`,
    async check(body, c) {
      const rows: AgentRow[] = [...(body.agents ?? [])];
      for (let more = body.hasMore === true, offset = PAGE; more; offset += PAGE) {
        const next = (await get(c, `agents?dateFrom=${dateFrom}&dateTo=${dateTo}&limit=${PAGE}&offset=${offset}`)).body;
        if ((next.agents ?? []).length === 0) return ['hasMore is true but the next page is empty'];
        rows.push(...next.agents);
        more = next.hasMore === true;
      }
      const problems: string[] = [];
      const want = truth.rows(dateFrom, dateTo);
      const sum = (f: (r: AgentRow) => number, cls?: string) => rows.filter((r) => !cls || r.class === cls).reduce((a, r) => a + f(r), 0);
      const requests = sum((r) => r.requests);
      if (requests !== want.ai + want.crawler)
        problems.push(`sum of requests over agents ${requests} ≠ ai + crawler rows in the dataset ${want.ai + want.crawler} (${want.ai} + ${want.crawler})`);
      // Stricter than the sum: the dataset's classes are checked against Inkwell's classifier (check-dataset.ts).
      for (const [cls, rowsOfClass] of [
        ['ai', want.ai],
        ['crawler', want.crawler],
      ] as const) {
        const got = sum((r) => r.requests, cls);
        if (got !== rowsOfClass) problems.push(`requests of ${cls} agents ${got} ≠ ${cls} rows in the dataset ${rowsOfClass}`);
      }
      const views = sum((r) => r.views);
      if (views !== want.agentViews) problems.push(`sum of views over agents ${views} ≠ page views of ai and crawler rows in the dataset ${want.agentViews}`);
      const names = rows.map((r) => `${r.agent}/${r.class}`);
      if (new Set(names).size !== names.length) problems.push('an agent appears twice');
      for (const r of rows) if (r.class !== 'ai' && r.class !== 'crawler') problems.push(`${r.agent}: class ${JSON.stringify(r.class)}`);
      agentsInfo = {
        agents: rows.length,
        requestsAi: sum((r) => r.requests, 'ai'),
        requestsCrawler: sum((r) => r.requests, 'crawler'),
        datasetAiRows: want.ai,
        datasetCrawlerRows: want.crawler,
        views: sum((r) => r.views),
        datasetAgentViews: want.agentViews,
        top: rows.slice(0, 5).map((r) => `${r.agent} (${r.class}): ${r.visitors} visitors, ${r.requests} requests`),
      };
      return problems;
    },
  };
}

function referrersQuery(): Query {
  const { dateFrom, dateTo } = whole;
  return {
    name: 'referrers',
    label: `referrers, first page, ${meta.options.days} days`,
    path: `referrers?dateFrom=${dateFrom}&dateTo=${dateTo}&limit=${PAGE}&offset=0`,
    async check(body) {
      // The dataset sends no referrer.
      return Array.isArray(body.referrers) && body.referrers.length === 0 && body.hasMore === false
        ? []
        : [`expected no referrers, got ${JSON.stringify(body).slice(0, 300)}`];
    },
  };
}

function visitorsQuery(truth: GroundTruth, name: string, label: string, dateFrom: string, dateTo: string): Query {
  return {
    name,
    label,
    // The page size the export benchmark walks with.
    path: `visitors?dateFrom=${dateFrom}&dateTo=${dateTo}&limit=250&offset=0`,
    async check(body) {
      const want = truth.distinct(dateFrom, dateTo);
      const t = body.totals ?? {};
      const got = { human: t.human, ai: t.ai, total: t.total };
      const problems = JSON.stringify(got) === JSON.stringify(want) ? [] : [`totals: got ${JSON.stringify(got)}, dataset ${JSON.stringify(want)}`];
      if (!Array.isArray(body.visitors) || body.visitors.length !== 250) problems.push(`first page has ${body.visitors?.length} rows, not 250`);
      return problems;
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// The run

interface Timing {
  median: number;
  p95: number;
  min: number;
  max: number;
  runs: number;
}

const timing = (xs: number[]): Timing => ({
  median: round(median(xs)),
  p95: round(percentile(xs, 95)),
  min: round(Math.min(...xs)),
  max: round(Math.max(...xs)),
  runs: xs.length,
});

interface QueryResult {
  label: string;
  path: string;
  /** The request right after new data arrived (one event outside every range): the answer is recomputed. */
  fresh?: Timing;
  /** The same request repeated at once, with no new data (the service may answer from a kept result). */
  cached?: Timing;
}

interface Run extends LoadRecord {
  backend: 'sqlite';
  databaseMb?: number;
  /** First request after a service restart, ms. */
  cold: Record<string, number>;
  queries: Record<string, QueryResult>;
  peakRssMb?: number | null;
  agents?: Record<string, unknown>;
  error?: string;
}

const problems: string[] = [];
const note = (query: Query, found: string[], when: string) => {
  for (const p of found.slice(0, 10)) problems.push(`${query.name} (${when}): ${p}`);
  if (found.length > 10) problems.push(`${query.name} (${when}): … ${found.length - 10} more`);
  if (found.length) log(`${query.name} (${when}): WRONG ANSWER: ${found.slice(0, 3).join('; ')}`);
};

log('ground truth: reading the dataset');
const t0 = performance.now();
const truth = await groundTruth();
log(`ground truth: ${round(since(t0) / 1000, 1)} s`);

const queries: Query[] = [
  seriesQuery(truth, 'day'),
  seriesQuery(truth, 'week'),
  seriesQuery(truth, 'month'),
  agentsQuery(truth),
  referrersQuery(),
  visitorsQuery(truth, 'visitors-30d', 'visitors export, first page, 30 days', meta.window.dateFrom, meta.window.dateTo),
  visitorsQuery(truth, 'visitors-90d', `visitors export, first page, ${meta.options.days} days`, whole.dateFrom, whole.dateTo),
];
const byName = (name: string) => queries.find((q) => q.name === name) as Query;

const run: Run = { backend: 'sqlite', cold: {}, queries: {} };
const data = inkwellData({ name: 'insights', backend: 'sqlite', meta, reuse: args.has('reuse'), keep: args.has('keep') });
try {
  const project = await loadInkwellData(data, { meta, csv, concurrency, log }, run);
  run.databaseMb = dirSizeMb(data.dataDir);
  const peaks: (number | null)[] = [];

  // Cold: the first request of a fresh process, once for the series and once (after another restart) for agents.
  for (const name of ['series-day', 'agents']) {
    const svc = await startService(data.service);
    try {
      const c: Client = { baseUrl: svc.baseUrl, projectId: project.projectId, key: project.adminKey };
      const q = byName(name);
      const r = await get(c, q.path);
      run.cold[name] = round(r.ms);
      note(q, await q.check(r.body, c), 'cold');
      log(`${name}: cold ${round(r.ms)} ms`);
    } finally {
      peaks.push(await svc.stop());
    }
  }

  const svc = await startService(data.service);
  try {
    const c: Client = { baseUrl: svc.baseUrl, projectId: project.projectId, key: project.adminKey };
    // New data the day before the dataset: the data version changes, no answer measured here does.
    const bump = async () => {
      const r = await fetch(`${svc.baseUrl}/v1/analytics/${project.projectId}/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${project.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          events: [
            { path: '/bench-bump', timestamp: `${addDays(meta.startDay, -1)}T12:00:00.000Z`, userAgent: meta.userAgents.at(-1), visitorId: 'bench-bump' },
          ],
        }),
      });
      if (r.status !== 202) throw new Error(`bump ingest returned ${r.status}`);
    };
    for (const q of queries) note(q, await q.check((await get(c, q.path)).body, c), 'warm-up');
    const fresh = new Map<string, number[]>(queries.map((q) => [q.name, []]));
    const cached = new Map<string, number[]>(queries.map((q) => [q.name, []]));
    for (let r = 0; r < rounds; r++) {
      // The order rotates each round, so no query is always the first after another's work.
      const order = [...queries.slice(r % queries.length), ...queries.slice(0, r % queries.length)];
      for (const q of order) {
        await bump();
        const a = await get(c, q.path);
        const b = await get(c, q.path);
        fresh.get(q.name)?.push(a.ms);
        cached.get(q.name)?.push(b.ms);
        note(q, [...(await q.check(a.body, c)), ...(await q.check(b.body, c))], `round ${r + 1}`);
      }
      log(`round ${r + 1}/${rounds}: ${queries.map((q) => `${q.name} ${round(fresh.get(q.name)?.at(-1) ?? 0, 1)}`).join(', ')} ms`);
    }
    for (const q of queries)
      run.queries[q.name] = { label: q.label, path: q.path, fresh: timing(fresh.get(q.name) ?? []), cached: timing(cached.get(q.name) ?? []) };
    run.agents = agentsInfo;
  } finally {
    peaks.push(await svc.stop());
  }
  run.peakRssMb = Math.max(...peaks.map((p) => p ?? 0)) || null;
} catch (err) {
  run.error = (err as Error).message;
  log(`FAILED: ${run.error.slice(0, 1000)}`);
} finally {
  releaseInkwellData(data, log);
}

const under = (name: string) => {
  const m = run.queries[name]?.fresh?.median;
  return m !== undefined && m < TARGET_MS;
};
const ok = problems.length === 0 && run.error === undefined;
const result = {
  benchmark: 'insights',
  environment: environment(),
  dataset: {
    name: meta.name,
    options: meta.options,
    counts: meta.counts,
    range: whole,
    window: { dateFrom: meta.window.dateFrom, dateTo: meta.window.dateTo },
  },
  method: {
    backend: 'sqlite',
    rounds,
    ingestConcurrency: concurrency,
    notes: [
      'The dataset ingested through POST /v1/analytics/{projectId}/events (1,000-event batches) into `inkwell serve` (embedded SQLite) in a child process, which is then restarted.',
      'Cold: the first request of a fresh service process (series-day in one, agents in the next; the OS page cache is warm).',
      'Each round, in an order rotating by round, for each query: one event is ingested on the day before the dataset (the data version changes, the answer does not), the request is timed (fresh), then repeated at once (cached). Median and p95 over rounds, after one untimed warm-up of each query.',
      'Every answer is checked against the dataset: per bucket and in total, distinct visitors with a qualifying view (q=1) human / ai / either and crawler rows; for agents (every page), the requests of ai and of crawler agents equal the ai and crawler rows and their views the ai and crawler rows that are page views (GET, 2xx/304, not a static asset) (visitors per agent are not checked: the dataset does not name the rule); referrers are empty; the visitors export totals.',
    ],
  },
  inkwell: run,
  targets: { seriesDayUnder300ms: under('series-day'), agentsUnder300ms: under('agents') },
  ok,
  problems,
};
const files = resultsDir ? writeResults('insights', result, resultsDir) : writeResults('insights', result);

const table: string[][] = [['query', 'fresh median ms', 'fresh p95 ms', 'cached median ms', 'cold ms']];
for (const q of queries) {
  const r = run.queries[q.name];
  table.push([q.label, String(r?.fresh?.median ?? '-'), String(r?.fresh?.p95 ?? '-'), String(r?.cached?.median ?? '-'), String(run.cold[q.name] ?? '')]);
}
const widths = (table[0] as string[]).map((_, i) => Math.max(...table.map((r) => (r[i] ?? '').length)));
for (const r of table) console.log(r.map((cell, i) => cell.padEnd(widths[i] as number)).join('  '));
console.log(`agents: ${JSON.stringify(run.agents ?? {})}`);
console.log(`targets (< ${TARGET_MS} ms, fresh median): ${JSON.stringify(result.targets)}; peak RSS ${run.peakRssMb} MB; database ${run.databaseMb} MB`);
console.log(`results: ${files.latest}`);
if (!ok) {
  console.error(`FAILED: ${run.error ?? `${problems.length} wrong answers`}`);
  for (const p of problems.slice(0, 30)) console.error(`  ${p}`);
  process.exitCode = 1;
}
