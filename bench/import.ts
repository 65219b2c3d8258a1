// Log-import benchmark: `inkwell analytics import --format combined` (the real CLI, a fresh database each round)
// against GoAccess parsing the same combined log in the same run.
//
//   npm run bench:import -- [--lines 1M] [--rounds 3] [--backends sqlite,postgres] [--compare <checkout>]
//                           [--goaccess /usr/bin/goaccess] [--keep] [--results-dir DIR]
//   npm run bench:import -- --profile [--lines 200k] [--results-dir DIR]
//
// GoAccess comes from Debian's packages: `apt-get install -y goaccess` (the bench stops and says so when it is
// missing). The log (bench/lib/access-log.ts) is the analytics dataset written as a combined log, cached in
// bench/.data/. The systems run one after the other in rotating rounds; each process is timed from spawn to exit
// (so both include their start-up) under /usr/bin/time, whose maximum resident set size covers the whole process
// (every thread: the CLI's ingest worker and checkpointer too). Checked every round: GoAccess's JSON report counts
// every line as a valid request; the import reads every line and stores every one of them. In the first round
// each import of this checkout is run a second time on the same database: it must add nothing.
//
// --profile: instead of the rounds, one import of this checkout from its sources under `node --cpu-prof`, and where
// its CPU went by thread and stage (bench/lib/cpu-profile.ts), written to bench/results/import-profile-latest.json.
// --results-dir: where import-latest.json (or import-profile-latest.json) and the history line go instead of
// bench/results: trial runs on a loaded machine.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BENCH_PG_ADMIN_URL } from './baselines/pg-raw.ts';
import { ensureAccessLog } from './lib/access-log.ts';
import { genArgs, intArg, parseArgs } from './lib/args.ts';
import { compareFromArgs, compareNote, type Side, sidesOf, systemName } from './lib/compare.ts';
import { breakdowns, printBreakdowns } from './lib/cpu-profile.ts';
import { ensureDataset, genOptions, RESULTS_DIR } from './lib/dataset.ts';
import { environment, peakRssMb, writeResults } from './lib/results.ts';
import { type Backend, createProject, dirSizeMb, freshPgDatabase, inkwellBin, type ServiceEnv, serviceEnv, tempDir } from './lib/service.ts';
import { median, round } from './lib/stats.ts';

const args = parseArgs(process.argv.slice(2));
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const lines = intArg(args, 'lines') ?? 1_000_000;
const rounds = Math.max(1, intArg(args, 'rounds') ?? 3);
const backends = (args.get('backends') ?? 'sqlite').split(',') as Backend[];
const goaccess = args.get('goaccess') ?? 'goaccess';
const keep = args.has('keep');
const compare = compareFromArgs(args);
const resultsDir = args.get('results-dir') ?? RESULTS_DIR;
const TIME = '/usr/bin/time';

let goaccessVersion: string;
try {
  goaccessVersion = execFileSync(goaccess, ['--version'], { encoding: 'utf8' }).split('\n')[0]?.trim() ?? '';
} catch {
  console.error(`GoAccess not found (${goaccess}). Install it from Debian's packages: apt-get install -y goaccess (or pass --goaccess <path>)`);
  process.exit(1);
}

const { meta, csv } = ensureDataset(genOptions({ events: lines, ...genArgs(args) }), log);
const accessLog = await ensureAccessLog(meta, csv, log);
log(`log: ${accessLog.file} (${accessLog.lines.toLocaleString('en')} lines, ${(accessLog.bytes / 1e6).toFixed(0)} MB); ${goaccessVersion}`);

interface Run {
  wallMs: number;
  linesPerSecond: number;
  peakRssMb: number | null;
  /** User + system CPU of the process (all threads), ms. */
  cpuMs: number | null;
}

interface Measured extends Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end: wall time from spawn to exit; peak RSS and CPU from /usr/bin/time (GNU time: the
 * child's rusage, all its threads) where installed, else peak RSS from /proc polling.
 */
async function measure(cmd: string, argv: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<Measured> {
  const useTime = fs.existsSync(TIME);
  const timeFile = path.join(tempDir('import-time'), 'time.txt');
  const [file, fullArgs] = useTime ? [TIME, ['-f', '%e %M %U %S', '-o', timeFile, cmd, ...argv]] : [cmd, argv];
  const t0 = performance.now();
  const child = spawn(file, fullArgs, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => {
    stdout = (stdout + b.toString()).slice(-200_000);
  });
  child.stderr.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString()).slice(-20_000);
  });
  let polled: number | null = null;
  const timer = useTime
    ? null
    : setInterval(() => {
        polled = peakRssMb(child.pid as number) ?? polled;
      }, 50);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const wallMs = performance.now() - t0;
  if (timer) clearInterval(timer);
  let peak: number | null = polled;
  let cpu: number | null = null;
  if (useTime) {
    const m = /([\d.]+) (\d+) ([\d.]+) ([\d.]+)\s*$/.exec(fs.readFileSync(timeFile, 'utf8'));
    if (m) {
      peak = Math.round(Number(m[2]) / 1024);
      cpu = Math.round((Number(m[3]) + Number(m[4])) * 1000);
    }
    fs.rmSync(path.dirname(timeFile), { recursive: true, force: true });
  }
  return { code, stdout, stderr, wallMs: Math.round(wallMs), linesPerSecond: Math.round(accessLog.lines / (wallMs / 1000)), peakRssMb: peak, cpuMs: cpu };
}

