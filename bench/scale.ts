// Scale benchmark (issue 16, target 1), a skeleton: a generated year of a large site ingested through the batch
// API, then what it costs to keep and to read.
//
//   npm run bench:scale -- [--events 100M] [--days 365] [--paths 20000] [--runs 3] [--backends sqlite,postgres]
//                          [--keep] [--no-pg-raw] [--pg-db bench_scale] [--memory] [--compare <checkout>]
//                          [--ingest-only] [--repo <checkout>] [--results-dir DIR] [--settle-max 3600]
//
// --results-dir: where scale-latest.json and the history line go (default bench/results): trial runs at a smaller
// size write elsewhere instead of replacing the committed full run's scale-latest.json.
// --compare: each window's exports (restart, first walk, warm walks, peak RSS) also by the service of another
// checkout (an earlier commit, its dist/ built) on the same data directory or database, right after this one's,
// so a change to the exports is measured against its baseline on the same data in the same run (the answers'
// digests must be equal). The stored layout must be one both read.
// --ingest-only: the ingest alone (no exports, no baselines, no results written): for before/after runs of the ingest.
// --repo: the service from another checkout (its dist/, rebuilt), e.g. main's beside a branch's run started at the
// same time, so that both see the same machine load.
//
// --memory: the service samples each thread's memory (bench/lib/memory-log.mjs) and the results say where it was at
// the highest RSS of the ingest and of the exports (bench/lib/memory.ts).
//
// --backends may add `clickhouse`: the analytics store on ClickHouse through chdb, the service run in this process
// (chdb is one engine per process) over HTTP as the others are, projects on SQLite; with CLICKHOUSE_URL set it
// uses that server instead. Its bytes are ClickHouse's active parts of its database (system.parts), its "first
// after restart" is the first walk after the store is reopened (the engine's own caches stay warm in chdb), and
// its peak RSS is not separable from the benchmark's own (not reported).
//
// Per Inkwell backend (fresh data each run): ingest rate over the first and the last tenth of the events (sustained
// ingest into a growing store), peak RSS of the service while ingesting and while exporting, bytes per event on
// disk (every file of the data directory on SQLite; the database on PostgreSQL), and the visitors export of the
// last 30 days and of the whole year through HTTP: first after a restart, then warm (median of --runs, each after
// one crawler event outside the data so the answer is recomputed). Baselines on the same data: DuckDB (a database
// file of the export's columns; queries timed warm and first after reopening) and the raw-table PostgreSQL schema
// of bench/baselines/pg-raw.ts (in its own database, `bench_raw_scale`). Every answer's digest must equal DuckDB's.
// The 100M-event default is for a quiet machine; prove changes with --events 2M. --no-pg-raw skips the raw-table
// baseline (it loads the CSV once per window: most of a 10M-event run's wall time).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { BENCH_PG_ADMIN_URL, openPgRaw } from './baselines/pg-raw.ts';
import { genArgs, intArg, parseArgs } from './lib/args.ts';
import { DATA_DIR, type DatasetMeta, dayString, ensureDataset, genOptions, START_DAY } from './lib/dataset.ts';
import { digestExport, type PageRow, type Totals } from './lib/export.ts';
import { addCounters, countersDelta, countersText, ingestDataset, type StoreCounters, storeCounters, walkExport } from './lib/inkwell-client.ts';
import { describeMemory, MEMORY_LOG_PRELOAD, type MemoryAtPeak, memoryAtPeak } from './lib/memory.ts';
import { environment, writeResults } from './lib/results.ts';
import { type Backend, createProject, dirSizeMb, freshPgDatabase, type ServiceEnv, startService, tempDir } from './lib/service.ts';
import { median, round, since } from './lib/stats.ts';
import { runClickHouse } from './scale-clickhouse.ts';

