// API benchmark: GET /v2/agent/{projectId}/job/{id} with auth (autocannon), req/s and p99 latency, against a bare
// Fastify route of the same shape that does no work, measured in the same run.
//
//   npm run bench:api -- [--duration 15] [--rounds 3] [--connections 10] [--backends sqlite,postgres]
//                        [--compare <checkout of an earlier commit>] [--compare-env NAME=VALUE]
//
// --compare runs each backend's service from another checkout too (its own database), in the same rounds: before
// and after a change, measured side by side. --compare-env sets a variable for those services only (for example
// INKWELL_FROM_SOURCE=1 with --compare pointing at this checkout: the sources through tsx against the bundle).
import fs from 'node:fs';
import { BENCH_PG_ADMIN_URL } from './baselines/pg-raw.ts';
import { intArg, parseArgs } from './lib/args.ts';
import { compareFromArgs, compareNote, systemName } from './lib/compare.ts';
import { type LoadResult, startBareServer } from './lib/load.ts';
import { environment, writeResults } from './lib/results.ts';
import { measureRounds, medianOrNull, type RoundSystem, roundSystem } from './lib/rounds.ts';
import { type Backend, createProject, freshPgDatabase, type ServiceEnv, startService, tempDir } from './lib/service.ts';
import { median, round } from './lib/stats.ts';

const args = parseArgs(process.argv.slice(2));
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const durationS = intArg(args, 'duration') ?? 15;
const rounds = Math.max(1, intArg(args, 'rounds') ?? 3);
const connections = intArg(args, 'connections') ?? 10;
const backends = (args.get('backends') ?? 'sqlite,postgres').split(',') as Backend[];
const roundS = Math.max(1, Math.round(durationS / rounds));

interface BackendResult {
  backend: Backend;
  /** Set for the services run from the --compare checkout: its commit (and --compare-env). */
  commit?: string;
  requestsPerSecond?: number;
  ratioToBare?: number;
  p99Ms?: number;
  load?: LoadResult;
  rounds?: {
    requestsPerSecond: number;
    p99Ms: number;
    bareRequestsPerSecond: number;
    ratioToBare: number;
    cpuUsPerRequest: number | null;
    loadGenCpuUsPerRequest: number | null;
    pgCpuUsPerRequest: number | null;
  }[];
  /** Median over rounds of the service process's CPU per request (µs); the database server's own CPU is not included. */
  cpuUsPerRequest?: number | null;
  /** Median over rounds of the load generator's CPU per request (µs). */
  loadGenCpuUsPerRequest?: number | null;
  /** Median over rounds of the PostgreSQL server's CPU per request (µs; postgres backend only). */
  pgCpuUsPerRequest?: number | null;
  peakRssMb?: number | null;
  error?: string;
}

