// Analytics export benchmark: generate (if missing) → baselines (DuckDB, raw-table PostgreSQL) → Inkwell on the
// embedded default and on PostgreSQL, through its HTTP API, all in one run on the same data.
//
//   npm run bench:analytics -- [--events 200k] [--runs 5] [--naive-pages 5|all] [--no-naive]
//                              [--systems duckdb,pg-raw,inkwell-sqlite,inkwell-pg] [--concurrency 4] [--keep] [--reuse]
//
// Writes bench/results/analytics-latest.json and a line in bench/results/history.jsonl and prints a table.
import { openDuckDb, runDuckDbBaseline } from './baselines/duckdb.ts';
import { BENCH_PG_ADMIN_URL, runPgRawBaseline } from './baselines/pg-raw.ts';
import { genArgs, intArg, parseArgs } from './lib/args.ts';
import { ensureDataset, genOptions } from './lib/dataset.ts';
import { diffExports, digestExport, type ExportResult } from './lib/export.ts';
import type { ExportMeasurement, MeasureOptions } from './lib/harness.ts';
import { type IngestStats, walkExport } from './lib/inkwell-client.ts';
import { inkwellData, loadInkwellData, releaseInkwellData } from './lib/inkwell-data.ts';
import { environment, writeResults } from './lib/results.ts';
import { type Backend, dirSizeMb, freshPgDatabase, startService } from './lib/service.ts';
import { percentile, round, summarise } from './lib/stats.ts';

const args = parseArgs(process.argv.slice(2));
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const systems = new Set((args.get('systems') ?? 'duckdb,pg-raw,inkwell-sqlite,inkwell-pg').split(','));
const runs = intArg(args, 'runs') ?? 5;
const naiveArg = args.get('naive-pages') ?? '5';
const measure: MeasureOptions = {
  runs,
  warmups: 1,
  naivePages: naiveArg === 'all' ? 'all' : Number(naiveArg),
  skipNaive: args.has('no-naive'),
  log,
};
const concurrency = intArg(args, 'concurrency') ?? 4;

const { meta, csv } = ensureDataset(genOptions(genArgs(args)), log);
log(`dataset ${meta.name}: ${meta.counts.events.toLocaleString('en')} events, window ${meta.window.dateFrom} … ${meta.window.dateTo} (exclusive)`);

interface InkwellRun {
  system: string;
  /** The ingest was skipped: data from an earlier run of the same dataset (--reuse). */
  reusedIngest?: boolean;
  backend: Backend;
  ingest?: IngestStats;
  peakRssMbIngest?: number | null;
  peakRssMbExport?: number | null;
  databaseMb?: number | null;
  rows?: number;
  pages?: number;
  totals?: unknown;
  digest?: string;
  orderOk?: boolean;
  /** First walk after a service restart (nothing computed or cached in the process). */
  coldWalk?: { walkMs: number; firstPageMs: number; furtherPageMedianMs: number; furtherPageMaxMs: number };
  /** Walks after new data arrived outside the window (the data version changes, so the export is recomputed). */
  walkMs?: ReturnType<typeof summarise>;
  firstPageMs?: ReturnType<typeof summarise>;
  furtherPageMs?: ReturnType<typeof summarise> & { p99: number };
  /** A repeated walk of an unchanged window (the service may answer from a cached result). */
  cachedWalkMs?: number;
  error?: string;
}