const args = parseArgs(process.argv.slice(2));
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const events = intArg(args, 'events') ?? 100_000_000;
const days = intArg(args, 'days') ?? 365;
const runs = Math.max(1, intArg(args, 'runs') ?? 3);
const backends = (args.get('backends') ?? 'sqlite,postgres').split(',') as (Backend | 'clickhouse')[];
const keep = args.has('keep');
const memory = args.has('memory');
const resultsDir = args.get('results-dir');
// --settle-max: the longest wait for compaction to settle after the ingest, in seconds (see settleCompaction).
const settleMaxMs = Number(args.get('settle-max') ?? 3600) * 1000;
const ingestOnly = args.has('ingest-only');
const repoDir = args.get('repo');
if (memory) process.env.BENCH_SERVICE_NODE_ARGS = `${process.env.BENCH_SERVICE_NODE_ARGS ?? ''} --import ${MEMORY_LOG_PRELOAD}`;
/** Inkwell's PostgreSQL database (dropped and created afresh): a name of one's own when others run benchmarks too. */
const pgDb = args.get('pg-db') ?? 'bench_scale';
const compare = args.get('compare') ? path.resolve(args.get('compare') as string) : undefined;
const compareCommit = compare ? execFileSync('git', ['-C', compare, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim() : '';
const RAW_SCALE_DB = 'bench_raw_scale';

// The year ends on START_DAY (2026-08-01): ingest refuses times more than a day in the future, so the benchmark's
// default start (which the 90-day datasets end after) would put most of a year there.
const { meta, csv } = ensureDataset(genOptions({ ...genArgs(args), events, days, startDay: dayString(START_DAY, -days) }), log);
const windows = {
  '30d': { dateFrom: meta.window.dateFrom, dateTo: meta.window.dateTo },
  '365d': { dateFrom: meta.startDay, dateTo: meta.endDay },
} as const;
type WindowName = keyof typeof windows;
const windowMeta = (w: WindowName): DatasetMeta => {
  const { dateFrom, dateTo } = windows[w];
  return { ...meta, window: { dateFrom, dateTo, fromMs: Date.parse(`${dateFrom}T00:00:00.000Z`), toMs: Date.parse(`${dateTo}T00:00:00.000Z`) } };
};
log(
  `dataset: ${meta.counts.events.toLocaleString('en')} events over ${days} days, ${meta.counts.distinctPaths} paths, ${meta.counts.distinctVisitors.toLocaleString('en')} visitors`,
);

interface ExportFigures {
  firstAfterRestartMs: number;
  warmMs: number;
  digest: string;
  /** Where the day summaries of the first walk and of the warm walks (summed) came from (services that report it). */
  days?: { first: StoreCounters | null; warm: StoreCounters | null };
}

export interface InkwellScale {
  backend: Backend | 'clickhouse';
  ingest?: { eventsPerSecond: number; firstTenthEventsPerSecond: number; lastTenthEventsPerSecond: number; rejected: number };
  bytesPerEvent?: number;
  diskMb?: number;
  peakRssMbIngest?: number | null;
  /** How long compaction ran on after the ingest (the exports start once it settled), and what it merged. */
  settle?: { ms: number; segments: number; quiet: boolean };
  peakRssMbExport?: number | null;
  /** With --memory: where the memory was at the highest RSS sample while ingesting and while exporting. */
  memory?: { ingest: MemoryAtPeak | null; export: MemoryAtPeak | null };
  exports?: Partial<Record<WindowName, ExportFigures>>;
  /** With --compare: the other checkout's exports on the same data (after this one's). */
  compare?: {
    repoDir: string;
    commit: string;
    exports: Partial<Record<WindowName, ExportFigures>>;
    peakRssMbExport: number | null;
    memoryExport: MemoryAtPeak | null;
  };
  error?: string;
}

/** Sends the dataset in 1,000-event batches (4 in flight), timing the first and the last tenth of the events. */
export async function ingest(baseUrl: string, projectId: string, key: string): Promise<NonNullable<InkwellScale['ingest']>> {
  const total = meta.counts.events;
  const tenth = Math.max(1, Math.floor(total / 10));
  const marks = new Map<number, number>();
  let acked = 0;
  const t0 = performance.now();
  const stats = await ingestDataset(baseUrl, projectId, key, csv, meta, {
    concurrency: 4,
    batchSize: 1000,
    log,
    logEvery: 10_000_000,
    onAcknowledged: (events) => {
      const before = acked;
      acked += events;
      for (const m of [tenth, total - tenth, total]) if (before < m && acked >= m) marks.set(m, performance.now());
    },
  });
  const at = (m: number) => marks.get(m) ?? performance.now();
  const rate = (n: number, ms: number) => Math.round(n / (ms / 1000));
  return {
    eventsPerSecond: rate(total, since(t0)),
    firstTenthEventsPerSecond: rate(tenth, at(tenth) - t0),
    lastTenthEventsPerSecond: rate(tenth, at(total) - at(total - tenth)),
    rejected: stats.rejected,
  };
}

async function pgDatabaseMb(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ size: string }>('SELECT pg_database_size(current_database()) AS size');
    return Math.round(Number(r.rows[0]?.size) / 2 ** 20);
  } finally {
    await c.end();
  }
}

