// API benchmark: GET /v2/agent/{projectId}/job/{id} with auth (autocannon), req/s and p99 latency, against a bare
// Fastify route of the same shape that does no work, measured in the same run.
//
//   npm run bench:api -- [--duration 15] [--connections 10] [--backends sqlite,postgres]
import fs from 'node:fs';
import { BENCH_PG_ADMIN_URL } from './baselines/pg-raw.ts';
import { intArg, parseArgs } from './lib/args.ts';
import { type LoadResult, load, startBareServer } from './lib/load.ts';
import { environment, writeResults } from './lib/results.ts';
import { type Backend, createProject, freshPgDatabase, type ServiceEnv, startService, tempDir } from './lib/service.ts';
import { round } from './lib/stats.ts';

const args = parseArgs(process.argv.slice(2));
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const durationS = intArg(args, 'duration') ?? 15;
const connections = intArg(args, 'connections') ?? 10;
const backends = (args.get('backends') ?? 'sqlite,postgres').split(',') as Backend[];

const bare = await startBareServer();
let bareResult: LoadResult;
try {
  // Warm-up, then the measured run.
  await load(bare.baseUrl, { method: 'GET', path: '/v2/agent/bench/job/job_0000000000000000' }, { connections, durationS: 2 });
  bareResult = await load(bare.baseUrl, { method: 'GET', path: '/v2/agent/bench/job/job_0000000000000000' }, { connections, durationS });
} finally {
  await bare.stop();
}
log(`bare Fastify route: ${bareResult.requestsPerSecond.toLocaleString('en')} req/s, p99 ${bareResult.latencyMs.p99} ms`);

interface BackendResult {
  backend: Backend;
  requestsPerSecond?: number;
  ratioToBare?: number;
  p99Ms?: number;
  load?: LoadResult;
  peakRssMb?: number | null;
  error?: string;
}

const results: BackendResult[] = [];
for (const backend of backends) {
  const out: BackendResult = { backend };
  // The job is created through the API and never run (API role only, no worker), so GET reads a stored job.
  const s: ServiceEnv = {
    backend,
    dataDir: tempDir(`api-${backend}`),
    extraEnv: { INKWELL_MODEL: 'openai-compatible/bench', OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1' },
  };
  try {
    if (backend === 'postgres') s.databaseUrl = await freshPgDatabase('bench_inkwell', BENCH_PG_ADMIN_URL);
    const project = await createProject(s);
    const svc = await startService(s, 'api');
    try {
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
      await load(svc.baseUrl, req, { connections, durationS: 2 });
      const res = await load(svc.baseUrl, req, { connections, durationS });
      out.load = res;
      out.requestsPerSecond = res.requestsPerSecond;
      out.p99Ms = res.latencyMs.p99;
      out.ratioToBare = round(res.requestsPerSecond / bareResult.requestsPerSecond, 3);
      if (res.non2xx > 0) log(`inkwell-${backend}: ${res.non2xx} non-2xx responses`);
      log(`inkwell-${backend}: ${res.requestsPerSecond.toLocaleString('en')} req/s, p99 ${res.latencyMs.p99} ms, ${out.ratioToBare} of bare`);
    } finally {
      out.peakRssMb = await svc.stop();
    }
  } catch (err) {
    out.error = (err as Error).message;
    log(`inkwell-${backend}: FAILED: ${out.error.slice(0, 800)}`);
  } finally {
    fs.rmSync(s.dataDir, { recursive: true, force: true });
  }
  results.push(out);
}

const result = {
  benchmark: 'api',
  environment: environment(),
  method: {
    connections,
    durationS,
    notes: [
      'autocannon GET /v2/agent/{projectId}/job/{id} with an admin key (Bearer) on `inkwell serve --role api`, after a 2 s warm-up.',
      'bare = the same framework and route shape returning a constant job, no auth, no database, in its own process, same run.',
      'Rate limits are raised for the run (the read path has no limiter; the env only matters for other families).',
    ],
  },
  bare: { requestsPerSecond: bareResult.requestsPerSecond, p99Ms: bareResult.latencyMs.p99, load: bareResult },
  inkwell: results,
  targets: Object.fromEntries(results.map((r) => [`${r.backend}AtLeastHalfOfBare`, (r.ratioToBare ?? 0) >= 0.5])),
};
const files = writeResults('api', result);
console.log('system            req/s     p99 ms  ratio to bare');
console.log(`bare              ${String(bareResult.requestsPerSecond).padEnd(10)}${String(bareResult.latencyMs.p99).padEnd(8)}1`);
for (const r of results) {
  console.log(`inkwell-${r.backend.padEnd(9)} ${String(r.requestsPerSecond ?? 'FAILED').padEnd(10)}${String(r.p99Ms ?? '').padEnd(8)}${r.ratioToBare ?? ''}`);
}
console.log(`results: ${files.latest}`);
