// Fault drill (issue 22): `kill -9` of `inkwell serve` under a job load with follow-ups. Per database: a baseline
// run (N jobs created at once, each sent a follow-up message while queued or running; time until every job's two
// turns are completed), then the same load on a fresh database with the service killed (SIGKILL) once a share of
// the jobs has completed and started again on the same data directory / database. Prints a table per run (faults
// injected, requests acknowledged, turns stored, lost, duplicated, longest stall) and checks the promise: nothing
// lost or duplicated, and the crashed queue done within 2× the baseline plus one lease (a dead worker's running
// turns stay claimed until their lease runs out).
//
//   npm run bench:drill -- [--jobs 100] [--concurrency 2] [--lease-ms 3000] [--crash-at 0.33] [--model-delay-ms 0]
//                          [--backends sqlite,postgres] [--compare <checkout of an earlier commit>]
//
// --compare runs the same drill against another checkout's `inkwell` too, in the same run: per database its
// baseline and crash runs alternate with this checkout's, so a change is measured side by side with the code
// before it (the PostgreSQL database-cut run is this checkout's only).
// Writes bench/results/drill-latest.json and a line in bench/results/history.jsonl; each service process's log goes to
// bench/.data/drill-logs/<timestamp>/. PostgreSQL: a fresh database `bench_drill` per run on BENCH_PG_ADMIN_URL.
// The smaller variant runs in the test suite: test/ops/crash-drill.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import { BENCH_PG_ADMIN_URL } from './baselines/pg-raw.ts';
import { intArg, parseArgs } from './lib/args.ts';
import { compareFromArgs, compareNote, type Side, sidesOf, systemName } from './lib/compare.ts';
import { BENCH_DIR } from './lib/dataset.ts';
import { type DrillBackend, type DrillRun, drillTable, runDrill } from './lib/drill.ts';
import { environment, writeResults } from './lib/results.ts';
import { freshPgDatabase, tempDir } from './lib/service.ts';

const args = parseArgs(process.argv.slice(2));
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const JOBS = intArg(args, 'jobs') ?? 100;
const CONCURRENCY = intArg(args, 'concurrency') ?? 2;
const LEASE_MS = intArg(args, 'lease-ms') ?? 3000;
const MODEL_DELAY_MS = args.has('model-delay-ms') ? Number(args.get('model-delay-ms')) : 0;
const CRASH_AT = Number(args.get('crash-at') ?? 1 / 3);
if (!(CRASH_AT > 0 && CRASH_AT < 1)) throw new Error('--crash-at must be between 0 and 1 (the share of jobs completed at the kill)');
const backends = (args.get('backends') ?? 'sqlite,postgres').split(',') as DrillBackend[];
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const logDir = path.join(BENCH_DIR, '.data', 'drill-logs', stamp);

interface BackendResult {
  backend: DrillBackend;
  /** Set for the runs of the --compare checkout: its commit. */
  commit?: string;
  baseline?: DrillRun;
  crash?: DrillRun;
  /** PostgreSQL: the database cut off for 8 s under the same load. */
  dbCut?: DrillRun;
  /** 2 × baseline + lease: what the crashed run's queue time must stay within. */
  allowanceMs?: number;
  /** Crashed queue time over the baseline's. */
  ratio?: number;
  ok?: boolean;
  error?: string;
}