/**
 * Where a PostgreSQL database's bytes are: each table of the public schema with its heap, TOAST and indexes (bytes
 * per event), and the rest (catalogs, free space map) as one line. Logged after the ingest.
 */
async function pgRelationSizes(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ name: string; total: string; heap: string; toast: string; indexes: string; rows: string }>(
      `SELECT c.relname AS name, pg_total_relation_size(c.oid) AS total, pg_relation_size(c.oid) AS heap,
              coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) AS toast, pg_indexes_size(c.oid) AS indexes,
              c.reltuples::bigint AS rows
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY pg_total_relation_size(c.oid) DESC`,
    );
    const db = await c.query<{ size: string }>('SELECT pg_database_size(current_database()) AS size');
    const perEvent = (b: number) => round(b / meta.counts.events, 2);
    let tables = 0;
    const out = r.rows
      .filter((x) => Number(x.total) >= 2 ** 16)
      .map((x) => {
        tables += Number(x.total);
        return `${x.name}: ${perEvent(Number(x.total))} B/event (heap ${perEvent(Number(x.heap))}, toast ${perEvent(Number(x.toast))}, indexes ${perEvent(Number(x.indexes))}; ~${Number(x.rows).toLocaleString('en')} rows)`;
      });
    out.push(`everything else (catalogs, small tables): ${perEvent(Number(db.rows[0]?.size) - tables)} B/event`);
    return out;
  } finally {
    await c.end();
  }
}

