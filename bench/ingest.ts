// Ingest benchmark: events/s through POST /v1/analytics/{projectId}/events in 1,000-event batches (autocannon),
// against a bare Fastify route that does no work, measured in the same run; and `inkwell analytics import` rate.
//
//   npm run bench:ingest -- [--events 1M] [--pool 1M] [--duration 20] [--connections 4]
//                           [--backends sqlite,postgres] [--import-events 200k] [--no-import]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BENCH_PG_ADMIN_URL } from './baselines/pg-raw.ts';
import { genArgs, intArg, parseArgs } from './lib/args.ts';
import { DATA_DIR, type DatasetMeta, ensureDataset, genOptions, readEvents, toApiEvent } from './lib/dataset.ts';
import { type LoadResult, load, startBareServer } from './lib/load.ts';
import { environment, peakRssMb, writeResults } from './lib/results.ts';
import { type Backend, createProject, dirSizeMb, freshPgDatabase, REPO_DIR, type ServiceEnv, serviceEnv, startService, tempDir } from './lib/service.ts';
import { round } from './lib/stats.ts';

const args = parseArgs(process.argv.slice(2));
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const durationS = intArg(args, 'duration') ?? 20;
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

// Bare route
const bare = await startBareServer();
let bareResult: LoadResult;
try {
  bareResult = await load(bare.baseUrl, { method: 'POST', path: '/v1/analytics/bench/events', bodies }, { connections, durationS });
} finally {
  await bare.stop();
}
log(`bare Fastify route: ${eventsPerSecond(bareResult).toLocaleString('en')} events/s (${bareResult.requestsPerSecond} req/s)`);

interface BackendResult {
  backend: Backend;
  eventsPerSecond?: number;
  ratioToBare?: number;
  eventsSent?: number;
  repeatedEvents?: boolean;
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

const results: BackendResult[] = [];
for (const backend of backends) {
  const out: BackendResult = { backend };
  const dataDir = tempDir(`ingest-${backend}`);
  const s: ServiceEnv = { backend, dataDir };
  try {
    if (backend === 'postgres') s.databaseUrl = await freshPgDatabase('bench_inkwell', BENCH_PG_ADMIN_URL);
    const project = await createProject(s);
    const svc = await startService(s);
    try {
      const r = await load(
        svc.baseUrl,
        { method: 'POST', path: `/v1/analytics/${project.projectId}/events`, headers: { authorization: `Bearer ${project.ingestKey}` }, bodies },
        { connections, durationS },
      );
      out.load = r;
      out.eventsPerSecond = eventsPerSecond(r);
      out.ratioToBare = round(out.eventsPerSecond / eventsPerSecond(bareResult), 3);
      out.eventsSent = r.ok * BATCH;
      out.repeatedEvents = r.ok > bodies.length;
      log(
        `inkwell-${backend}: ${out.eventsPerSecond.toLocaleString('en')} events/s (${r.ok} batches accepted, ${r.non2xx} non-2xx, p99 ${r.latencyMs.p99} ms), ${out.ratioToBare} of bare`,
      );
    } finally {
      out.peakRssMb = await svc.stop();
    }
    out.databaseMb = backend === 'sqlite' ? dirSizeMb(dataDir) : null;

    if (!args.has('no-import')) {
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
    }
  } catch (err) {
    out.error = (err as Error).message;
    log(`inkwell-${backend}: FAILED: ${out.error.slice(0, 800)}`);
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  results.push(out);
}

const result = {
  benchmark: 'ingest',
  environment: environment(),
  dataset: { name: meta.name, poolEvents, batches: bodies.length },
  method: {
    batchSize: BATCH,
    connections,
    durationS,
    notes: [
      'autocannon POSTs 1,000-event batches of the generated dataset (each body sent in turn, cycling when the pool is exhausted) with the ingest key.',
      'bare = the same framework and route shape with no work (JSON parsing only), in its own process, in the same run.',
      'import = `inkwell analytics import --format jsonl` of the first events into a fresh database; wall time includes process start.',
    ],
  },
  bare: { eventsPerSecond: eventsPerSecond(bareResult), load: bareResult },
  inkwell: results,
  targets: {
    embeddedAtLeast50kEventsPerSecond: (results.find((r) => r.backend === 'sqlite')?.eventsPerSecond ?? 0) >= 50_000,
  },
};
const files = writeResults('ingest', result);
console.log(`system         events/s   ratio to bare  p99 ms  peak RSS MB  import events/s`);
console.log(`bare           ${String(eventsPerSecond(bareResult)).padEnd(10)} 1              ${bareResult.latencyMs.p99}`);
for (const r of results) {
  console.log(
    `inkwell-${r.backend.padEnd(9)}${String(r.eventsPerSecond ?? 'FAILED').padEnd(11)}${String(r.ratioToBare ?? '').padEnd(15)}${String(r.load?.latencyMs.p99 ?? '').padEnd(8)}${String(r.peakRssMb ?? '').padEnd(13)}${r.import ? (r.import.eventsPerSecond ?? 'FAILED') : ''}`,
  );
}
console.log(`results: ${files.latest}`);
