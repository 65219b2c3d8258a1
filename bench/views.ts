// Views export benchmark: the 30-day `views` export (totals + every page at limit 250) walked through HTTP, on
// the embedded default and on PostgreSQL, after ingesting the generated dataset through the API. Before each
// timed walk one event outside the window is ingested, so the answer is recomputed (not served from cache).
// --kind visitors walks the visitors export the same way.
//
//   npm run bench:views -- [--events 1m] [--runs 5] [--backends sqlite,postgres] [--kind views|visitors]
//                          [--compare <checkout of an earlier commit>]
//
// --compare also runs each backend's service from another checkout (its own database, the same data): both
// services run at once and their walks alternate, round by round, so a change is measured side by side with the
// code before it. Both must give the same answer.
import { BENCH_PG_ADMIN_URL } from './baselines/pg-raw.ts';
import { genArgs, intArg, parseArgs } from './lib/args.ts';
import { compareFromArgs, compareNote, type Side, sidesOf, systemName } from './lib/compare.ts';
import { ensureDataset, genOptions } from './lib/dataset.ts';
import { ingestDataset, walkExport } from './lib/inkwell-client.ts';
import { environment, errorText, writeResults } from './lib/results.ts';
import { type Backend, type BenchProject, createProject, freshPgDatabase, type RunningService, type ServiceEnv, startService, tempDir } from './lib/service.ts';
import { round, summarise } from './lib/stats.ts';

const args = parseArgs(process.argv.slice(2));
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const runs = intArg(args, 'runs') ?? 5;
const backends = (args.get('backends') ?? 'sqlite,postgres').split(',') as Backend[];
const kind = (args.get('kind') ?? 'views') as 'views' | 'visitors';
if (kind !== 'views' && kind !== 'visitors') throw new Error('--kind must be views or visitors');
const compare = compareFromArgs(args);
const { meta, csv } = ensureDataset(genOptions(genArgs(args)), log);
log(`dataset ${meta.name}: ${meta.counts.events.toLocaleString('en')} events, window ${meta.window.dateFrom} … ${meta.window.dateTo} (exclusive)`);

interface Run {
  backend: Backend;
  /** Set for the service run from the --compare checkout: its commit. */
  commit?: string;
  walkMs?: ReturnType<typeof summarise>;
  firstPageMs?: ReturnType<typeof summarise>;
  furtherPageMedianMs?: number;
  furtherPageMaxMs?: number;
  pages?: number;
  digest?: string;
  totals?: unknown;
  peakRssMb?: number | null;
  error?: string;
}

/** One side's service with the dataset ingested, and what its walks measured so far. */
interface Measured {
  out: Run;
  svc: RunningService;
  project: BenchProject;
  walks: number[];
  firsts: number[];
  further: number[];
}

async function ingested(side: Side, out: Run): Promise<Measured> {
  const s: ServiceEnv = {
    backend: side.backend,
    dataDir: tempDir(`views-${side.backend}`),
    extraEnv: side.env,
    ...(side.repoDir ? { repoDir: side.repoDir } : {}),
  };
  if (side.backend === 'postgres')
    s.databaseUrl = await freshPgDatabase(side.commit ? 'bench_inkwell_views_compare' : 'bench_inkwell_views', BENCH_PG_ADMIN_URL);
  const project = await createProject(s);
  const svc = await startService(s);
  const ingest = await ingestDataset(svc.baseUrl, project.projectId, project.adminKey, csv, meta, { concurrency: 4, batchSize: 1000, log });
  log(`inkwell-${systemName(out)}: ingested ${ingest.accepted.toLocaleString('en')} events at ${ingest.eventsPerSecond.toLocaleString('en')} events/s`);
  return { out, svc, project, walks: [], firsts: [], further: [] };
}