/** One crawler event dated before the data: the data version changes, no answer does. */
export async function bump(baseUrl: string, projectId: string, key: string): Promise<void> {
  const r = await fetch(`${baseUrl}/v1/analytics/${encodeURIComponent(projectId)}/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ events: [{ path: '/', timestamp: '2020-01-01T00:00:00Z', userAgent: 'Googlebot/2.1', visitorId: 'bench-bump' }] }),
  });
  if (r.status !== 202) throw new Error(`bump returned ${r.status}`);
}

async function runInkwell(backend: Backend): Promise<InkwellScale> {
  const out: InkwellScale = { backend };
  const s: ServiceEnv = { backend, dataDir: tempDir(`scale-${backend}`), ...(repoDir ? { repoDir } : {}) };
  try {
    if (backend === 'postgres') s.databaseUrl = await freshPgDatabase(pgDb, BENCH_PG_ADMIN_URL);
    const project = await createProject(s);
    /** With --memory, the memory log of the next service started (one file per start). */
    let starts = 0;
    const memoryLog = () => {
      // Beside the data directory, so that its bytes per event do not count them; removed with it.
      const file = `${s.dataDir}.memory-${starts++}.jsonl`;
      if (memory) process.env.BENCH_MEMORY_LOG = file;
      return file;
    };
    const ingestLog = memoryLog();
    let svc = await startService(s);
    try {
      out.ingest = await ingest(svc.baseUrl, project.projectId, project.ingestKey);
      log(
        `inkwell-${backend}: ingest ${out.ingest.eventsPerSecond.toLocaleString('en')} events/s (first tenth ${out.ingest.firstTenthEventsPerSecond}, last ${out.ingest.lastTenthEventsPerSecond})`,
      );
      if (!ingestOnly) {
        const settled = await settleCompaction(svc.baseUrl, settleMaxMs);
        if (settled) {
          out.settle = settled;
          log(
            `inkwell-${backend}: compaction ${settled.quiet ? 'settled' : 'still running'} after ${Math.round(settled.ms / 1000)} s (${settled.segments} segments merged)`,
          );
        }
      }
    } finally {
      out.peakRssMbIngest = await svc.stop();
    }
    if (memory) out.memory = { ingest: memoryAtPeak(ingestLog), export: null };
    if (out.memory?.ingest) log(`inkwell-${backend}: ingest memory: ${describeMemory(out.memory.ingest)}`);
    if (ingestOnly) return out;
    out.diskMb = backend === 'sqlite' ? dirSizeMb(s.dataDir) : await pgDatabaseMb(s.databaseUrl as string);
    if (backend === 'postgres') for (const line of await pgRelationSizes(s.databaseUrl as string)) log(`inkwell-postgres: ${line}`);
    out.bytesPerEvent = round((out.diskMb * 2 ** 20) / meta.counts.events, 1);
    // Each window by each checkout's service, alternating (this one, then --compare's) so both see the same load.
    const sides = [
      { repoDir: repoDir as string | undefined, label: `inkwell-${backend}` },
      ...(compare ? [{ repoDir: compare, label: `inkwell-${backend} (compare ${compare})` }] : []),
    ].map((x) => ({ ...x, exports: {} as Partial<Record<WindowName, ExportFigures>>, peak: 0, mem: null as MemoryAtPeak | null }));
    for (const w of Object.keys(windows) as WindowName[]) {
      for (const side of sides) {
        const exportLog = memoryLog();
        svc = await startService({ ...s, repoDir: side.repoDir });
        try {
          const { dateFrom, dateTo } = windows[w];
          const atStart = await storeCounters(svc.baseUrl);
          const first = await walkExport(svc.baseUrl, project.projectId, project.adminKey, dateFrom, dateTo);
          const days = { first: countersDelta(atStart, await storeCounters(svc.baseUrl)), warm: null as StoreCounters | null };
          const warm: number[] = [];
          for (let i = 0; i < runs; i++) {
            await bump(svc.baseUrl, project.projectId, project.ingestKey);
            const before = await storeCounters(svc.baseUrl);
            const r = await walkExport(svc.baseUrl, project.projectId, project.adminKey, dateFrom, dateTo);
            if (r.digest !== first.digest) throw new Error(`${w} export changed between walks`);
            warm.push(r.walkMs);
            days.warm = addCounters(days.warm, countersDelta(before, await storeCounters(svc.baseUrl)));
          }
          side.exports[w] = { firstAfterRestartMs: Math.round(first.walkMs), warmMs: Math.round(median(warm)), digest: first.digest, days };
          log(`${side.label}: ${w} export first ${Math.round(first.walkMs)} ms, warm ${Math.round(median(warm))} ms`);
          if (days.first) log(`${side.label}: ${w} first walk's ${countersText(days.first)}`);
          if (days.warm) log(`${side.label}: ${w} warm walks' ${countersText(days.warm)}`);
        } finally {
          side.peak = Math.max(side.peak, (await svc.stop()) ?? 0);
        }
        const m = memory ? memoryAtPeak(exportLog) : null;
        if (m && (!side.mem || m.rssMb > side.mem.rssMb)) side.mem = m;
      }
    }
    for (const side of sides) if (side.mem) log(`${side.label}: export memory: ${describeMemory(side.mem)}`);
    const [mine, other] = sides as [(typeof sides)[number], ...(typeof sides)[number][]];
    out.exports = mine.exports;
    out.peakRssMbExport = mine.peak || null;
    if (out.memory) out.memory.export = mine.mem;
    if (other) {
      out.compare = { repoDir: compare as string, commit: compareCommit, exports: other.exports, peakRssMbExport: other.peak || null, memoryExport: other.mem };
      for (const w of Object.keys(windows) as WindowName[])
        if (other.exports[w]?.digest !== mine.exports[w]?.digest) throw new Error(`${w} export differs from the compared checkout's`);
    }
  } catch (err) {
    out.error = (err as Error).message;
    log(`inkwell-${backend}: FAILED: ${out.error.slice(0, 600)}`);
  } finally {
    if (keep) log(`kept ${s.dataDir}`);
    else {
      fs.rmSync(s.dataDir, { recursive: true, force: true });
      for (let i = 0; i < 6; i++) fs.rmSync(`${s.dataDir}.memory-${i}.jsonl`, { force: true });
    }
  }
  return out;
}