const strip = (m: Measured): Run => ({ wallMs: m.wallMs, linesPerSecond: m.linesPerSecond, peakRssMb: m.peakRssMb, cpuMs: m.cpuMs });

interface GoaccessCheck {
  totalRequests: number | null;
  validRequests: number | null;
  failedRequests: number | null;
  ok: boolean;
}

async function runGoaccess(): Promise<Run & { check: GoaccessCheck }> {
  const dir = tempDir('goaccess');
  const report = path.join(dir, 'report.json');
  try {
    const m = await measure(goaccess, [accessLog.file, '--log-format=COMBINED', '--no-global-config', '--no-progress', '-o', report], {
      ...process.env,
      LANG: 'C',
    });
    if (m.code !== 0) throw new Error(`goaccess exited with ${m.code}: ${m.stderr.slice(-600)}`);
    const general = (JSON.parse(fs.readFileSync(report, 'utf8')) as { general?: Record<string, unknown> }).general ?? {};
    const n = (x: unknown) => (typeof x === 'number' ? x : null);
    const check = { totalRequests: n(general.total_requests), validRequests: n(general.valid_requests), failedRequests: n(general.failed_requests), ok: false };
    check.ok = check.totalRequests === accessLog.lines && check.validRequests === accessLog.lines && check.failedRequests === 0;
    return { ...strip(m), check };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

interface ImportStatsOut {
  lines: number;
  unparseable: number;
  accepted: number;
  inserted: number;
  rejected: number;
  samples: { line: number; error: string }[];
}

interface InkwellRound extends Run {
  stats: ImportStatsOut;
  /** Every line read and stored: lines = log lines, inserted = lines, nothing unparseable or rejected. */
  exact: boolean;
  databaseMb: number | null;
  reimport?: Run & { stats: ImportStatsOut; addedNothing: boolean };
}

async function importOnce(side: Side, s: ServiceEnv, projectId: string): Promise<Measured & { stats: ImportStatsOut }> {
  const m = await measure(
    process.execPath,
    [inkwellBin(side.repoDir), 'analytics', 'import', '--project', projectId, '--format', 'combined', '--json', accessLog.file],
    { ...serviceEnv(s), ...side.env, CI: '1' },
    side.repoDir,
  );
  if (m.code !== 0) throw new Error(`inkwell analytics import exited with ${m.code}: ${(m.stderr || m.stdout).slice(-800)}`);
  const stats = (JSON.parse(m.stdout) as { files: { stats: ImportStatsOut }[] }).files[0]?.stats as ImportStatsOut;
  return { ...m, stats };
}

async function runInkwell(side: Side, first: boolean): Promise<InkwellRound> {
  const s: ServiceEnv = { backend: side.backend, dataDir: tempDir(`import-${side.backend}`), ...(side.repoDir ? { repoDir: side.repoDir } : {}) };
  try {
    if (side.backend === 'postgres') s.databaseUrl = await freshPgDatabase(side.commit ? 'bench_import_compare' : 'bench_import', BENCH_PG_ADMIN_URL);
    const project = await createProject(s);
    const m = await importOnce(side, s, project.projectId);
    const st = m.stats;
    const out: InkwellRound = {
      ...strip(m),
      stats: st,
      exact: st.lines === accessLog.lines && st.inserted === accessLog.lines && st.unparseable === 0 && st.rejected === 0,
      databaseMb: side.backend === 'sqlite' ? dirSizeMb(s.dataDir) : null,
    };
    if (first) {
      const again = await importOnce(side, s, project.projectId);
      out.reimport = { ...strip(again), stats: again.stats, addedNothing: again.stats.inserted === 0 && again.stats.accepted === accessLog.lines };
    }
    return out;
  } finally {
    if (keep) log(`kept ${s.dataDir}`);
    else fs.rmSync(s.dataDir, { recursive: true, force: true });
  }
}

interface InkwellResult {
  backend: Backend;
  commit?: string;
  rounds: InkwellRound[];
  linesPerSecond?: number;
  wallMs?: number;
  peakRssMb?: number | null;
  cpuMs?: number | null;
  /** Median over rounds of the round's lines/s over GoAccess's in the same round. */
  ratioToGoaccess?: number;
  exact?: boolean;
  reimportAddedNothing?: boolean | null;
  reimportLinesPerSecond?: number | null;
  databaseMb?: number | null;
  error?: string;
}

if (args.has('profile')) {
  const s: ServiceEnv = { backend: 'sqlite', dataDir: tempDir('import-profile') };
  const profDir = tempDir('import-cpuprof');
  try {
    const project = await createProject(s);
    const m = await measure(
      process.execPath,
      [
        `--cpu-prof`,
        `--cpu-prof-dir=${profDir}`,
        inkwellBin(),
        'analytics',
        'import',
        '--project',
        project.projectId,
        '--format',
        'combined',
        '--json',
        accessLog.file,
      ],
      { ...serviceEnv(s), INKWELL_FROM_SOURCE: '1', CI: '1' },
    );
    if (m.code !== 0) throw new Error(`inkwell analytics import exited with ${m.code}: ${(m.stderr || m.stdout).slice(-800)}`);
    const threads = breakdowns(profDir);
    log(`profiled import from the sources: ${m.wallMs} ms, CPU ${m.cpuMs} ms, peak RSS ${m.peakRssMb} MB (profiling slows it)`);
    printBreakdowns(threads, accessLog.lines, log);
    // Not a history line: a profile explains a run, it is not one of the measured series.
    fs.mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, 'import-profile-latest.json');
    const result = {
      benchmark: 'import-profile',
      environment: environment(),
      dataset: { name: meta.name, log: path.basename(accessLog.file), lines: accessLog.lines, bytes: accessLog.bytes },
      run: strip(m),
      threads,
    };
    fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    log(`results: ${file}`);
  } finally {
    if (!keep) {
      fs.rmSync(s.dataDir, { recursive: true, force: true });
      fs.rmSync(profDir, { recursive: true, force: true });
    }
  }
  process.exit(0);
}

const sides: Side[] = backends.flatMap((b) => sidesOf(b, compare));
const inkwell: InkwellResult[] = sides.map((s) => ({ backend: s.backend, ...(s.commit ? { commit: s.commit } : {}), rounds: [] }));
const goRounds: (Run & { check: GoaccessCheck })[] = [];
const ratios: number[][] = inkwell.map(() => []);

for (let r = 0; r < rounds; r++) {
  // Rotating order: GoAccess first in one round, last in another, so a slow spell of the machine hits all alike.
  const order = [-1, ...sides.map((_, i) => i)];
  const rotated = order.map((_, i) => order[(i + r) % order.length] as number);
  let go: Run | null = null;
  const mine: (InkwellRound | null)[] = sides.map(() => null);
  for (const k of rotated) {
    if (k === -1) {
      const g = await runGoaccess();
      goRounds.push(g);
      go = g;
      log(
        `round ${r + 1}/${rounds} goaccess: ${g.linesPerSecond.toLocaleString('en')} lines/s (${g.wallMs} ms, peak RSS ${g.peakRssMb} MB, CPU ${g.cpuMs} ms)${g.check.ok ? '' : ` CHECK FAILED ${JSON.stringify(g.check)}`}`,
      );
      continue;
    }
    const out = inkwell[k] as InkwellResult;
    if (out.error) continue;
    try {
      const ir = await runInkwell(sides[k] as Side, r === 0 && !out.commit);
      out.rounds.push(ir);
      mine[k] = ir;
      log(
        `round ${r + 1}/${rounds} inkwell-${systemName(out)}: ${ir.linesPerSecond.toLocaleString('en')} lines/s (${ir.wallMs} ms, peak RSS ${ir.peakRssMb} MB, CPU ${ir.cpuMs} ms, database ${ir.databaseMb ?? '-'} MB)` +
          `${ir.exact ? '' : ` NOT EXACT ${JSON.stringify(ir.stats).slice(0, 400)}`}` +
          `${ir.reimport ? `; re-import ${ir.reimport.linesPerSecond.toLocaleString('en')} lines/s, ${ir.reimport.stats.inserted} added, peak RSS ${ir.reimport.peakRssMb} MB` : ''}`,
      );
    } catch (err) {
      out.error = (err as Error).message;
      log(`inkwell-${systemName(out)}: FAILED: ${out.error.slice(0, 800)}`);
    }
  }
  for (let k = 0; k < sides.length; k++) {
    const ir = mine[k];
    if (go && ir) (ratios[k] as number[]).push(ir.linesPerSecond / go.linesPerSecond);
  }
}

const med = (xs: (number | null)[]) => {
  const known = xs.filter((x): x is number => x !== null);
  return known.length ? Math.round(median(known)) : null;
};
const goaccessResult = {
  version: goaccessVersion,
  linesPerSecond: med(goRounds.map((g) => g.linesPerSecond)),
  wallMs: med(goRounds.map((g) => g.wallMs)),
  peakRssMb: med(goRounds.map((g) => g.peakRssMb)),
  cpuMs: med(goRounds.map((g) => g.cpuMs)),
  parsedEveryLine: goRounds.length > 0 && goRounds.every((g) => g.check.ok),
  rounds: goRounds,
};
for (let k = 0; k < inkwell.length; k++) {
  const out = inkwell[k] as InkwellResult;
  if (out.rounds.length === 0) continue;
  out.linesPerSecond = med(out.rounds.map((x) => x.linesPerSecond)) ?? undefined;
  out.wallMs = med(out.rounds.map((x) => x.wallMs)) ?? undefined;
  out.peakRssMb = med(out.rounds.map((x) => x.peakRssMb));
  out.cpuMs = med(out.rounds.map((x) => x.cpuMs));
  out.databaseMb = med(out.rounds.map((x) => x.databaseMb));
  const rs = ratios[k] as number[];
  if (rs.length) out.ratioToGoaccess = round(median(rs), 3);
  out.exact = out.rounds.every((x) => x.exact);
  const re = out.rounds.find((x) => x.reimport)?.reimport;
  out.reimportAddedNothing = re ? re.addedNothing : null;
  out.reimportLinesPerSecond = re ? re.linesPerSecond : null;
}

const ok = goaccessResult.parsedEveryLine && inkwell.every((x) => !x.error && x.exact && (x.commit !== undefined || x.reimportAddedNothing === true));
const result = {
  benchmark: 'import',
  environment: environment(),
  dataset: { name: meta.name, counts: meta.counts, log: path.basename(accessLog.file), lines: accessLog.lines, bytes: accessLog.bytes },
  ...compareNote(compare),
  method: {
    lines: accessLog.lines,
    rounds,
    notes: [
      'Each system runs as its own process from spawn to exit (start-up included), one after the other, the order rotating each round; medians over rounds. ratioToGoaccess is the median of per-round ratios of lines/s.',
      'Peak RSS and CPU: /usr/bin/time (GNU time) of the process, all threads (the CLI also runs its ingest writer and checkpointer threads).',
      `GoAccess: \`goaccess <log> --log-format=COMBINED --no-global-config --no-progress -o report.json\` (${goaccessVersion}); its JSON totals are checked (every line a valid request).`,
      'Inkwell: `inkwell analytics import --project <id> --format combined --json <log>` into a fresh database each round (project created before, untimed); the counts are checked (every line read and stored), and in the first round a second import of the same file on the same database must add nothing (not run for the --compare checkout).',
    ],
  },
  goaccess: goaccessResult,
  inkwell,
  targets: {
    atLeast1_5xGoaccess: inkwell.filter((x) => !x.commit).every((x) => (x.ratioToGoaccess ?? 0) >= 1.5),
    rssUnder300Mb: inkwell.filter((x) => !x.commit).every((x) => x.peakRssMb !== null && x.peakRssMb !== undefined && x.peakRssMb < 300),
  },
  ok,
};
const files = writeResults('import', result, resultsDir);
console.log(`\n${'system'.padEnd(26)}${'lines/s'.padEnd(10)}${'ratio'.padEnd(8)}${'wall ms'.padEnd(10)}${'peak RSS MB'.padEnd(13)}${'CPU ms'.padEnd(9)}checks`);
console.log(
  `${'goaccess'.padEnd(26)}${String(goaccessResult.linesPerSecond).padEnd(10)}${'1'.padEnd(8)}${String(goaccessResult.wallMs).padEnd(10)}${String(goaccessResult.peakRssMb).padEnd(13)}${String(goaccessResult.cpuMs).padEnd(9)}${goaccessResult.parsedEveryLine ? 'every line valid' : 'LINES MISSING'}`,
);
for (const x of inkwell) {
  console.log(
    `${`inkwell-${systemName(x)}`.padEnd(26)}${String(x.linesPerSecond ?? 'FAILED').padEnd(10)}${String(x.ratioToGoaccess ?? '').padEnd(8)}${String(x.wallMs ?? '').padEnd(10)}${String(x.peakRssMb ?? '').padEnd(13)}${String(x.cpuMs ?? '').padEnd(9)}` +
      `${x.error ? 'FAILED' : `${x.exact ? 'exact' : 'NOT EXACT'}, re-import ${x.reimportAddedNothing === null ? 'not run' : x.reimportAddedNothing ? 'added nothing' : 'ADDED EVENTS'}`}`,
  );
}
console.log(`results: ${files.latest}`);
if (!ok) process.exitCode = 1;
