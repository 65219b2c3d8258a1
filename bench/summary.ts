// Prints Markdown tables of medians and ratios from bench/results/*-latest.json (for the README):
// `npx tsx bench/summary.ts`.
import fs from 'node:fs';
import path from 'node:path';
import { RESULTS_DIR } from './lib/dataset.ts';

function latest(name: string): any | null {
  const file = path.join(RESULTS_DIR, `${name}-latest.json`);
  return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : null;
}

const fmt = (x: unknown) => (typeof x === 'number' ? x.toLocaleString('en', { maximumFractionDigits: 2 }) : x === undefined || x === null ? '–' : String(x));
const table = (head: string[], rows: unknown[][]) =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(fmt).join(' | ')} |`)].join('\n');
const env = (r: any) =>
  `${r.environment.date.slice(0, 16)}Z, commit ${r.environment.commit}, ${r.environment.cpus} CPUs, load ${r.environment.loadAverage?.[0]}`;

const a = latest('analytics');
if (a) {
  console.log(`### Analytics export (${a.dataset.counts.events.toLocaleString('en')} events, 30-day window; ${env(a)})\n`);
  const rows: unknown[][] = [];
  for (const [name, b] of Object.entries<any>(a.baselines)) {
    if (b.error) rows.push([name, 'failed', '', '', '', '', '']);
    else
      rows.push([`${name} (best)`, b.best.walkMs.median, b.best.firstPageMs.median, b.best.furtherPageMs.median, b.naive?.walkMs, '–', b.digest.slice(0, 12)]);
  }
  for (const r of a.inkwell) {
    if (r.error || !r.walkMs) rows.push([r.system, 'failed', '', '', '', '', '']);
    else
      rows.push([
        r.system,
        r.walkMs.median,
        r.firstPageMs.median,
        `${r.furtherPageMs.median} (max ${r.furtherPageMs.max})`,
        '–',
        Math.max(r.peakRssMbIngest ?? 0, r.peakRssMbExport ?? 0),
        `${r.digest.slice(0, 12)}${r.digest === a.referenceDigest ? ' ✓' : ' ✗'}`,
      ]);
  }
  console.log(table(['system', 'whole export ms', 'first page ms', 'further page ms', 'naive walk ms', 'peak RSS MB', 'digest'], rows));
  console.log('');
  console.log(
    table(
      ['Inkwell', '× faster than DuckDB best', '× faster than raw-table PG best', 'answer identical'],
      a.comparisons.map((c: any) => [c.system, c.speedupVsDuckdbBest, c.speedupVsPgRawBest, c.digestMatchesBaselines ? 'yes' : 'no']),
    ),
  );
  console.log('');
}

const i = latest('ingest');
if (i) {
  console.log(`### Ingest (1,000-event batches, ${i.method.connections} connections, ${i.method.durationS} s; ${env(i)})\n`);
  console.log(
    table(
      ['system', 'events/s', 'ratio to bare', 'p99 ms', 'import events/s'],
      [
        ['bare Fastify route', i.bare.eventsPerSecond, 1, i.bare.load.latencyMs.p99, '–'],
        ...i.inkwell.map((r: any) => [`inkwell-${r.backend}`, r.eventsPerSecond, r.ratioToBare, r.load?.latencyMs.p99, r.import?.eventsPerSecond]),
      ],
    ),
  );
  console.log('');
}

const p = latest('api');
if (p) {
  console.log(`### API: GET job with auth (${p.method.connections} connections, ${p.method.durationS} s; ${env(p)})\n`);
  console.log(
    table(
      ['system', 'req/s', 'p99 ms', 'ratio to bare', 'CPU µs/request: server', 'load generator', 'PostgreSQL server'],
      [
        ['bare Fastify route', p.bare.requestsPerSecond, p.bare.p99Ms, 1, p.bare.cpuUsPerRequest, p.bare.loadGenCpuUsPerRequest, null],
        ...p.inkwell.map((r: any) => [
          `inkwell-${r.backend}`,
          r.requestsPerSecond,
          r.p99Ms,
          r.ratioToBare,
          r.cpuUsPerRequest,
          r.loadGenCpuUsPerRequest,
          r.backend === 'postgres' ? r.pgCpuUsPerRequest : null,
        ]),
      ],
    ),
  );
  console.log('');
}

const pv = latest('ingest-pageviews');
if (pv) {
  console.log(`### Page-view ingest, one event per request (${env(pv)})\n`);
  const bareRows = Object.entries<any>(pv.bare).map(([name, b]) => [name, b.requestsPerSecond, b.p50Ms, b.p99Ms, 1, b.cpuUsPerRequest]);
  const rows = pv.inkwell.map((r: any) => [r.name, r.requestsPerSecond, r.p50Ms, r.p99Ms, r.ratioToBare, r.cpuUsPerRequest]);
  console.log(table(['system', 'req/s', 'p50 ms', 'p99 ms', 'ratio to bare', 'CPU µs/request'], [...bareRows, ...rows]));
  if (pv.commitLatency) console.log(`\nSQLite commit on this disk: median ${pv.commitLatency.medianMs} ms, p99 ${pv.commitLatency.p99Ms} ms`);
  console.log('');
}

const j = latest('jobs');
if (j) {
  console.log(`### Jobs (${j.method.files}-file repository, median of ${j.method.sequentialJobs}; ${j.method.concurrentJobs} concurrent; ${env(j)})\n`);
  console.log(
    table(
      [
        'system',
        'create → completed ms',
        'bare git ms (interleaved)',
        'ratio to bare git',
        'git, reused worktree ms',
        'ratio to it',
        'concurrent completed',
        'duplicated PRs',
        'jobs/min',
      ],
      j.inkwell.map((r: any) => [
        `inkwell-${r.backend}`,
        r.sequential?.createToCompletedMs.median,
        r.gitBaseline?.medianMs,
        r.ratioToGit,
        r.gitReuseBaseline?.medianMs,
        r.ratioToGitReuse,
        r.concurrent ? `${r.concurrent.completed}/${r.concurrent.jobs}` : undefined,
        r.concurrent?.duplicatedPullRequests,
        r.concurrent?.jobsPerMinute,
      ]),
    ),
  );
}