/**
 * Waits after the ingest until compaction has merged what it will (its counter in /metrics unchanged for
 * SETTLE_QUIET_MS), at most `maxMs`. Why: right after a year's ingest the tiered policy merges each quiet day
 * whole, for minutes at 100M; exports measured meanwhile shared the cores with it, and --compare's first side
 * (whose walks came first) paid for it: 30-day warm 171 against 133 ms at 10M with the roles swapped, the same
 * code. Null when the service does not report the counter.
 */
async function settleCompaction(baseUrl: string, maxMs: number): Promise<{ ms: number; segments: number; quiet: boolean } | null> {
  const t0 = performance.now();
  const first = await storeCounters(baseUrl);
  if (!first) return null;
  let last = first.segmentsCompacted;
  let since = performance.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = (await storeCounters(baseUrl))?.segmentsCompacted ?? last;
    if (now !== last) {
      last = now;
      since = performance.now();
    }
    const quiet = performance.now() - since >= SETTLE_QUIET_MS;
    if (quiet || performance.now() - t0 >= maxMs) return { ms: Math.round(since - t0), segments: last - first.segmentsCompacted, quiet };
  }
}

/**
 * How long compaction's counter must stay put to call it settled: its steps run every INKWELL_ANALYTICS_SEAL_INTERVAL_MS
 * (5 s), and a day counts as quiet (merged whole) at the step after one that saw it unchanged.
 */
const SETTLE_QUIET_MS = 20_000;