// Every system is started first, then measured in rotating rounds (lib/rounds.ts).
const bare = await startBareServer();
const systems: RoundSystem[] = [roundSystem('bare', bare.baseUrl, bare.pid, { method: 'GET', path: '/v2/agent/bench/job/job_0000000000000000' })];
const compare = compareFromArgs(args, { env: true });
const results: BackendResult[] = backends.map((backend) => ({ backend }));
if (compare) for (const backend of backends) results.push({ backend, commit: compare.label });
const nameOf = systemName;
const services: { out: BackendResult; s: ServiceEnv; stop: () => Promise<number | null> }[] = [];
try {
  for (const out of results) {
    const { backend } = out;
    // The job is created through the API and never run (API role only, no worker), so GET reads a stored job.
    const s: ServiceEnv = {
      backend,
      dataDir: tempDir(`api-${backend}`),
      extraEnv: {
        INKWELL_MODEL: 'openai-compatible/bench',
        OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1',
        ...(out.commit ? compare?.env : {}),
      },
      ...(out.commit ? { repoDir: compare?.dir } : {}),
    };
    try {
      // Each service its own database (a second fresh one of the same name would drop the first's).
      if (backend === 'postgres') s.databaseUrl = await freshPgDatabase(out.commit ? 'bench_inkwell_compare' : 'bench_inkwell', BENCH_PG_ADMIN_URL);
      const project = await createProject(s);
      const svc = await startService(s, 'api');
      services.push({ out, s, stop: () => svc.stop() });
      const r = await fetch(`${svc.baseUrl}/v2/agent/${project.projectId}/job`, {
        method: 'POST',
        headers: { authorization: `Bearer ${project.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'Fix the typo in the quickstart page' }),
      });
      const text = await r.text();
      if (r.status !== 201) throw new Error(`job create returned ${r.status}: ${text.slice(0, 300)}`);
      const job = JSON.parse(text) as { id: string };
      const req = { method: 'GET' as const, path: `/v2/agent/${project.projectId}/job/${job.id}`, headers: { authorization: `Bearer ${project.adminKey}` } };
      const check = await fetch(`${svc.baseUrl}${req.path}`, { headers: req.headers });
      if (check.status !== 200) throw new Error(`job get returned ${check.status}: ${(await check.text()).slice(0, 300)}`);
      systems.push(roundSystem(nameOf(out), svc.baseUrl, svc.pid, req, backend === 'postgres'));
    } catch (err) {
      out.error = (err as Error).message;
      log(`inkwell-${nameOf(out)}: FAILED: ${out.error.slice(0, 800)}`);
    }
  }

  await measureRounds(systems, { rounds, roundS, connections, warmUpS: 2, log });
} finally {
  for (const svc of services) {
    const { out } = svc;
    try {
      out.peakRssMb = await svc.stop();
    } finally {
      fs.rmSync(svc.s.dataDir, { recursive: true, force: true });
    }
  }
  await bare.stop();
}

const bareSys = systems[0] as RoundSystem;
const bareRps = median(bareSys.runs.map((r) => r.requestsPerSecond));
const bareP99 = median(bareSys.runs.map((r) => r.latencyMs.p99));
log(`bare Fastify route: ${bareRps.toLocaleString('en')} req/s (median of ${rounds}), p99 ${bareP99} ms`);
for (const out of results) {
  const sys = systems.find((x) => x.name === nameOf(out));
  if (!sys || out.error) continue;
  out.rounds = sys.runs.map((r, i) => {
    const b = (bareSys.runs[i] as LoadResult).requestsPerSecond;
    return {
      requestsPerSecond: r.requestsPerSecond,
      p99Ms: r.latencyMs.p99,
      bareRequestsPerSecond: b,
      ratioToBare: round(r.requestsPerSecond / b, 3),
      cpuUsPerRequest: sys.cpuUs[i] ?? null,
      loadGenCpuUsPerRequest: sys.loadGenCpuUs[i] ?? null,
      pgCpuUsPerRequest: sys.pgCpuUs[i] ?? null,
    };
  });
  out.cpuUsPerRequest = medianOrNull(sys.cpuUs);
  out.loadGenCpuUsPerRequest = medianOrNull(sys.loadGenCpuUs);
  out.pgCpuUsPerRequest = medianOrNull(sys.pgCpuUs);
  out.requestsPerSecond = median(sys.runs.map((r) => r.requestsPerSecond));
  out.p99Ms = median(sys.runs.map((r) => r.latencyMs.p99));
  out.ratioToBare = round(median(out.rounds.map((r) => r.ratioToBare)), 3);
  out.load = sys.runs[sys.runs.length - 1];
  log(
    `inkwell-${nameOf(out)}: ${out.requestsPerSecond.toLocaleString('en')} req/s, p99 ${out.p99Ms} ms, ${out.ratioToBare} of bare (median of per-round ratios)`,
  );
}
const bareCpuUs = medianOrNull(bareSys.cpuUs);
const bareResult = { requestsPerSecond: bareRps, latencyMs: { p99: bareP99 } };

const result = {
  benchmark: 'api',
  environment: environment(),
  method: {
    connections,
    durationS,
    rounds,
    roundS,
    notes: [
      'autocannon GET /v2/agent/{projectId}/job/{id} with an admin key (Bearer) on `inkwell serve --role api`, after a 2 s warm-up.',
      'bare = the same framework and route shape returning a constant job, no auth, no database, in its own process, same run.',
      'All systems run at once and are measured in turn, `rounds` rounds of `roundS` seconds each (order rotating): req/s and p99 are medians over rounds; ratioToBare is the median of per-round ratios (each Inkwell round over the bare round of the same round).',
      'Rate limits are raised for the run (the read path has no limiter; the env only matters for other families).',
      'cpuUsPerRequest: the server process CPU (user + system, /proc/<pid>/stat) used during a round over the requests served in it, median over rounds; steadier than req/s on a shared machine. The PostgreSQL server process is not counted.',
      'loadGenCpuUsPerRequest: the CPU of the process running autocannon (this one) per request; pgCpuUsPerRequest: the CPU of every `postgres` process on the machine per request (the CPU budget of PostgreSQL mode: service + database + load generator share the cores).',
    ],
  },
  bare: {
    requestsPerSecond: bareRps,
    p99Ms: bareP99,
    cpuUsPerRequest: bareCpuUs,
    loadGenCpuUsPerRequest: medianOrNull(bareSys.loadGenCpuUs),
    rounds: bareSys.runs.map((r, i) => ({
      requestsPerSecond: r.requestsPerSecond,
      p99Ms: r.latencyMs.p99,
      cpuUsPerRequest: bareSys.cpuUs[i] ?? null,
      loadGenCpuUsPerRequest: bareSys.loadGenCpuUs[i] ?? null,
    })),
    load: bareSys.runs[bareSys.runs.length - 1],
  },
  inkwell: results,
  ...compareNote(compare),
  targets: Object.fromEntries(results.filter((r) => !r.commit).map((r) => [`${r.backend}AtLeastHalfOfBare`, (r.ratioToBare ?? 0) >= 0.5])),
};
const files = writeResults('api', result);
console.log('system            req/s     p99 ms  ratio to bare  CPU µs/request: server  load generator  postgres');
console.log(
  `bare              ${String(bareResult.requestsPerSecond).padEnd(10)}${String(bareResult.latencyMs.p99).padEnd(8)}${'1'.padEnd(15)}${String(bareCpuUs ?? '').padEnd(24)}${result.bare.loadGenCpuUsPerRequest ?? ''}`,
);
for (const r of results) {
  console.log(
    `inkwell-${nameOf(r).padEnd(9)} ${String(r.requestsPerSecond ?? 'FAILED').padEnd(10)}${String(r.p99Ms ?? '').padEnd(8)}${String(r.ratioToBare ?? '').padEnd(15)}` +
      `${String(r.cpuUsPerRequest ?? '').padEnd(24)}${String(r.loadGenCpuUsPerRequest ?? '').padEnd(16)}${r.backend === 'postgres' ? (r.pgCpuUsPerRequest ?? '') : ''}`,
  );
}
console.log(`results: ${files.latest}`);
