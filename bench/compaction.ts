// Compaction under ingest (`npm run bench:compaction`): what one-event ingest (page-view shaped) gets while the
// SQL store compacts a large complete day, against the same load without compaction, in the same process.
//
//   npm run bench:compaction -- [--segments 200] [--per 1000] [--reps 3] [--loops 20] [--compare <checkout>]
//   npm run bench:compaction -- --work seal [--days 64] [--segments 2] [--per 50] …   (the summary sealer instead)
//
// Each run (a child process over a fresh SQLite file, the store as the service builds it, ingest worker included)
// fills one past day with --segments segments of --per events, then alternates: --loops concurrent loops of one-event
// ingests for a fixed time (no compaction), then the same loops while `compact()` merges the day (refilled between
// reps). With --work seal, --days past days are filled instead and the work is sealing every one's summary
// (`summaries.sealAll()`, as close() does; the sealer's batches write the same way). Printed per run: ingests/s, latency p50/p99/max, and the compaction's duration. --compare runs the same
// from another checkout's sources, alternating with this one (A B A B …), so both see the same machine load.
// Nothing is written to bench/results: the figures go to bench/README.md (Decisions, "Compaction off the serving thread").
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { intArg, parseArgs } from './lib/args.ts';
import { median, round } from './lib/stats.ts';

const args = parseArgs(process.argv.slice(2));
const SEAL = args.get('work') === 'seal';
const SEGMENTS = intArg(args, 'segments') ?? (SEAL ? 2 : 200);
const PER = intArg(args, 'per') ?? (SEAL ? 50 : 1000);
const LOOPS = intArg(args, 'loops') ?? 20;
const DAYS = SEAL ? (intArg(args, 'days') ?? 64) : 1;
const DAY = Date.UTC(2026, 4, 1);
const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0';

interface Phase {
  ms: number;
  ingests: number;
  perS: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}
interface RunResult {
  without: Phase;
  during: Phase & { merged: number };
}

const q = (a: number[], f: number) => round([...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(a.length * f))] as number, 1);

/** One run, from the sources of `repo`: a fresh database, the day filled, then the two phases. */
async function child(repo: string): Promise<RunResult> {
  const imp = (p: string) => import(pathToFileURL(path.join(repo, p)).href);
  const { openDatabase, migrate } = await imp('src/db/index.ts');
  const { createSqlAnalyticsStore } = await imp('src/analytics/store/sql-analytics-store.ts');
  const { createAnalyticsService } = await imp('src/analytics/service.ts');
  const { testConfig } = await imp('src/config.ts');
  const { createProjectService } = await imp('src/projects/service.ts');
  const { createProjectsStore } = await imp('src/projects/store.ts');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-compaction-'));
  const db = openDatabase({ sqlitePath: path.join(dir, 'inkwell.db') });
  try {
    await migrate(db);
    const projects = createProjectService(createProjectsStore(db.kysely));
    const store = createSqlAnalyticsStore({ config: testConfig(), db, now: Date.now });
    const svc = createAnalyticsService({ store, projects, now: Date.now });
    const p = await projects.createProject({ name: 'compaction', repository: 'r' });
    let k = 0;
    const ev = (ts: number) => ({ path: `/docs/p${k % 5000}`, timestamp: new Date(ts).toISOString(), userAgent: UA, visitorId: `v${k++ % 20000}` });
    for (let d = 0; d < DAYS; d++) {
      const day = DAY - d * 86_400_000;
      for (let s = 0; s < SEGMENTS; s++) {
        await svc.ingest.ingest(
          p.id,
          Array.from({ length: PER }, (_, i) => ev(day + (((s * PER + i) * 97) % 86_400_000))),
          { source: 'api' },
        );
      }
    }
    const load = async (until: Promise<unknown>): Promise<Phase> => {
      let done = false;
      void until.then(() => {
        done = true;
      });
      const lat: number[] = [];
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: LOOPS }, async () => {
          while (!done) {
            const s = performance.now();
            await svc.ingest.ingest(p.id, [ev(Date.now())], { source: 'api' });
            lat.push(performance.now() - s);
          }
        }),
      );
      const ms = performance.now() - t0;
      return { ms: Math.round(ms), ingests: lat.length, perS: Math.round((lat.length / ms) * 1000), p50Ms: q(lat, 0.5), p99Ms: q(lat, 0.99), maxMs: q(lat, 1) };
    };
    // Warm-up (the worker thread, caches), then the load alone for 1.5 s, then the load while the day is compacted.
    await load(new Promise((r) => setTimeout(r, 500)));
    const without = await load(new Promise((r) => setTimeout(r, 1500)));
    let merged = 0;
    const during = await load(
      (SEAL ? store.summaries.sealAll() : store.compact()).then((m: number) => {
        merged = m;
      }),
    );
    await svc.store.close();
    return { without, during: { ...during, merged } };
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const childRepo = args.get('child');
if (childRepo) {
  process.stdout.write(`${JSON.stringify(await child(childRepo))}\n`);
  process.exit(0);
}

const self = fileURLToPath(import.meta.url);
const here = path.resolve(path.dirname(self), '..');
const compare = args.get('compare');
const reps = Math.max(1, intArg(args, 'reps') ?? 3);
const sides = [{ label: 'this checkout', repo: here }, ...(compare ? [{ label: `compare ${path.resolve(compare)}`, repo: path.resolve(compare) }] : [])];
const results = new Map<string, RunResult[]>(sides.map((s) => [s.label, []]));
const show = (p: Phase) => `${p.perS}/s, p50 ${p.p50Ms} p99 ${p.p99Ms} max ${p.maxMs} ms`;
for (let r = 0; r < reps; r++) {
  for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
    const forwarded = ['segments', 'per', 'loops', 'work', 'days'].flatMap((a) => (args.has(a) ? [`--${a}`, String(args.get(a))] : []));
    const out = execFileSync(process.execPath, ['--import', 'tsx', self, '--child', side.repo, ...forwarded], {
      cwd: here,
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    });
    const res = JSON.parse(out.trim().split('\n').at(-1) as string) as RunResult;
    results.get(side.label)?.push(res);
    console.log(
      `[rep ${r + 1}/${reps}] ${side.label}: without ${show(res.without)}; during ${SEAL ? 'sealing' : 'compaction'} (${res.during.merged} ${SEAL ? 'days' : 'segments'}, ${res.during.ms} ms) ${show(res.during)}; load ${os.loadavg()[0]?.toFixed(1)}`,
    );
  }
}
console.log(
  `\n${SEGMENTS} segments x ${PER} events on ${DAYS} past day(s), ${SEAL ? 'sealed' : 'compacted'}, ${LOOPS} loops of one-event ingest; medians over ${reps} runs`,
);
for (const [label, rs] of results) {
  const m = (f: (x: RunResult) => number) => median(rs.map(f));
  console.log(
    `${label}: without ${m((x) => x.without.perS)}/s p99 ${m((x) => x.without.p99Ms)} ms | during ${m((x) => x.during.perS)}/s p99 ${m((x) => x.during.p99Ms)} max ${m((x) => x.during.maxMs)} ms, the work took ${m((x) => x.during.ms)} ms`,
  );
}