/** DuckDB with the export's columns in a database file: its size, and each window timed first after opening, then warm. */
async function runDuckDb(): Promise<{ fileMb: number; bytesPerEvent: number; loadMs: number; exports: Record<WindowName, ExportFigures> }> {
  const file = path.join(DATA_DIR, `scale-${meta.name}.duckdb`);
  fs.rmSync(file, { force: true });
  fs.rmSync(`${file}.wal`, { force: true });
  const sqlString = (x: string) => `'${x.replaceAll("'", "''")}'`;
  const t0 = performance.now();
  {
    const inst = await DuckDBInstance.create(file, { threads: '2' });
    const conn = await inst.connect();
    await conn.run(`CREATE TYPE visitor_class AS ENUM ('human', 'ai', 'crawler')`);
    await conn.run(
      `CREATE TABLE events AS SELECT ts::TIMESTAMP AS ts, path, visitor::UUID AS visitor, class::visitor_class AS class, q = 1 AS q
         FROM read_csv(${sqlString(csv)}, header = true, delim = ',', quote = '', escape = '',
           columns = {'ts': 'VARCHAR', 'day': 'VARCHAR', 'raw': 'VARCHAR', 'path': 'VARCHAR', 'visitor': 'VARCHAR', 'ua': 'INTEGER',
                      'status': 'INTEGER', 'method': 'VARCHAR', 'accept_md': 'INTEGER', 'class': 'VARCHAR', 'q': 'INTEGER'})`,
    );
    await conn.run('CHECKPOINT');
    conn.closeSync();
    inst.closeSync();
  }
  const loadMs = Math.round(since(t0));
  const fileMb = Math.round(fs.statSync(file).size / 2 ** 20);
  const counts = `count(DISTINCT visitor) FILTER (WHERE class = 'human') AS human, count(DISTINCT visitor) FILTER (WHERE class = 'ai') AS ai, count(DISTINCT visitor) AS total`;
  const exportOnce = async (conn: Awaited<ReturnType<Awaited<ReturnType<typeof DuckDBInstance.create>>['connect']>>, w: WindowName) => {
    const { dateFrom, dateTo } = windows[w];
    const where = `q AND ts >= TIMESTAMP '${dateFrom} 00:00:00' AND ts < TIMESTAMP '${dateTo} 00:00:00'`;
    const t = performance.now();
    const tr = (await conn.runAndReadAll(`SELECT ${counts} FROM events WHERE ${where}`)).getRows()[0] as unknown[];
    const rows = (
      await conn.runAndReadAll(`SELECT path, ${counts} FROM events WHERE ${where} GROUP BY path ORDER BY total DESC, path ASC`)
    ).getRows() as unknown[][];
    const ms = since(t);
    const totals: Totals = { human: Number(tr[0]), ai: Number(tr[1]), total: Number(tr[2]) };
    const pageRows: PageRow[] = rows.map((r) => ({ path: String(r[0]), human: Number(r[1]), ai: Number(r[2]), total: Number(r[3]) }));
    return { ms, digest: digestExport({ totals, rows: pageRows }) };
  };
  const exports = {} as Record<WindowName, ExportFigures>;
  for (const w of Object.keys(windows) as WindowName[]) {
    const inst = await DuckDBInstance.create(file, { threads: '2' });
    const conn = await inst.connect();
    const first = await exportOnce(conn, w);
    const warm: number[] = [];
    for (let i = 0; i < runs; i++) warm.push((await exportOnce(conn, w)).ms);
    exports[w] = { firstAfterRestartMs: Math.round(first.ms), warmMs: Math.round(median(warm)), digest: first.digest };
    log(`duckdb: ${w} export first ${Math.round(first.ms)} ms, warm ${Math.round(median(warm))} ms`);
    conn.closeSync();
    inst.closeSync();
  }
  if (!keep) fs.rmSync(file, { force: true });
  return { fileMb, bytesPerEvent: round((fileMb * 2 ** 20) / meta.counts.events, 1), loadMs, exports };
}

/** The raw-table PostgreSQL baseline (pg-raw.ts) in its own database: table + index size, each window warm (no restart). */
async function runPgRaw(): Promise<{ databaseMb: number; bytesPerEvent: number; exports: Record<WindowName, Omit<ExportFigures, 'firstAfterRestartMs'>> }> {
  const exports = {} as Record<WindowName, Omit<ExportFigures, 'firstAfterRestartMs'>>;
  let databaseMb = 0;
  for (const w of Object.keys(windows) as WindowName[]) {
    const src = await openPgRaw(csv, windowMeta(w), log, RAW_SCALE_DB);
    try {
      const times: number[] = [];
      let digest = '';
      for (let i = 0; i <= runs; i++) {
        const t = performance.now();
        const [totals, rows] = await Promise.all([src.totals(), src.allRows()]);
        if (i > 0) times.push(since(t));
        digest = digestExport({ totals, rows });
      }
      exports[w] = { warmMs: Math.round(median(times)), digest };
      log(`pg-raw: ${w} export warm ${Math.round(median(times))} ms`);
    } finally {
      await src.close();
    }
  }
  const u = new URL(BENCH_PG_ADMIN_URL);
  u.pathname = `/${RAW_SCALE_DB}`;
  databaseMb = await pgDatabaseMb(u.toString());
  return { databaseMb, bytesPerEvent: round((databaseMb * 2 ** 20) / meta.counts.events, 1), exports };
}

