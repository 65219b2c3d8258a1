// Ingest benchmark: events/s through POST /v1/analytics/{projectId}/events in 1,000-event batches (autocannon),
// against a bare Fastify route that does no work, measured in the same run; and `inkwell analytics import` rate.
//
//   npm run bench:ingest -- [--events 1M] [--pool 1M] [--duration 40] [--rounds 5] [--connections 4]
//                           [--backends sqlite,postgres] [--import-events 200k] [--no-import]
//                           [--compare <checkout of an earlier commit>] [--node-variants 'NAME:FLAGS;…'] [--together]
//                           [--results-dir DIR]
//   npm run bench:ingest -- --page-views [--conns 50,100] [--duration 20] [--rounds 5] [--backends sqlite]
//                           [--pool 20k] [--compare <checkout>] [--results-dir DIR]   (one event per request: lib/page-views.ts)
//
// --results-dir: where ingest-latest.json (ingest-pageviews-latest.json) and the history line go instead of
// bench/results (trial runs).
//
// The bare route and every backend's service run at once and are measured in rotating rounds (lib/rounds.ts):
// events/s is the median over rounds, the ratio the median of per-round ratios. Each service keeps its
// database across rounds, so later rounds write into a larger one (sustained ingest). --compare runs each
// backend's service from another checkout too (its own database), in the same rounds: before and after a
// change, measured side by side.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BENCH_PG_ADMIN_URL } from './baselines/pg-raw.ts';
import { genArgs, intArg, parseArgs } from './lib/args.ts';
import { compareFromArgs, compareNote, nodeVariantsFromArgs, systemName, variantService } from './lib/compare.ts';
import { DATA_DIR, type DatasetMeta, ensureDataset, genOptions, readEvents, toApiEvent } from './lib/dataset.ts';
import { type LoadResult, startBareServer } from './lib/load.ts';
import { environment, peakRssMb, writeResults } from './lib/results.ts';
import { measureRounds, medianOrNull, type RoundSystem, roundSystem } from './lib/rounds.ts';
import { type Backend, createProject, dirSizeMb, freshPgDatabase, REPO_DIR, type ServiceEnv, serviceEnv, startService, tempDir } from './lib/service.ts';
import { median, round } from './lib/stats.ts';
import type { WriterRound } from './lib/writer-metrics.ts';

const args = parseArgs(process.argv.slice(2));
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
if (args.has('page-views')) {
  await (await import('./lib/page-views.ts')).runPageViews(args, log);
  process.exit(0);
}
const durationS = intArg(args, 'duration') ?? 40;
const rounds = Math.max(1, intArg(args, 'rounds') ?? 5);
const roundS = Math.max(1, Math.round(durationS / rounds));
const connections = intArg(args, 'connections') ?? 4;
const backends = (args.get('backends') ?? 'sqlite,postgres').split(',') as Backend[];
const BATCH = 1000;
const { meta, csv } = ensureDataset(genOptions({ events: 1_000_000, ...genArgs(args) }), log);
const poolEvents = Math.min(meta.counts.events, intArg(args, 'pool') ?? 1_000_000);
const importEvents = Math.min(meta.counts.events, intArg(args, 'import-events') ?? 200_000);

async function buildBodies(m: DatasetMeta, n: number): Promise<string[]> {
  const bodies: string[] = [];
  let batch: Record<string, unknown>[] = [];
  let count = 0;
  for await (const e of readEvents(csv)) {
    batch.push(toApiEvent(e, m));
    if (batch.length === BATCH) {
      bodies.push(JSON.stringify({ events: batch }));
      batch = [];
    }
    if (++count >= n) break;
  }
  if (batch.length) bodies.push(JSON.stringify({ events: batch }));
  return bodies;
}

function eventsPerSecond(r: LoadResult): number {
  return Math.round((r.ok * BATCH) / r.durationS);
}

log(`building ${poolEvents.toLocaleString('en')} events into ${Math.ceil(poolEvents / BATCH)} request bodies`);
const bodies = await buildBodies(meta, poolEvents);

interface BackendResult {
  backend: Backend;
  /** Set for the services run from the --compare checkout: its commit. */
  commit?: string;
  /** Set for the services run with other Node flags (--node-variants): the variant's name and flags. */
  variant?: string;
  nodeArgs?: string[];
  eventsPerSecond?: number;
  ratioToBare?: number;
  eventsSent?: number;
  repeatedEvents?: boolean;
  p99Ms?: number;
  /** Median over rounds of the service process's CPU (all threads) per event, µs. */
  cpuUsPerEvent?: number | null;
  rounds?: {
    eventsPerSecond: number;
    bareEventsPerSecond: number;
    ratioToBare: number;
    p99Ms: number;
    cpuUsPerEvent: number | null;
    /** The service's ingest writer in the round (writer-metrics.ts). */
    writer: WriterRound | null;
  }[];
  load?: LoadResult;
  peakRssMb?: number | null;
  databaseMb?: number | null;
  import?: {
    events: number;
    imported: number | null;
    ms: number;
    eventsPerSecond: number | null;
    peakRssMb: number | null;
    exitCode: number | null;
    output: string;
  };
  error?: string;
}

