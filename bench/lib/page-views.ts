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
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { BENCH_PG_ADMIN_URL } from '../baselines/pg-raw.ts';
import { genArgs, intArg } from './args.ts';
import { compareFromArgs, compareNote, type NodeVariant, nodeVariantsFromArgs, sidesOf, variantService } from './compare.ts';
import { type DatasetMeta, ensureDataset, genOptions, readEvents, toApiEvent } from './dataset.ts';
import { type LoadRequest, startBareServer } from './load.ts';
import { environment, writeResults } from './results.ts';
import { measureRounds, medianOrNull, medianThreadSplit, type RoundSystem, roundSystem, showThreadSplit } from './rounds.ts';
import { type Backend, cli, createProject, freshPgDatabase, type ServiceEnv, startService, tempDir } from './service.ts';
import { median, round } from './stats.ts';
import type { WriterRound } from './writer-metrics.ts';

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

export interface CommitLatency {
  commits: number;
  medianMs: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

function latencyOf(ms: number[]): CommitLatency {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => round(s[Math.min(s.length - 1, Math.floor(s.length * q))] as number, 2);
  return { commits: s.length, medianMs: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), maxMs: round(s.at(-1) ?? Number.NaN, 2) };
}

/**
 * The floor under any durable acknowledgement on this disk: commits of 20 small rows to a SQLite file in WAL mode
 * with synchronous=FULL (one fsync of the WAL each), as the ingest writer commits. `intervalMs` 0: one after the
 * other, here (before the rounds). Otherwise in a child process, one every `intervalMs` until stopped: a probe
 * that runs during the rounds, so its figures are the disk's (and the scheduler's) while the services are loaded.
 */
const COMMIT_PROBE = `
const Database = require(process.argv[1]);
const db = new Database(process.argv[2]);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('create table if not exists t (a integer, b text)');
const ins = db.prepare('insert into t values (?, ?)');
const interval = Number(process.argv[3]);
const count = Number(process.argv[4]);
const ms = [];
const one = (i) => {
  const t0 = performance.now();
  db.exec('begin');
  for (let j = 0; j < 20; j++) ins.run(i, 'x'.repeat(100));
  db.exec('commit');
  // [when it ended (epoch ms), how long it took (ms)]: the rounds are paired with the commits made during them.
  ms.push([Math.round(performance.timeOrigin + performance.now()), Math.round((performance.now() - t0) * 100) / 100]);
  // Keep the file small: the probe measures commits, not a growing WAL.
  if (i % 200 === 199) { db.exec('delete from t'); db.pragma('wal_checkpoint(TRUNCATE)'); }
};
// The figures go to a file (a large write to stdout could be cut short by the exit), then 'done' to stdout.
const done = () => { require('node:fs').writeFileSync(process.argv[2] + '.json', JSON.stringify(ms)); db.close(); process.stdout.write('done\\n'); process.exit(0); };
if (interval === 0) { for (let i = 0; i < count; i++) one(i); done(); }
else { let i = 0; const timer = setInterval(() => one(i++), interval); process.on('SIGTERM', () => { clearInterval(timer); done(); }); process.stdout.write('ready\\n'); }
`;

const probeFile = (dir: string, intervalMs: number) => path.join(dir, `commit-latency-${intervalMs}.db`);
/** The commits a probe wrote to its file when it ended. */
const readProbe = (dir: string, intervalMs: number): TimedCommit[] =>
  JSON.parse(fs.readFileSync(`${probeFile(dir, intervalMs)}.json`, 'utf8')) as TimedCommit[];

function probeArgs(dir: string, intervalMs: number, count: number): string[] {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  return ['-e', COMMIT_PROBE, driver, probeFile(dir, intervalMs), String(intervalMs), String(count)];
}

/** One commit of the probe: when it ended (epoch ms) and how long it took (ms). */
export type TimedCommit = [atMs: number, ms: number];

export function commitLatency(dir: string, commits = 300): CommitLatency {
  execFileSync(process.execPath, probeArgs(dir, 0, commits), { encoding: 'utf8' });
  return latencyOf(readProbe(dir, 0).map((c) => c[1]));
}

/** The p99 of the commits that ended within [from, to] (epoch ms), null when fewer than 20 did. */
export function commitP99Within(commits: readonly TimedCommit[], from: number, to: number): number | null {
  const ms = commits.filter((c) => c[0] >= from && c[0] <= to).map((c) => c[1]);
  return ms.length < 20 ? null : latencyOf(ms).p99Ms;
}

/** Starts the probe in a child process (a commit every `intervalMs`); `stop` ends it and returns its figures. */
export async function startCommitProbe(dir: string, intervalMs = 20): Promise<{ stop(): Promise<{ latency: CommitLatency; commits: TimedCommit[] }> }> {
  const child = spawn(process.execPath, probeArgs(dir, intervalMs, 0), { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString();
  });
  await new Promise<void>((resolve, reject) => {
    const check = () => (out.startsWith('ready\n') ? resolve() : setTimeout(check, 20));
    child.once('exit', (code) => reject(new Error(`commit probe exited with ${code}`)));
    check();
  });
  return {
    async stop() {
      const closed = new Promise((r) => child.once('close', r));
      child.kill('SIGTERM');
      await closed;
      const commits = readProbe(dir, intervalMs);
      return { latency: latencyOf(commits.map((c) => c[1])), commits };
    },
  };
}