const inkwell: InkwellScale[] = [];
for (const b of backends) inkwell.push(b === 'clickhouse' ? await runClickHouse({ windows, runs, meta, ingest, bump, log }) : await runInkwell(b));
if (ingestOnly) {
  for (const x of inkwell)
    console.log(`inkwell-${x.backend}: ingest first / last tenth ${x.ingest?.firstTenthEventsPerSecond} / ${x.ingest?.lastTenthEventsPerSecond} events/s`);
  process.exit(inkwell.some((x) => x.error) ? 1 : 0);
}
const duckdb = await runDuckDb();
let pgRaw: Awaited<ReturnType<typeof runPgRaw>> | { error: string };
try {
  pgRaw = args.has('no-pg-raw') ? { error: 'skipped (--no-pg-raw)' } : await runPgRaw();
} catch (err) {
  pgRaw = { error: (err as Error).message };
  log(`pg-raw: FAILED: ${pgRaw.error.slice(0, 600)}`);
}
const digestsMatch = inkwell.every((x) => !x.error && (Object.keys(windows) as WindowName[]).every((w) => x.exports?.[w]?.digest === duckdb.exports[w].digest));
const result = {
  benchmark: 'scale',
  environment: environment(),
  dataset: { name: meta.name, counts: meta.counts, days, windows },
  method: {
    events: meta.counts.events,
    days,
    runs,
    notes: [
      'Inkwell: the dataset through POST /v1/analytics/{projectId}/events, 1,000-event batches, 4 in flight, into a fresh store; rates over the first and the last tenth of the events.',
      'Disk: every file of the SQLite data directory; pg_database_size on PostgreSQL (both after the ingest). DuckDB: the database file of the export columns after CHECKPOINT. pg-raw: pg_database_size of its own database.',
      'Exports: the visitors export, totals and every 250-row page through HTTP for Inkwell; first = first walk after a service restart (DuckDB: after reopening the file), warm = median of runs (Inkwell: each after one event outside the data).',
    ],
  },
  inkwell,
  baselines: { duckdb, pgRaw },
  digestsMatch,
};
const files = resultsDir ? writeResults('scale', result, resultsDir) : writeResults('scale', result);
console.log(
  `\n${'system'.padEnd(18)}${'bytes/event'.padEnd(13)}${'30d first/warm ms'.padEnd(20)}${'365d first/warm ms'.padEnd(21)}${'ingest start/end ev/s'.padEnd(24)}peak RSS MB`,
);
for (const x of inkwell) {
  const e = (w: WindowName) => (x.exports?.[w] ? `${x.exports[w]?.firstAfterRestartMs} / ${x.exports[w]?.warmMs}` : 'FAILED');
  console.log(
    `${`inkwell-${x.backend}`.padEnd(18)}${String(x.bytesPerEvent ?? '').padEnd(13)}${e('30d').padEnd(20)}${e('365d').padEnd(21)}${`${x.ingest?.firstTenthEventsPerSecond ?? ''} / ${x.ingest?.lastTenthEventsPerSecond ?? ''}`.padEnd(24)}${x.peakRssMbIngest ?? ''} / ${x.peakRssMbExport ?? ''}`,
  );
  if (x.compare) {
    const c = (w: WindowName) => (x.compare?.exports[w] ? `${x.compare.exports[w]?.firstAfterRestartMs} / ${x.compare.exports[w]?.warmMs}` : 'FAILED');
    console.log(`${'  compare'.padEnd(31)}${c('30d').padEnd(20)}${c('365d').padEnd(45)}- / ${x.compare.peakRssMbExport ?? ''}`);
  }
}
console.log(
  `${'duckdb'.padEnd(18)}${String(duckdb.bytesPerEvent).padEnd(13)}${`${duckdb.exports['30d'].firstAfterRestartMs} / ${duckdb.exports['30d'].warmMs}`.padEnd(20)}${`${duckdb.exports['365d'].firstAfterRestartMs} / ${duckdb.exports['365d'].warmMs}`}`,
);
if ('exports' in pgRaw)
  console.log(
    `${'pg-raw'.padEnd(18)}${String(pgRaw.bytesPerEvent).padEnd(13)}${`- / ${pgRaw.exports['30d'].warmMs}`.padEnd(20)}${`- / ${pgRaw.exports['365d'].warmMs}`}`,
  );
console.log(`digests equal to DuckDB's: ${digestsMatch}\nresults: ${files.latest}`);
if (!digestsMatch) process.exitCode = 1;