async function jsonlFile(n: number): Promise<string> {
  const file = path.join(DATA_DIR, `${meta.name}.first${n}.jsonl`);
  if (fs.existsSync(file)) return file;
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w');
  let buf = '';
  let count = 0;
  for await (const e of readEvents(csv)) {
    buf += `${JSON.stringify(toApiEvent(e, meta))}\n`;
    if (buf.length > 1 << 20) {
      fs.writeSync(fd, buf);
      buf = '';
    }
    if (++count >= n) break;
  }
  fs.writeSync(fd, buf);
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
  return file;
}

async function timeImport(s: ServiceEnv, projectId: string, file: string, events: number): Promise<NonNullable<BackendResult['import']>> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [path.join(REPO_DIR, 'bin', 'inkwell.js'), 'analytics', 'import', '--project', projectId, '--format', 'jsonl', file], {
    env: { ...serviceEnv(s), CI: '1' },
    cwd: REPO_DIR,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (b: Buffer) => {
    output = (output + b.toString()).slice(-4000);
  });
  child.stderr?.on('data', (b: Buffer) => {
    output = (output + b.toString()).slice(-4000);
  });
  let peak: number | null = null;
  const timer = setInterval(() => {
    const p = peakRssMb(child.pid as number);
    if (p !== null) peak = p;
  }, 100);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(timer);
  const ms = performance.now() - t0;
  // A failed import has no rate (the command may not exist yet, or it rejected the file); the count imported is
  // read from the command's summary line when it prints one.
  const m = /(\d+) events imported/.exec(output);
  const imported = m ? Number(m[1]) : null;
  const rate = code === 0 ? Math.round(events / (ms / 1000)) : null;
  return { events, imported, ms: Math.round(ms), eventsPerSecond: rate, peakRssMb: peak, exitCode: code, output: output.slice(-600) };
}

const perEvent = (us: number | null) => (us === null ? null : round(us / BATCH, 2));
const describe = (r: LoadResult) => `${eventsPerSecond(r).toLocaleString('en')} events/s`;
const compare = compareFromArgs(args);
const variants = nodeVariantsFromArgs(args);
const results: BackendResult[] = backends.map((backend) => ({ backend }));
if (compare) for (const backend of backends) results.push({ backend, commit: compare.label });
for (const v of variants) for (const backend of backends) results.push({ backend, variant: v.label, nodeArgs: v.nodeArgs });
const nameOf = systemName;
const started: { out: BackendResult; s: ServiceEnv; stop: () => Promise<number | null> }[] = [];
const bare = await startBareServer();
const systems: RoundSystem[] = [roundSystem('bare', bare.baseUrl, bare.pid, { method: 'POST', path: '/v1/analytics/bench/events', bodies })];
try {
  for (const out of results) {
    const v = variants.find((x) => x.label === out.variant);
    const s: ServiceEnv = {
      backend: out.backend,
      dataDir: tempDir(`ingest-${out.backend}`),
      ...(out.commit ? { repoDir: compare?.dir } : {}),
      ...(v ? variantService(v) : {}),
    };
    try {
      // Each service its own database (a second fresh one of the same name would drop the first's).
      if (out.backend === 'postgres') {
        s.databaseUrl = await freshPgDatabase(
          out.commit ? 'bench_inkwell_compare' : v ? `bench_inkwell_v_${v.label.replace(/\W/g, '_')}` : 'bench_inkwell',
          BENCH_PG_ADMIN_URL,
        );
      }
      const project = await createProject(s);
      const svc = await startService(s);
      started.push({ out, s, stop: () => svc.stop() });
      const req = {
        method: 'POST' as const,
        path: `/v1/analytics/${project.projectId}/events`,
        headers: { authorization: `Bearer ${project.ingestKey}` },
        bodies,
      };
      const sys = roundSystem(nameOf(out), svc.baseUrl, svc.pid, req, out.backend === 'postgres');
      sys.writerMetrics = true;
      systems.push(sys);
    } catch (err) {
      out.error = (err as Error).message;
      log(`inkwell-${nameOf(out)}: FAILED: ${out.error.slice(0, 800)}`);
    }
  }
  await measureRounds(systems, { rounds, roundS, connections, warmUpS: 2, log, describe, together: args.has('together') });
} finally {
  for (const { out, s, stop } of started) {
    try {
      out.peakRssMb = await stop();
      out.databaseMb = out.backend === 'sqlite' ? dirSizeMb(s.dataDir) : null;
    } finally {
      fs.rmSync(s.dataDir, { recursive: true, force: true });
    }
  }
  await bare.stop();
}

