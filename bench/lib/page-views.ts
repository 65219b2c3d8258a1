// Page-view-shaped ingest (`npm run bench:ingest -- --page-views`, issue 16 target 3): one event per request,
// in the two shapes that send them, against the bare Fastify route of the same path in the same rounds:
//
// - server: what edge or server middleware sends, POST /v1/analytics/{projectId}/events with `{"events":[one]}`
//   and an ingest-secret key (the event's own timestamp, user agent and visitor id);
// - tracker: what the browser tracker's sendBeacon sends, POST /v1/collect with a text/plain JSON body
//   `{projectId, key, events:[{path}]}` and a public ingest key, the user agent in the request header.
//
// Each shape at every --conns (default 50,100) connections is a system of the rotating rounds (lib/rounds.ts),
// its bare counterpart too; requests/s, p50 and p99 are medians over rounds, the ratio the median of per-round
// ratios to the bare route of the same shape and connections.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { BENCH_PG_ADMIN_URL } from '../baselines/pg-raw.ts';
import { genArgs, intArg } from './args.ts';
import { compareFromArgs, compareNote, sidesOf } from './compare.ts';
import { type DatasetMeta, ensureDataset, genOptions, readEvents, toApiEvent } from './dataset.ts';
import { type LoadRequest, startBareServer } from './load.ts';
import { environment, writeResults } from './results.ts';
import { measureRounds, medianOrNull, type RoundSystem, roundSystem } from './rounds.ts';
import { type Backend, cli, createProject, freshPgDatabase, type ServiceEnv, startService, tempDir } from './service.ts';
import { median, round } from './stats.ts';

type Shape = 'server' | 'tracker';
const SHAPES: Shape[] = ['server', 'tracker'];

interface Pool {
  server: string[];
  tracker: { event: Record<string, unknown>; userAgent: string }[];
}

async function buildPool(csv: string, meta: DatasetMeta, n: number): Promise<Pool> {
  const pool: Pool = { server: [], tracker: [] };
  for await (const e of readEvents(csv)) {
    pool.server.push(JSON.stringify({ events: [toApiEvent(e, meta)] }));
    pool.tracker.push({ event: e.raw.startsWith('http') ? { url: e.raw } : { path: e.raw }, userAgent: meta.userAgents[e.ua] as string });
    if (pool.server.length >= n) break;
  }
  return pool;
}

/** The load of one shape against a service (projectId and keys) or the bare server (placeholders). */
function requestOf(shape: Shape, pool: Pool, projectId: string, secretKey: string, publicKey: string): LoadRequest {
  if (shape === 'server')
    return { method: 'POST', path: `/v1/analytics/${projectId}/events`, headers: { authorization: `Bearer ${secretKey}` }, bodies: pool.server };
  return {
    method: 'POST',
    path: '/v1/collect',
    contentType: 'text/plain;charset=UTF-8',
    bodies: pool.tracker.map((t) => JSON.stringify({ projectId, key: publicKey, events: [t.event] })),
    bodyHeaders: pool.tracker.map((t) => ({ 'user-agent': t.userAgent })),
  };
}

/**
 * The floor under any durable acknowledgement on this disk, measured in the same run: commits of a few small
 * rows to a SQLite file in WAL mode with synchronous=FULL (one fsync each), one after the other.
 */
function commitLatency(dir: string, commits = 300): { medianMs: number; p90Ms: number; p99Ms: number } {
  const file = path.join(dir, 'commit-latency.db');
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('create table t (a integer, b text)');
    const ins = db.prepare('insert into t values (?, ?)');
    const ms: number[] = [];
    for (let i = 0; i < commits; i++) {
      const t0 = performance.now();
      db.exec('begin');
      for (let j = 0; j < 20; j++) ins.run(i, 'x'.repeat(100));
      db.exec('commit');
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    const at = (q: number) => round(ms[Math.min(ms.length - 1, Math.floor(ms.length * q))] as number, 2);
    return { medianMs: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99) };
  } finally {
    db.close();
  }
}