/** Ingests one event outside the window (a new data version, so the next walk recomputes), then walks the export. */
async function bumpAndWalk(m: Measured) {
  const r = await fetch(`${m.svc.baseUrl}/v1/analytics/${m.project.projectId}/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${m.project.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ events: [{ path: '/bench-bump', timestamp: `${meta.startDay}T00:00:00.000Z`, visitorId: 'bench-bump' }] }),
  });
  if (r.status !== 202) throw new Error(`bump ingest returned ${r.status}`);
  return walkExport(m.svc.baseUrl, m.project.projectId, m.project.adminKey, meta.window.dateFrom, meta.window.dateTo, kind);
}

async function benchBackend(backend: Backend): Promise<Run[]> {
  const sides = sidesOf(backend, compare);
  const outs: Run[] = sides.map((side) => ({ backend, ...(side.commit ? { commit: side.commit } : {}) }));
  const measured: Measured[] = [];
  try {
    for (const [i, side] of sides.entries()) measured.push(await ingested(side, outs[i] as Run));
    // Round 0 is a warm-up; the side that walks first alternates.
    for (let i = 0; i < runs + 1; i++) {
      for (let k = 0; k < measured.length; k++) {
        const m = measured[(i + k) % measured.length] as Measured;
        const w = await bumpAndWalk(m);
        if (m.out.digest && w.digest !== m.out.digest) throw new Error(`${systemName(m.out)}: walk ${i} gave a different answer`);
        if (!w.orderOk) throw new Error(`${systemName(m.out)}: rows are not in SPEC order`);
        Object.assign(m.out, { digest: w.digest, pages: w.pages, totals: w.result.totals });
        if (i === 0) continue;
        m.walks.push(w.walkMs);
        m.firsts.push(w.firstPageMs);
        m.further.push(...w.furtherPageMs);
        log(`inkwell-${systemName(m.out)}: walk ${round(w.walkMs)} ms, first page ${round(w.firstPageMs)} ms, ${w.pages} pages`);
      }
    }
    const digests = new Set(outs.map((o) => o.digest));
    if (digests.size > 1) throw new Error(`the compared services gave different answers: ${[...digests].join(' vs ')}`);
    for (const m of measured) {
      const further = summarise(m.further.length ? m.further : [0]);
      Object.assign(m.out, {
        walkMs: summarise(m.walks),
        firstPageMs: summarise(m.firsts),
        furtherPageMedianMs: further.median,
        furtherPageMaxMs: further.max,
      });
    }
  } catch (err) {
    for (const o of outs) o.error ??= errorText(err);
    log(`inkwell-${backend}: FAILED: ${errorText(err).slice(0, 500)}`);
  } finally {
    for (const m of measured) m.out.peakRssMb = await m.svc.stop();
  }
  return outs;
}

const results: Run[] = [];
for (const backend of backends) results.push(...(await benchBackend(backend)));

const files = writeResults(kind === 'views' ? 'views' : 'views-visitors', {
  benchmark: kind === 'views' ? 'views' : 'views-visitors',
  environment: environment(),
  dataset: { name: meta.name, counts: meta.counts, window: meta.window },
  method: {
    runs,
    notes: [
      'The dataset ingested through POST /v1/analytics/{projectId}/events (1,000-event batches, 4 at a time) into `inkwell serve` in a child process.',
      `Each timed walk: one event outside the window is ingested first (new data version, so the export is recomputed), then GET /${kind} at limit 250 from offset 0 until hasMore is false; the first walk is a warm-up.`,
    ],
  },
  inkwell: results,
  ...compareNote(compare),
});
console.log('system                 walk ms    first page ms  further page ms (median/max)  pages  digest');
for (const r of results) {
  console.log(
    `inkwell-${systemName(r).padEnd(22)} ${String(r.walkMs?.median ?? 'FAILED').padEnd(11)}${String(r.firstPageMs?.median ?? '').padEnd(15)}${`${r.furtherPageMedianMs ?? ''}/${r.furtherPageMaxMs ?? ''}`.padEnd(30)}${String(r.pages ?? '').padEnd(7)}${(r.digest ?? '').slice(0, 12)}`,
  );
}
console.log(`results: ${files.latest}`);
