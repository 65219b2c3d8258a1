// Views export benchmark: the 30-day `views` export (totals + every page at limit 250) walked through HTTP, on
// the embedded default and on PostgreSQL, after ingesting the generated dataset through the API. Before each
// timed walk one event outside the window is ingested, so the answer is recomputed (not served from cache).
//
//   npm run bench:views -- [--events 1m] [--runs 5] [--backends sqlite,postgres]
import { BENCH_PG_ADMIN_URL } from './baselines/pg-raw.ts';
import { genArgs, intArg, parseArgs } from './lib/args.ts';
import { ensureDataset, genOptions } from './lib/dataset.ts';
import { ingestDataset, walkExport } from './lib/inkwell-client.ts';
import { environment, writeResults } from './lib/results.ts';
import { type Backend, createProject, freshPgDatabase, type ServiceEnv, startService, tempDir } from './lib/service.ts';
import { round, summarise } from './lib/stats.ts';

const args = parseArgs(process.argv.slice(2));
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const runs = intArg(args, 'runs') ?? 5;
const backends = (args.get('backends') ?? 'sqlite,postgres').split(',') as Backend[];
const { meta, csv } = ensureDataset(genOptions(genArgs(args)), log);
log(`dataset ${meta.name}: ${meta.counts.events.toLocaleString('en')} events, window ${meta.window.dateFrom} … ${meta.window.dateTo} (exclusive)`);

interface Run {
  backend: Backend;
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

const results: Run[] = [];
for (const backend of backends) {
  const out: Run = { backend };
  results.push(out);
  const s: ServiceEnv = { backend, dataDir: tempDir(`views-${backend}`) };
  try {
    if (backend === 'postgres') s.databaseUrl = await freshPgDatabase('bench_inkwell_views', BENCH_PG_ADMIN_URL);
    const project = await createProject(s);
    const svc = await startService(s);
    try {
      const ingest = await ingestDataset(svc.baseUrl, project.projectId, project.adminKey, csv, meta, { concurrency: 4, batchSize: 1000, log });
      log(`inkwell-${backend}: ingested ${ingest.accepted.toLocaleString('en')} events at ${ingest.eventsPerSecond.toLocaleString('en')} events/s`);
      const bump = async () => {
        const r = await fetch(`${svc.baseUrl}/v1/analytics/${project.projectId}/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${project.adminKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ events: [{ path: '/bench-bump', timestamp: `${meta.startDay}T00:00:00.000Z`, visitorId: 'bench-bump' }] }),
        });
        if (r.status !== 202) throw new Error(`bump ingest returned ${r.status}`);
      };
      const walks: number[] = [];
      const firsts: number[] = [];
      const further: number[] = [];
      for (let i = 0; i < runs + 1; i++) {
        await bump();
        const w = await walkExport(svc.baseUrl, project.projectId, project.adminKey, meta.window.dateFrom, meta.window.dateTo, 'views');
        if (out.digest && w.digest !== out.digest) throw new Error(`walk ${i} gave a different answer`);
        if (!w.orderOk) throw new Error('rows are not in SPEC order');
        out.digest = w.digest;
        out.pages = w.pages;
        out.totals = w.result.totals;
        if (i === 0) continue; // warm-up
        walks.push(w.walkMs);
        firsts.push(w.firstPageMs);
        further.push(...w.furtherPageMs);
        log(`inkwell-${backend}: walk ${round(w.walkMs)} ms, first page ${round(w.firstPageMs)} ms, ${w.pages} pages`);
      }
      out.walkMs = summarise(walks);
      out.firstPageMs = summarise(firsts);
      out.furtherPageMedianMs = summarise(further).median;
      out.furtherPageMaxMs = summarise(further).max;
    } finally {
      out.peakRssMb = await svc.stop();
    }
  } catch (err) {
    out.error = (err as Error).message;
    log(`inkwell-${backend}: FAILED: ${out.error.slice(0, 500)}`);
  }
}

const files = writeResults('views', {
  benchmark: 'views',
  environment: environment(),
  dataset: { name: meta.name, counts: meta.counts, window: meta.window },
  method: {
    runs,
    notes: [
      'The dataset ingested through POST /v1/analytics/{projectId}/events (1,000-event batches, 4 at a time) into `inkwell serve` in a child process.',
      'Each timed walk: one event outside the window is ingested first (new data version, so the export is recomputed), then GET /views at limit 250 from offset 0 until hasMore is false; the first walk is a warm-up.',
    ],
  },
  inkwell: results,
});
console.log('system            walk ms    first page ms  further page ms (median/max)  pages  digest');
for (const r of results) {
  console.log(
    `inkwell-${r.backend.padEnd(9)} ${String(r.walkMs?.median ?? 'FAILED').padEnd(11)}${String(r.firstPageMs?.median ?? '').padEnd(15)}${`${r.furtherPageMedianMs ?? ''}/${r.furtherPageMaxMs ?? ''}`.padEnd(30)}${String(r.pages ?? '').padEnd(7)}${(r.digest ?? '').slice(0, 12)}`,
  );
}
console.log(`results: ${files.latest}`);