interface SystemResult {
  name: string;
  shape: Shape;
  connections: number;
  backend?: Backend;
  commit?: string;
  requestsPerSecond?: number;
  p50Ms?: number;
  p99Ms?: number;
  ratioToBare?: number;
  cpuUsPerRequest?: number | null;
  non2xx?: number;
  rounds?: { requestsPerSecond: number; bareRequestsPerSecond: number; ratioToBare: number; p50Ms: number; p99Ms: number; cpuUsPerRequest: number | null }[];
  peakRssMb?: number | null;
  error?: string;
}

export async function runPageViews(args: Map<string, string>, log: (m: string) => void): Promise<void> {
  const durationS = intArg(args, 'duration') ?? 20;
  const rounds = Math.max(1, intArg(args, 'rounds') ?? 5);
  const roundS = Math.max(1, Math.round(durationS / rounds));
  const conns = (args.get('conns') ?? '50,100').split(',').map(Number);
  const backends = (args.get('backends') ?? 'sqlite').split(',') as Backend[];
  const { meta, csv } = ensureDataset(genOptions({ events: 200_000, ...genArgs(args) }), log);
  const poolN = Math.min(meta.counts.events, intArg(args, 'pool') ?? 20_000);
  const pool = await buildPool(csv, meta, poolN);
  const compare = compareFromArgs(args);
  const scratch = tempDir('pageviews-commit');
  const commits = commitLatency(scratch);
  fs.rmSync(scratch, { recursive: true, force: true });
  log(`SQLite commit (synchronous=FULL) on this disk: median ${commits.medianMs} ms, p90 ${commits.p90Ms}, p99 ${commits.p99Ms}`);

  const bare = await startBareServer();
  const systems: RoundSystem[] = [];
  const results: SystemResult[] = [];
  const bareName = (shape: Shape, c: number) => `bare-${shape}@${c}`;
  for (const c of conns) {
    for (const shape of SHAPES) {
      systems.push(roundSystem(bareName(shape, c), bare.baseUrl, bare.pid, requestOf(shape, pool, 'bench', 'ink_ing_bench', 'ink_pub_bench'), false, c));
    }
  }
  const started: { s: ServiceEnv; stop: () => Promise<number | null>; outs: SystemResult[] }[] = [];
  try {
    for (const backend of backends) {
      for (const side of sidesOf(backend, compare)) {
        const label = side.commit ? `${backend}@${side.commit}` : backend;
        const s: ServiceEnv = { backend, dataDir: tempDir(`pageviews-${backend}`), ...(side.repoDir ? { repoDir: side.repoDir } : {}) };
        const outs: SystemResult[] = [];
        try {
          if (backend === 'postgres') s.databaseUrl = await freshPgDatabase(side.commit ? 'bench_inkwell_compare' : 'bench_inkwell', BENCH_PG_ADMIN_URL);
          const project = await createProject(s);
          const pub = JSON.parse(await cli(s, ['key', 'create', '--project', project.projectId, '--kind', 'ingest', '--name', 'tracker', '--json'])) as {
            key: string;
          };
          const svc = await startService(s);
          started.push({ s, stop: () => svc.stop(), outs });
          for (const c of conns) {
            for (const shape of SHAPES) {
              const out: SystemResult = { name: `${label}-${shape}@${c}`, shape, connections: c, backend, ...(side.commit ? { commit: side.commit } : {}) };
              outs.push(out);
              results.push(out);
              systems.push(
                roundSystem(out.name, svc.baseUrl, svc.pid, requestOf(shape, pool, project.projectId, project.ingestKey, pub.key), backend === 'postgres', c),
              );
            }
          }
        } catch (err) {
          const out: SystemResult = { name: label, shape: 'server', connections: 0, backend, error: (err as Error).message };
          results.push(out);
          log(`inkwell-${label}: FAILED: ${String(out.error).slice(0, 800)}`);
        }
      }
    }
    await measureRounds(systems, { rounds, roundS, connections: conns[0] as number, warmUpS: 2, log });
  } finally {
    for (const { s, stop, outs } of started) {
      try {
        const rss = await stop();
        for (const o of outs) o.peakRssMb = rss;
      } finally {
        fs.rmSync(s.dataDir, { recursive: true, force: true });
      }
    }
    await bare.stop();
  }

  const okPerS = (r: { ok: number; durationS: number }) => Math.round(r.ok / r.durationS);
  const bareOut: Record<string, { requestsPerSecond: number; p50Ms: number; p99Ms: number; cpuUsPerRequest: number | null }> = {};
  for (const sys of systems.filter((x) => x.name.startsWith('bare-'))) {
    bareOut[sys.name] = {
      requestsPerSecond: Math.round(median(sys.runs.map(okPerS))),
      p50Ms: median(sys.runs.map((r) => r.latencyMs.p50)),
      p99Ms: median(sys.runs.map((r) => r.latencyMs.p99)),
      cpuUsPerRequest: medianOrNull(sys.cpuUs),
    };
  }
  for (const out of results) {
    const sys = systems.find((x) => x.name === out.name);
    const b = systems.find((x) => x.name === bareName(out.shape, out.connections));
    if (!sys || !b || out.error) continue;
    out.rounds = sys.runs.map((r, i) => {
      const bare = okPerS(b.runs[i] as { ok: number; durationS: number });
      return {
        requestsPerSecond: okPerS(r),
        bareRequestsPerSecond: bare,
        ratioToBare: round(okPerS(r) / bare, 3),
        p50Ms: r.latencyMs.p50,
        p99Ms: r.latencyMs.p99,
        cpuUsPerRequest: sys.cpuUs[i] ?? null,
      };
    });
    out.requestsPerSecond = Math.round(median(out.rounds.map((r) => r.requestsPerSecond)));
    out.ratioToBare = round(median(out.rounds.map((r) => r.ratioToBare)), 3);
    out.p50Ms = median(out.rounds.map((r) => r.p50Ms));
    out.p99Ms = median(out.rounds.map((r) => r.p99Ms));
    out.cpuUsPerRequest = medianOrNull(sys.cpuUs);
    out.non2xx = sys.runs.reduce((n, r) => n + r.non2xx + r.errors, 0);
  }

  const result = {
    benchmark: 'ingest-pageviews',
    environment: environment(),
    dataset: { name: meta.name, poolEvents: poolN },
    ...compareNote(compare),
    method: {
      connections: conns.join(','),
      durationS,
      rounds,
      roundS,
      notes: [
        'One event per request. server: POST /v1/analytics/{projectId}/events, {"events":[event]} with an ingest-secret key (timestamp, userAgent, visitorId from the dataset). tracker: POST /v1/collect, text/plain {projectId, key, events:[{path}]} with a public ingest key, User-Agent header from the dataset.',
        'Every system (shape × connections, and the bare route of each) runs at once and is measured in turn, `rounds` rounds of `roundS` seconds (order rotating), after 2 s of warm-up each: requests/s (2xx only), p50 and p99 are medians over rounds; ratioToBare is the median of per-round ratios to the bare route of the same shape and connections.',
        'bare = the same framework and route shapes with no work (JSON parsing only), in its own process. Accepted events are durable (committed) before each 202.',
        'commitLatency: 300 commits of 20 small rows each to a SQLite file in WAL mode with synchronous=FULL on the same disk, measured before the rounds: the fsync that a durable 202 waits for.',
      ],
    },
    bare: bareOut,
    /** One SQLite commit with its fsync, alone, before the rounds: what every acknowledged request waits for at least once. */
    commitLatency: commits,
    inkwell: results,
    targets: {
      atLeastHalfOfBareP99Under20Ms: results.filter((r) => !r.commit && !r.error).every((r) => (r.ratioToBare ?? 0) >= 0.5 && (r.p99Ms ?? Infinity) < 20),
    },
  };
  const files = writeResults('ingest-pageviews', result);
  console.log(`${'system'.padEnd(30)}req/s     ratio  p50 ms  p99 ms  CPU µs/req`);
  for (const [name, b] of Object.entries(bareOut))
    console.log(
      `${name.padEnd(30)}${String(b.requestsPerSecond).padEnd(10)}1      ${String(b.p50Ms).padEnd(8)}${String(b.p99Ms).padEnd(8)}${b.cpuUsPerRequest ?? ''}`,
    );
  for (const r of results)
    console.log(
      `${r.name.padEnd(30)}${String(r.requestsPerSecond ?? 'FAILED').padEnd(10)}${String(r.ratioToBare ?? '').padEnd(7)}${String(r.p50Ms ?? '').padEnd(8)}${String(r.p99Ms ?? '').padEnd(8)}${r.cpuUsPerRequest ?? ''}`,
    );
  console.log(`results: ${files.latest}`);
}