interface SystemResult {
  name: string;
  shape: Shape;
  connections: number;
  backend?: Backend;
  commit?: string;
  /** --node-variants: the variant's name. */
  variant?: string;
  requestsPerSecond?: number;
  p50Ms?: number;
  p99Ms?: number;
  ratioToBare?: number;
  cpuUsPerRequest?: number | null;
  /** cpuUsPerRequest by thread of the service (rounds.ts threadCpuUs): medians over rounds. */
  cpuUsByThread?: Record<string, number>;
  /** The ingest writer's group commits (writer-metrics.ts), medians over rounds; null when the service does not report them. */
  writer?: { eventsPerGroup: number | null; transactionMs: number | null; syncMs: number | null } | null;
  non2xx?: number;
  /** Median over rounds of (the round's p99 - the p99 of the probe's commits during that round): the wait beyond the disk's. */
  p99OverCommitP99Ms?: number | null;
  rounds?: {
    requestsPerSecond: number;
    bareRequestsPerSecond: number;
    ratioToBare: number;
    p50Ms: number;
    p99Ms: number;
    /** p99 of the probe's commits (commitLatencyUnderLoad) that ended during this round. */
    commitP99Ms: number | null;
    cpuUsPerRequest: number | null;
    cpuUsByThread: Record<string, number>;
    writer: WriterRound | null;
  }[];
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
  const variants = nodeVariantsFromArgs(args);
  const scratch = tempDir('pageviews-commit');
  const commits = commitLatency(scratch);
  const showCommits = (c: CommitLatency) => `median ${c.medianMs} ms, p90 ${c.p90Ms}, p99 ${c.p99Ms}, max ${c.maxMs} (${c.commits} commits)`;
  log(`SQLite commit (synchronous=FULL) on this disk, idle: ${showCommits(commits)}`);
  let commitsUnderLoad: CommitLatency | null = null;
  let timedCommits: TimedCommit[] = [];

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
      const sides: { commit?: string; repoDir?: string; variant?: NodeVariant }[] = [...sidesOf(backend, compare), ...variants.map((variant) => ({ variant }))];
      for (const side of sides) {
        const label = side.commit ? `${backend}@${side.commit}` : side.variant ? `${backend}~${side.variant.label}` : backend;
        const s: ServiceEnv = {
          backend,
          dataDir: tempDir(`pageviews-${backend}`),
          ...(side.repoDir ? { repoDir: side.repoDir } : {}),
          ...(side.variant ? variantService(side.variant) : {}),
        };
        const outs: SystemResult[] = [];
        try {
          if (backend === 'postgres') {
            const db = side.commit ? 'bench_inkwell_compare' : side.variant ? `bench_inkwell_v_${side.variant.label.replace(/\W/g, '_')}` : 'bench_inkwell';
            s.databaseUrl = await freshPgDatabase(db, BENCH_PG_ADMIN_URL);
          }
          const project = await createProject(s);
          const pub = JSON.parse(await cli(s, ['key', 'create', '--project', project.projectId, '--kind', 'ingest', '--name', 'tracker', '--json'])) as {
            key: string;
          };
          const svc = await startService(s);
          started.push({ s, stop: () => svc.stop(), outs });
          for (const c of conns) {
            for (const shape of SHAPES) {
              const out: SystemResult = {
                name: `${label}-${shape}@${c}`,
                shape,
                connections: c,
                backend,
                ...(side.commit ? { commit: side.commit } : {}),
                ...(side.variant ? { variant: side.variant.label } : {}),
              };
              outs.push(out);
              results.push(out);
              const sys = roundSystem(
                out.name,
                svc.baseUrl,
                svc.pid,
                requestOf(shape, pool, project.projectId, project.ingestKey, pub.key),
                backend === 'postgres',
                c,
              );
              sys.writerMetrics = true;
              systems.push(sys);
            }
          }
        } catch (err) {
          const out: SystemResult = { name: label, shape: 'server', connections: 0, backend, error: (err as Error).message };
          results.push(out);
          log(`inkwell-${label}: FAILED: ${String(out.error).slice(0, 800)}`);
        }
      }
    }
    const probe = await startCommitProbe(scratch);
    try {
      await measureRounds(systems, { rounds, roundS, connections: conns[0] as number, warmUpS: 2, log });
    } finally {
      const probed = await probe.stop();
      commitsUnderLoad = probed.latency;
      timedCommits = probed.commits;
    }
    log(`SQLite commit during the rounds (a commit every 20 ms): ${showCommits(commitsUnderLoad)}`);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
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
        commitP99Ms: commitP99Within(timedCommits, ...(sys.windows[i] as [number, number])),
        cpuUsPerRequest: sys.cpuUs[i] ?? null,
        cpuUsByThread: sys.threadCpuUs[i] ?? {},
        writer: sys.writer[i] ?? null,
      };
    });
    const over = out.rounds.filter((r) => r.commitP99Ms !== null).map((r) => r.p99Ms - (r.commitP99Ms as number));
    out.p99OverCommitP99Ms = over.length > 0 ? round(median(over), 1) : null;
    out.requestsPerSecond = Math.round(median(out.rounds.map((r) => r.requestsPerSecond)));
    out.ratioToBare = round(median(out.rounds.map((r) => r.ratioToBare)), 3);
    out.p50Ms = median(out.rounds.map((r) => r.p50Ms));
    out.p99Ms = median(out.rounds.map((r) => r.p99Ms));
    out.cpuUsPerRequest = medianOrNull(sys.cpuUs);
    out.cpuUsByThread = medianThreadSplit(sys.threadCpuUs);
    const w = sys.writer.filter((x): x is WriterRound => x !== null);
    out.writer =
      w.length === 0
        ? null
        : {
            eventsPerGroup: medianOrNull(w.map((x) => x.eventsPerGroup)),
            transactionMs: medianOrNull(
              w.map((x) => x.transactionMs),
              2,
            ),
            syncMs: medianOrNull(
              w.map((x) => x.syncMs),
              2,
            ),
          };
    out.non2xx = sys.runs.reduce((n, r) => n + r.non2xx + r.errors, 0);
  }

  const result = {
    benchmark: 'ingest-pageviews',
    environment: environment(),
    dataset: { name: meta.name, poolEvents: poolN },
    ...compareNote(compare),
    ...(variants.length > 0 ? { nodeVariants: variants } : {}),
    method: {
      connections: conns.join(','),
      durationS,
      rounds,
      roundS,
      notes: [
        'One event per request. server: POST /v1/analytics/{projectId}/events, {"events":[event]} with an ingest-secret key (timestamp, userAgent, visitorId from the dataset). tracker: POST /v1/collect, text/plain {projectId, key, events:[{path}]} with a public ingest key, User-Agent header from the dataset.',
        'Every system (shape × connections, and the bare route of each) runs at once and is measured in turn, `rounds` rounds of `roundS` seconds (order rotating), after 2 s of warm-up each: requests/s (2xx only), p50 and p99 are medians over rounds; ratioToBare is the median of per-round ratios to the bare route of the same shape and connections.',
        'bare = the same framework and route shapes with no work (JSON parsing only), in its own process. Accepted events are durable (committed) before each 202.',
        'p99OverCommitP99Ms: per round, the p99 latency minus the p99 of the probe commits (commitLatencyUnderLoad) that ended during that round; the median over rounds. A durable 202 waits for at least one commit, so this is what the service adds beyond the disk.',
        "commitLatency: 300 commits of 20 small rows each to a SQLite file in WAL mode with synchronous=FULL on the same disk, one after the other before the rounds: the fsync that a durable 202 waits for. commitLatencyUnderLoad: the same commit, one every 20 ms from a child process during all the rounds (warm-ups included), so it shares the disk and CPUs with the systems measured (in the Inkwell rounds, with the service's own commits).",
      ],
    },
    bare: bareOut,
    /** One SQLite commit with its fsync, alone, before the rounds: what every acknowledged request waits for at least once. */
    commitLatency: commits,
    /** The same commit during the rounds (a probe process, one every 20 ms). */
    commitLatencyUnderLoad: commitsUnderLoad,
    inkwell: results,
    targets: {
      atLeastHalfOfBareP99Under20Ms: results
        .filter((r) => !r.commit && !r.variant && !r.error)
        .every((r) => (r.ratioToBare ?? 0) >= 0.5 && (r.p99Ms ?? Infinity) < 20),
    },
  };
  const files = writeResults('ingest-pageviews', result, args.get('results-dir'));
  console.log(`${'system'.padEnd(30)}req/s     ratio  p50 ms  p99 ms  CPU µs/req  p99 - commit p99 ms`);
  for (const [name, b] of Object.entries(bareOut))
    console.log(
      `${name.padEnd(30)}${String(b.requestsPerSecond).padEnd(10)}1      ${String(b.p50Ms).padEnd(8)}${String(b.p99Ms).padEnd(8)}${b.cpuUsPerRequest ?? ''}`,
    );
  for (const r of results)
    console.log(
      `${r.name.padEnd(30)}${String(r.requestsPerSecond ?? 'FAILED').padEnd(10)}${String(r.ratioToBare ?? '').padEnd(7)}${String(r.p50Ms ?? '').padEnd(8)}${String(r.p99Ms ?? '').padEnd(8)}${String(r.cpuUsPerRequest ?? '').padEnd(12)}${r.p99OverCommitP99Ms ?? ''}`,
    );
  console.log('CPU µs/request by thread of the service, and its ingest writer (medians over rounds):');
  for (const r of results) {
    if (!r.cpuUsByThread) continue;
    const w = r.writer;
    const writer = w ? `; ${w.eventsPerGroup} requests/group, transaction ${w.transactionMs} ms, sync ${w.syncMs ?? '–'} ms` : '';
    console.log(`  ${r.name}: ${showThreadSplit(r.cpuUsByThread)}${writer}`);
  }
  console.log(`results: ${files.latest}`);
}