async function run(side: Side, crashAt: number | null, fault: 'kill' | 'db-cut' = 'kill'): Promise<DrillRun> {
  const { backend } = side;
  const dataDir = tempDir(`drill-${backend}`);
  try {
    const env: Record<string, string> = { ...side.env, INKWELL_DATA_DIR: dataDir };
    if (backend === 'postgres') env.DATABASE_URL = await freshPgDatabase('bench_drill', BENCH_PG_ADMIN_URL);
    return await runDrill({
      db: { backend, env },
      jobs: JOBS,
      concurrency: CONCURRENCY,
      leaseMs: LEASE_MS,
      crashAt,
      fault,
      cutMs: 8000,
      modelDelayMs: MODEL_DELAY_MS,
      timeoutMs: 20 * 60_000,
      logDir,
      log,
      ...(side.repoDir ? { checkout: side.repoDir } : {}),
    });
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The baseline and crash runs of each side of one backend, alternating (this checkout first). */
async function drillBackend(backend: DrillBackend): Promise<BackendResult[]> {
  const sides = sidesOf(backend, compare);
  const outs: BackendResult[] = sides.map((side) => ({ backend, ...(side.commit ? { commit: side.commit } : {}) }));
  for (const phase of ['baseline', 'crash'] as const) {
    for (const [i, side] of sides.entries()) {
      const out = outs[i] as BackendResult;
      if (out.error) continue;
      try {
        out[phase] = await run(side, phase === 'baseline' ? null : CRASH_AT);
      } catch (err) {
        out.error = (err as Error).message;
        out.ok = false;
        log(`${systemName(out)}: FAILED: ${out.error.slice(0, 2000)}`);
      }
    }
  }
  for (const out of outs) if (out.baseline && out.crash) judge(out, out.baseline, out.crash);
  const cut = outs[0] as BackendResult;
  if (backend === 'postgres' && !cut.error) {
    try {
      // The database taken away for 8 s under the same load (the service is not restarted).
      cut.dbCut = await run(sides[0] as Side, CRASH_AT, 'db-cut');
      const ok = cut.dbCut.lost === 0 && cut.dbCut.problems.length === 0 && cut.dbCut.dbCut?.serviceAlive === true;
      cut.ok &&= ok;
      console.log(`\n${drillTable([cut.dbCut])}\n${JSON.stringify(cut.dbCut.dbCut)}: ${ok ? 'OK' : 'FAILED'}`);
      for (const p of cut.dbCut.problems) console.log(`  problem: ${p}`);
    } catch (err) {
      cut.error = (err as Error).message;
      cut.ok = false;
      log(`${backend} db-cut: FAILED: ${cut.error.slice(0, 2000)}`);
    }
  }
  return outs;
}

/** The promise: nothing lost or duplicated, and the crashed queue done within 2 × the baseline plus one lease. */
function judge(out: BackendResult, baseline: DrillRun, crash: DrillRun): void {
  out.allowanceMs = 2 * baseline.queueMs + LEASE_MS;
  out.ratio = Math.round((crash.queueMs / baseline.queueMs) * 100) / 100;
  out.ok = [baseline, crash].every((r) => r.lost === 0 && r.duplicated.pullRequests === 0 && r.duplicated.commits === 0 && r.problems.length === 0);
  out.ok &&= crash.queueMs <= out.allowanceMs;
  console.log(`\n${systemName(out)}:\n${drillTable([baseline, crash])}`);
  const c = crash.crash;
  console.log(
    `kill at ${c?.atMs} ms (${c?.jobsCompletedAtKill} jobs / ${c?.turnsDoneAtKill} turns completed, ${c?.turnsRunningAtKill} turns running); ready again ${c?.restartReadyMs} ms after the kill; ` +
      `first turn completed ${c?.firstTurnAfterKillMs} ms after; interrupted turns done ${c?.interruptedResumedMs} ms after; ${crash.turnsRetried} turns resumed (attempt 2); ` +
      `queue ${crash.queueMs} ms = ${out.ratio}× the baseline (allowance 2 × ${baseline.queueMs} + ${LEASE_MS} = ${out.allowanceMs} ms): ${out.ok ? 'OK' : 'FAILED'}\n`,
  );
  for (const p of [...baseline.problems, ...crash.problems]) console.log(`  problem: ${p}`);
}

const compare = compareFromArgs(args);
const results: BackendResult[] = [];
for (const backend of backends) results.push(...(await drillBackend(backend)));

const written = writeResults('drill', {
  benchmark: 'fault-drill',
  environment: environment(),
  method: {
    jobs: JOBS,
    workerConcurrency: CONCURRENCY,
    leaseMs: LEASE_MS,
    crashAt: CRASH_AT,
    modelDelayMs: MODEL_DELAY_MS,
    notes: [
      '`inkwell serve --role all` in a child process (INKWELL_POLL_INTERVAL_MS=100); a scripted OpenAI-compatible model (each turn: one write_file of a file unique to the job and turn, then a final text); a fake GitHub pulls API; a local bare repository reached as https://github.com/acme/docs through url.<local>.insteadOf.',
      'Load: N jobs created by 4 clients, each followed at once by a follow-up message (so while the job is queued or running); every POST carries an Idempotency-Key and is retried on a refused connection or 503.',
      'Crash run: SIGKILL of the service once the given share of jobs has both turns done, then `inkwell serve` again on the same data directory and database; a fresh database and repository per run.',
      'Database-cut run (PostgreSQL): the service reaches PostgreSQL through a TCP proxy; at the same point the proxy refuses new connections and kills open ones for 8 s, then listens again; the service is not restarted.',
      'Queue time: launch of `inkwell serve` → the last turn’s finished_at (read from job_turns); both runs start the service once, the crash run a second time. Longest stall: the longest interval from the first request to the last turn done with no turn finishing.',
      'Stored: acknowledged turns that are done with their file on the job’s branch. Duplicated: pull requests beyond one per branch at the fake GitHub, commits beyond one per turn file between main and the branch.',
    ],
  },
  results,
  ...compareNote(compare),
});
if (compare) {
  console.log('system                  baseline queue ms  crash queue ms  ratio  ok');
  for (const r of results) {
    console.log(
      `${systemName(r).padEnd(24)}${String(r.baseline?.queueMs ?? 'FAILED').padEnd(19)}${String(r.crash?.queueMs ?? '').padEnd(16)}${String(r.ratio ?? '').padEnd(7)}${r.ok}`,
    );
  }
}
log(`results: ${written.latest}`);
log(`service logs: ${logDir}`);
process.exitCode = results.every((r) => r.ok) ? 0 : 1;