const bareSys = systems[0] as RoundSystem;
const bareEps = Math.round(median(bareSys.runs.map(eventsPerSecond)));
log(`bare Fastify route: ${bareEps.toLocaleString('en')} events/s (median of ${rounds} rounds)`);
for (const out of results) {
  const sys = systems.find((x) => x.name === nameOf(out));
  if (!sys || out.error) continue;
  out.rounds = sys.runs.map((r, i) => {
    const b = eventsPerSecond(bareSys.runs[i] as LoadResult);
    return {
      eventsPerSecond: eventsPerSecond(r),
      bareEventsPerSecond: b,
      ratioToBare: round(eventsPerSecond(r) / b, 3),
      p99Ms: r.latencyMs.p99,
      cpuUsPerEvent: perEvent(sys.cpuUs[i] ?? null),
      writer: sys.writer[i] ?? null,
    };
  });
  out.eventsPerSecond = Math.round(median(sys.runs.map(eventsPerSecond)));
  out.ratioToBare = round(median(out.rounds.map((r) => r.ratioToBare)), 3);
  out.p99Ms = median(sys.runs.map((r) => r.latencyMs.p99));
  out.cpuUsPerEvent = perEvent(medianOrNull(sys.cpuUs));
  const ok = sys.runs.reduce((n, r) => n + r.ok, 0);
  out.eventsSent = ok * BATCH;
  out.repeatedEvents = ok > bodies.length;
  out.load = sys.runs[sys.runs.length - 1];
  log(
    `inkwell-${nameOf(out)}: ${out.eventsPerSecond.toLocaleString('en')} events/s (median of ${rounds} rounds; ${ok} batches accepted in all), p99 ${out.p99Ms} ms, ${out.ratioToBare} of bare, ${out.cpuUsPerEvent} µs CPU per event`,
  );
}

for (const out of results) {
  if (out.error || out.commit || out.variant || args.has('no-import')) continue;
  const backend = out.backend;
  try {
    const file = await jsonlFile(importEvents);
    // A fresh database so the import writes every event.
    const s2: ServiceEnv = { backend, dataDir: tempDir(`import-${backend}`) };
    if (backend === 'postgres') s2.databaseUrl = await freshPgDatabase('bench_inkwell', BENCH_PG_ADMIN_URL);
    const p2 = await createProject(s2);
    out.import = await timeImport(s2, p2.projectId, file, importEvents);
    fs.rmSync(s2.dataDir, { recursive: true, force: true });
    log(
      out.import.exitCode === 0
        ? `inkwell-${backend} import: ${out.import.eventsPerSecond?.toLocaleString('en')} events/s (${out.import.ms} ms incl. process start)`
        : `inkwell-${backend} import FAILED (exit ${out.import.exitCode}): ${out.import.output.slice(-300)}`,
    );
  } catch (err) {
    out.error = (err as Error).message;
    log(`inkwell-${backend} import: FAILED: ${out.error.slice(0, 800)}`);
  }
}

const result = {
  benchmark: 'ingest',
  environment: environment(),
  dataset: { name: meta.name, poolEvents, batches: bodies.length },
  ...compareNote(compare),
  ...(variants.length > 0 ? { nodeVariants: variants } : {}),
  method: {
    batchSize: BATCH,
    connections,
    durationS,
    rounds,
    roundS,
    together: args.has('together'),
    notes: [
      'autocannon POSTs 1,000-event batches of the generated dataset (each body sent in turn, cycling when the pool is exhausted) with the ingest key, after a 2 s warm-up.',
      'All systems run at once and are measured in turn, `rounds` rounds of `roundS` seconds each (order rotating): events/s and p99 are medians over rounds; ratioToBare is the median of per-round ratios. Each service keeps its database across rounds.',
      'cpuUsPerEvent: the service process CPU (all threads: HTTP, ingest writer, checkpointer; user + system) used in a round over the events accepted in it, median over rounds. The PostgreSQL server is not counted.',
      'bare = the same framework and route shape with no work (JSON parsing only), in its own process, in the same run.',
      'import = `inkwell analytics import --format jsonl` of the first events into a fresh database; wall time includes process start.',
    ],
  },
  bare: { eventsPerSecond: bareEps, rounds: bareSys.runs.map(eventsPerSecond), load: bareSys.runs[bareSys.runs.length - 1] },
  inkwell: results,
  targets: {
    embeddedAtLeast50kEventsPerSecond: (results.find((r) => r.backend === 'sqlite' && !r.commit)?.eventsPerSecond ?? 0) >= 50_000,
  },
};
const files = writeResults('ingest', result, args.get('results-dir'));
console.log(`${'system'.padEnd(24)}events/s   ratio to bare  p99 ms  CPU µs/event  peak RSS MB  import events/s`);
console.log(`${'bare'.padEnd(24)}${String(bareEps).padEnd(10)} 1              ${median(bareSys.runs.map((r) => r.latencyMs.p99))}`);
for (const r of results) {
  console.log(
    `${`inkwell-${nameOf(r)}`.padEnd(24)}${String(r.eventsPerSecond ?? 'FAILED').padEnd(11)}${String(r.ratioToBare ?? '').padEnd(15)}${String(r.p99Ms ?? '').padEnd(8)}${String(r.cpuUsPerEvent ?? '').padEnd(14)}${String(r.peakRssMb ?? '').padEnd(13)}${r.import ? (r.import.eventsPerSecond ?? 'FAILED') : ''}`,
  );
}
console.log(`results: ${files.latest}`);