async function runInkwell(backend: Backend, reference: ExportResult | null): Promise<InkwellRun> {
  const system = `inkwell-${backend}`;
  const out: InkwellRun = { system, backend };
  // --reuse: keep the ingested data between runs (per backend and dataset) and skip the ingest when it is there,
  // so the export can be re-measured after a code change without re-ingesting (migrations still run on start).
  const data = inkwellData({ name: 'inkwell', backend, meta, reuse: args.has('reuse'), keep: args.has('keep') });
  const { dataDir, service: s } = data;
  try {
    const databaseUrl = async () => process.env.BENCH_INKWELL_DATABASE_URL ?? (await freshPgDatabase('bench_inkwell_export', BENCH_PG_ADMIN_URL));
    const project = await loadInkwellData(data, { meta, csv, concurrency, log, databaseUrl }, out);
    out.databaseMb = backend === 'sqlite' ? dirSizeMb(dataDir) : null;

    // Phase 2: a fresh process for the export, so its peak RSS is the export's.
    const svc = await startService(s);
    try {
      const walk = () => walkExport(svc.baseUrl, project.projectId, project.adminKey, meta.window.dateFrom, meta.window.dateTo);
      const bump = async () => {
        // One crawler event on the first day (outside the window): the data version changes, the answer does not.
        const r = await fetch(`${svc.baseUrl}/v1/analytics/${project.projectId}/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${project.adminKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            events: [{ path: '/bench-bump', timestamp: `${meta.startDay}T00:00:00.000Z`, userAgent: meta.userAgents.at(-1), visitorId: 'bench-bump' }],
          }),
        });
        if (r.status !== 202) throw new Error(`bump ingest returned ${r.status}`);
      };
      const cold = await walk();
      out.coldWalk = {
        walkMs: round(cold.walkMs),
        firstPageMs: round(cold.firstPageMs),
        furtherPageMedianMs: summarise(cold.furtherPageMs.length ? cold.furtherPageMs : [0]).median,
        furtherPageMaxMs: round(Math.max(0, ...cold.furtherPageMs)),
      };
      log(`${system}: cold walk ${round(cold.walkMs)} ms (first page ${round(cold.firstPageMs)} ms, ${cold.pages} pages)`);
      out.rows = cold.result.rows.length;
      out.pages = cold.pages;
      out.totals = cold.result.totals;
      out.digest = cold.digest;
      out.orderOk = cold.orderOk;
      if (reference) {
        const d = diffExports(reference, cold.result);
        if (d.length) log(`${system}: ANSWER DIFFERS from the baselines: ${d.join('; ')}`);
      }
      const walks: number[] = [];
      const firsts: number[] = [];
      const further: number[] = [];
      for (let i = 0; i < runs; i++) {
        await bump();
        const w = await walk();
        if (w.digest !== cold.digest) throw new Error(`${system}: walk ${i + 1} gave a different answer than the first walk`);
        walks.push(w.walkMs);
        firsts.push(w.firstPageMs);
        further.push(...w.furtherPageMs);
        log(`${system}: run ${i + 1}/${runs}: walk ${round(w.walkMs)} ms, first page ${round(w.firstPageMs)} ms`);
      }
      out.walkMs = summarise(walks);
      out.firstPageMs = summarise(firsts);
      out.furtherPageMs = { ...summarise(further.length ? further : [0]), p99: round(percentile(further.length ? further : [0], 99)) };
      out.cachedWalkMs = round((await walk()).walkMs);
    } finally {
      out.peakRssMbExport = await svc.stop();
    }
  } catch (err) {
    out.error = (err as Error).message;
    log(`${system}: FAILED: ${out.error.slice(0, 1000)}`);
  } finally {
    releaseInkwellData(data, log);
  }
  return out;
}

const baselines: Record<string, ExportMeasurement | { system: string; error: string }> = {};
let reference: ExportResult | null = null;
let referenceDigest: string | null = null;

async function baseline(name: string, fn: () => Promise<ExportMeasurement>) {
  try {
    const m = await fn();
    if (m.answer && reference === null) {
      reference = m.answer;
      referenceDigest = m.digest;
    }
    delete m.answer;
    baselines[name] = m;
    log(`${name}: best walk ${m.best.walkMs.median} ms (median of ${m.best.walkMs.runs}), digest ${m.digest.slice(0, 16)}`);
  } catch (err) {
    baselines[name] = { system: name, error: (err as Error).message };
    log(`${name}: FAILED: ${(err as Error).message}`);
  }
}

if (systems.has('duckdb')) await baseline('duckdb', () => runDuckDbBaseline(csv, meta, measure));
if (systems.has('pg-raw')) await baseline('pg-raw', () => runPgRawBaseline(csv, meta, measure));

const digests = Object.values(baselines).flatMap((b) => ('digest' in b ? [b.digest] : []));
const baselinesAgree = digests.length > 0 && digests.every((d) => d === digests[0]);
if (!baselinesAgree && digests.length > 1) log('BASELINES DISAGREE on the answer');

// Without a timed baseline (e.g. --systems inkwell-sqlite), DuckDB still computes the exact answer (untimed) so
// Inkwell's digest is always checked.
if (reference === null) {
  const db = await openDuckDb(csv, meta);
  try {
    reference = { totals: await db.totals(), rows: await db.allRows() };
    referenceDigest = digestExport(reference);
    log(`reference answer from DuckDB (untimed): digest ${referenceDigest.slice(0, 16)}`);
  } finally {
    db.close();
  }
}

const inkwell: InkwellRun[] = [];
if (systems.has('inkwell-sqlite')) inkwell.push(await runInkwell('sqlite', reference));
if (systems.has('inkwell-pg')) inkwell.push(await runInkwell('postgres', reference));

const bestOf = (name: string) => {
  const b = baselines[name];
  return b && 'best' in b ? b.best.walkMs.median : null;
};
const ratio = (base: number | null, ours: number | undefined) => (base && ours ? round(base / ours, 2) : null);
const comparisons = inkwell.map((r) => ({
  system: r.system,
  digestMatchesBaselines: r.digest !== undefined && r.digest === referenceDigest,
  /** How many times faster than each baseline's best (baseline best walk / Inkwell walk, medians). */
  speedupVsDuckdbBest: ratio(bestOf('duckdb'), r.walkMs?.median),
  speedupVsPgRawBest: ratio(bestOf('pg-raw'), r.walkMs?.median),
  targets: {
    embeddedAtLeast2xDuckdb: r.backend === 'sqlite' ? (ratio(bestOf('duckdb'), r.walkMs?.median) ?? 0) >= 2 : undefined,
    postgresAtLeast10xRawTable: r.backend === 'postgres' ? (ratio(bestOf('pg-raw'), r.walkMs?.median) ?? 0) >= 10 : undefined,
    firstPageUnder1s: r.firstPageMs ? r.firstPageMs.median < 1000 && (r.coldWalk?.firstPageMs ?? 0) < 1000 : false,
    furtherPagesUnder50ms: r.furtherPageMs ? r.furtherPageMs.max < 50 : false,
    peakRssUnder1GB: r.backend === 'sqlite' ? Math.max(r.peakRssMbExport ?? 0, r.peakRssMbIngest ?? 0) < 1024 : undefined,
  },
}));

const result = {
  benchmark: 'analytics-export',
  environment: environment(),
  dataset: { name: meta.name, options: meta.options, window: meta.window, counts: meta.counts, bytes: meta.bytes },
  method: {
    pageSize: 250,
    runs,
    warmups: measure.warmups,
    naivePages: measure.skipNaive ? null : measure.naivePages,
    ingestConcurrency: concurrency,
    notes: [
      'Baseline "best": totals + one GROUP BY over the window, then every 250-row page sliced from that result; median of runs after a warm-up.',
      'Baseline "naive": every page re-runs totals and the GROUP BY with LIMIT 251 OFFSET k; when not every page is timed, the walk is extrapolated from the mean page time.',
      'Inkwell: the full 30-day export walked through HTTP (limit 250) against `inkwell serve` in a child process; before each timed walk one event outside the window is ingested, so the data version changes and the result is recomputed; cold = first walk after a restart; cached = a repeated walk with no new data.',
      'Peak RSS is VmHWM of the service process, per phase (ingest, export), each in a fresh process.',
    ],
  },
  baselines,
  baselinesAgree,
  referenceDigest,
  inkwell,
  comparisons,
};
const files = writeResults('analytics', result);

// Table
const rowsOut: string[][] = [['system', 'walk median ms', 'first page ms', 'further page ms (median/max)', 'naive walk ms', 'peak RSS MB', 'digest']];
for (const [name, b] of Object.entries(baselines)) {
  if (!('best' in b)) {
    rowsOut.push([name, 'FAILED', '', '', '', '', '']);
    continue;
  }
  rowsOut.push([
    `${name} (best)`,
    String(b.best.walkMs.median),
    String(b.best.firstPageMs.median),
    `${b.best.furtherPageMs.median}/${b.best.furtherPageMs.max}`,
    b.naive ? `${b.naive.walkMs}${b.naive.extrapolated ? ' (extrapolated)' : ''}` : '-',
    '-',
    b.digest.slice(0, 12),
  ]);
}
for (const r of inkwell) {
  if (r.error || !r.walkMs) {
    rowsOut.push([r.system, `FAILED: ${(r.error ?? '').slice(0, 60)}`, '', '', '', '', '']);
    continue;
  }
  rowsOut.push([
    r.system,
    String(r.walkMs.median),
    String(r.firstPageMs?.median),
    `${r.furtherPageMs?.median}/${r.furtherPageMs?.max}`,
    '-',
    `${r.peakRssMbIngest}/${r.peakRssMbExport}`,
    `${(r.digest ?? '').slice(0, 12)}${r.digest === referenceDigest ? ' =' : ' ≠'}`,
  ]);
}
const widths = rowsOut[0]!.map((_, i) => Math.max(...rowsOut.map((r) => (r[i] ?? '').length)));
for (const r of rowsOut) console.log(r.map((c, i) => c.padEnd(widths[i] as number)).join('  '));
const times = (x: number | null, what: string) => (x === null ? `${what}: not run` : `${x}× faster than ${what}`);
for (const c of comparisons)
  console.log(
    `${c.system}: ${times(c.speedupVsDuckdbBest, 'DuckDB best')}, ${times(c.speedupVsPgRawBest, 'raw-table PG best')}; answer identical: ${c.digestMatchesBaselines}; ${JSON.stringify(c.targets)}`,
  );
console.log(`baselines agree: ${digests.length > 1 ? baselinesAgree : 'n/a (fewer than two run)'}; results: ${files.latest}`);
