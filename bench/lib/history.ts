// One line of bench/results/history.jsonl per benchmark run: when, which code, on what machine, and the headline
// figures of Inkwell and of the baseline measured in the same run. The full result of a run lives only in
// <name>-latest.json until the next run overwrites it, so this line is what later comparisons read.
import { systemName } from './compare.ts';

export type Figure = number | string | boolean | null;
export type Figures = Record<string, Figure>;

export interface HistoryLine {
  bench: string;
  date: string | null;
  /** The commit whose code was measured (for a run against another checkout, that checkout's). */
  commit: string | null;
  /** Whether src/ differed from that commit when the run started. */
  srcDirty: boolean | null;
  cpus: number | null;
  cpuModel: string | null;
  load1: number | null;
  /** The options of the run that change its figures (events, rounds, duration, connections, …). */
  method: Figures;
  /** Per system measured (e.g. `sqlite`, `postgres`, `sqlite@<commit>` for a checkout run in the same rounds). */
  inkwell: Record<string, Figures>;
  /**
   * Per baseline measured in the same run (`bare`, `duckdb`, …), or per backend where each backend's run has its own
   * (jobs: the git commands run next to its jobs; drill: the run without a fault). Empty for views, which has none;
   * for insights, the visitors export's first page measured in the same run (`visitors-export`).
   */
  baseline: Record<string, Figures>;
  note?: string;
}

// Result files are JSON written by the bench scripts; their shape has grown over time, so every read is optional.
type Json = any;

const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);

function scalars(obj: Json): Figures {
  const out: Figures = {};
  for (const [k, v] of Object.entries(obj ?? {})) if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') out[k] = v;
  return out;
}

function analytics(r: Json): Pick<HistoryLine, 'inkwell' | 'baseline'> {
  const inkwell: Record<string, Figures> = {};
  for (const s of r.inkwell ?? []) {
    const cmp = (r.comparisons ?? []).find((c: Json) => c.system === s.system);
    inkwell[s.backend ?? s.system] = {
      walkMs: num(s.walkMs?.median),
      firstPageMs: num(s.firstPageMs?.median),
      furtherPageMs: num(s.furtherPageMs?.median),
      furtherPageMaxMs: num(s.furtherPageMs?.max),
      peakRssMbExport: num(s.peakRssMbExport),
      ingestEventsPerSecond: num(s.ingest?.eventsPerSecond),
      speedupVsDuckdbBest: num(cmp?.speedupVsDuckdbBest),
      speedupVsPgRawBest: num(cmp?.speedupVsPgRawBest),
      digestMatchesBaselines: cmp ? cmp.digestMatchesBaselines === true : null,
      ...(s.error ? { error: String(s.error) } : {}),
    };
  }
  const baseline: Record<string, Figures> = {};
  for (const [name, b] of Object.entries<Json>(r.baselines ?? {})) {
    baseline[name] = b.error
      ? { error: String(b.error) }
      : { bestWalkMs: num(b.best?.walkMs?.median), bestFirstPageMs: num(b.best?.firstPageMs?.median), naiveWalkMs: num(b.naive?.walkMs) };
  }
  return { inkwell, baseline };
}

function ingest(r: Json): Pick<HistoryLine, 'inkwell' | 'baseline'> {
  const inkwell: Record<string, Figures> = {};
  for (const s of r.inkwell ?? [])
    inkwell[systemName(s)] = {
      eventsPerSecond: num(s.eventsPerSecond),
      ratioToBare: num(s.ratioToBare),
      p99Ms: num(s.p99Ms ?? s.load?.latencyMs?.p99),
      cpuUsPerEvent: num(s.cpuUsPerEvent),
      peakRssMb: num(s.peakRssMb),
      importEventsPerSecond: num(s.import?.eventsPerSecond),
    };
  return { inkwell, baseline: { bare: { eventsPerSecond: num(r.bare?.eventsPerSecond), p99Ms: num(r.bare?.load?.latencyMs?.p99) } } };
}

// ingest.ts --page-views: one event per request, per shape and connections, each with its bare route's figures.
function ingestPageViews(r: Json): Pick<HistoryLine, 'inkwell' | 'baseline'> {
  const inkwell: Record<string, Figures> = {};
  for (const s of r.inkwell ?? [])
    inkwell[String(s.name)] = s.error
      ? { error: String(s.error) }
      : {
          requestsPerSecond: num(s.requestsPerSecond),
          ratioToBare: num(s.ratioToBare),
          p50Ms: num(s.p50Ms),
          p99Ms: num(s.p99Ms),
          p99OverCommitP99Ms: num(s.p99OverCommitP99Ms),
          cpuUsPerRequest: num(s.cpuUsPerRequest),
        };
  const baseline: Record<string, Figures> = {};
  for (const [name, b] of Object.entries<Json>(r.bare ?? {}))
    baseline[name] = { requestsPerSecond: num(b.requestsPerSecond), p50Ms: num(b.p50Ms), p99Ms: num(b.p99Ms) };
  if (r.commitLatency)
    baseline.sqliteCommit = { medianMs: num(r.commitLatency.medianMs), p90Ms: num(r.commitLatency.p90Ms), p99Ms: num(r.commitLatency.p99Ms) };
  if (r.commitLatencyUnderLoad)
    baseline.sqliteCommitUnderLoad = {
      medianMs: num(r.commitLatencyUnderLoad.medianMs),
      p90Ms: num(r.commitLatencyUnderLoad.p90Ms),
      p99Ms: num(r.commitLatencyUnderLoad.p99Ms),
      maxMs: num(r.commitLatencyUnderLoad.maxMs),
    };
  return { inkwell, baseline };
}

function api(r: Json): Pick<HistoryLine, 'inkwell' | 'baseline'> {
  const inkwell: Record<string, Figures> = {};
  for (const s of r.inkwell ?? [])
    inkwell[systemName(s)] = {
      requestsPerSecond: num(s.requestsPerSecond),
      ratioToBare: num(s.ratioToBare),
      p99Ms: num(s.p99Ms),
      cpuUsPerRequest: num(s.cpuUsPerRequest),
      pgCpuUsPerRequest: num(s.pgCpuUsPerRequest),
      peakRssMb: num(s.peakRssMb),
    };
  const bare = r.bare ?? {};
  return {
    inkwell,
    baseline: { bare: { requestsPerSecond: num(bare.requestsPerSecond), p99Ms: num(bare.p99Ms), cpuUsPerRequest: num(bare.cpuUsPerRequest) } },
  };
}

function jobs(r: Json): Pick<HistoryLine, 'inkwell' | 'baseline'> {
  const inkwell: Record<string, Figures> = {};
  const baseline: Record<string, Figures> = {};
  for (const s of r.inkwell ?? []) {
    inkwell[systemName(s)] = {
      createToCompletedMs: num(s.sequential?.createToCompletedMs?.median),
      ratioToGit: num(s.ratioToGit),
      ratioToGitReuse: num(s.ratioToGitReuse),
      concurrentCompleted: num(s.concurrent?.completed),
      concurrentJobs: num(s.concurrent?.jobs),
      duplicatedPullRequests: num(s.concurrent?.duplicatedPullRequests),
      jobsPerMinute: num(s.concurrent?.jobsPerMinute),
      peakRssMb: num(s.peakRssMb),
    };
    // The git baselines run next to each backend's jobs (in early runs once before both), so each backend has its own.
    const git = s.gitBaseline ?? r.gitBaseline;
    baseline[systemName(s)] = { gitMs: num(git?.medianMs), gitReusedWorktreeMs: num(s.gitReuseBaseline?.medianMs) };
  }
  return { inkwell, baseline };
}

function views(r: Json): Pick<HistoryLine, 'inkwell' | 'baseline'> {
  const inkwell: Record<string, Figures> = {};
  for (const s of r.inkwell ?? [])
    inkwell[systemName(s)] = {
      walkMs: num(s.walkMs?.median),
      firstPageMs: num(s.firstPageMs?.median),
      furtherPageMs: num(s.furtherPageMedianMs),
      furtherPageMaxMs: num(s.furtherPageMaxMs),
      peakRssMb: num(s.peakRssMb),
      digest: typeof s.digest === 'string' ? s.digest.slice(0, 12) : null,
    };
  return { inkwell, baseline: {} };
}

function drill(r: Json): Pick<HistoryLine, 'inkwell' | 'baseline'> {
  const inkwell: Record<string, Figures> = {};
  const baseline: Record<string, Figures> = {};
  const run = (x: Json): Figures => ({
    acknowledged: num(x?.acknowledged?.total),
    stored: num(x?.stored),
    lost: num(x?.lost),
    duplicated: x?.duplicated ? (num(x.duplicated.pullRequests) ?? 0) + (num(x.duplicated.commits) ?? 0) : null,
    longestStallMs: num(x?.longestStallMs),
    queueMs: num(x?.queueMs),
  });
  for (const s of r.results ?? []) {
    inkwell[systemName(s)] = { ...run(s.crash), faultsInjected: num(s.crash?.faultsInjected), ratioToBaseline: num(s.ratio), ok: s.ok === true };
    baseline[systemName(s)] = run(s.baseline);
  }
  return { inkwell, baseline };
}

// insights.ts: per query, the median over rounds of the request after new data arrived (recomputed), and the cold
// request (first after a restart) where measured.
function insights(r: Json): Pick<HistoryLine, 'inkwell' | 'baseline'> {
  const q = r.inkwell?.queries ?? {};
  const fresh = (name: string) => num(q[name]?.fresh?.median);
  return {
    inkwell: {
      [r.inkwell?.backend ?? 'sqlite']: {
        seriesDayMs: fresh('series-day'),
        seriesDayP95Ms: num(q['series-day']?.fresh?.p95),
        seriesDayColdMs: num(r.inkwell?.cold?.['series-day']),
        seriesWeekMs: fresh('series-week'),
        seriesMonthMs: fresh('series-month'),
        agentsMs: fresh('agents'),
        agentsP95Ms: num(q.agents?.fresh?.p95),
        agentsColdMs: num(r.inkwell?.cold?.agents),
        referrersMs: fresh('referrers'),
        peakRssMb: num(r.inkwell?.peakRssMb),
        verified: typeof r.ok === 'boolean' ? r.ok : null,
        ...(r.inkwell?.error ? { error: String(r.inkwell.error) } : {}),
      },
    },
    baseline: { 'visitors-export': { firstPage30dMs: fresh('visitors-30d'), firstPage90dMs: fresh('visitors-90d') } },
  };
}

// import.ts: `inkwell analytics import` of a combined log against GoAccess on the same log, same rounds.
function importBench(r: Json): Pick<HistoryLine, 'inkwell' | 'baseline'> {
  const inkwell: Record<string, Figures> = {};
  for (const s of r.inkwell ?? [])
    inkwell[systemName(s)] = {
      linesPerSecond: num(s.linesPerSecond),
      ratioToGoaccess: num(s.ratioToGoaccess),
      wallMs: num(s.wallMs),
      peakRssMb: num(s.peakRssMb),
      cpuMs: num(s.cpuMs),
      exact: typeof s.exact === 'boolean' ? s.exact : null,
      reimportAddedNothing: typeof s.reimportAddedNothing === 'boolean' ? s.reimportAddedNothing : null,
      ...(s.error ? { error: String(s.error) } : {}),
    };
  const g = r.goaccess ?? {};
  return {
    inkwell,
    baseline: { goaccess: { linesPerSecond: num(g.linesPerSecond), wallMs: num(g.wallMs), peakRssMb: num(g.peakRssMb), cpuMs: num(g.cpuMs) } },
  };
}

// scale.ts: a year of events per system: bytes per event, exports first after a restart and warm, ingest start/end.
function scale(r: Json): Pick<HistoryLine, 'inkwell' | 'baseline'> {
  const inkwell: Record<string, Figures> = {};
  for (const s of r.inkwell ?? [])
    inkwell[s.backend] = {
      bytesPerEvent: num(s.bytesPerEvent),
      export30dWarmMs: num(s.exports?.['30d']?.warmMs),
      export30dFirstMs: num(s.exports?.['30d']?.firstAfterRestartMs),
      export365dWarmMs: num(s.exports?.['365d']?.warmMs),
      export365dFirstMs: num(s.exports?.['365d']?.firstAfterRestartMs),
      ingestFirstTenthEventsPerSecond: num(s.ingest?.firstTenthEventsPerSecond),
      ingestLastTenthEventsPerSecond: num(s.ingest?.lastTenthEventsPerSecond),
      peakRssMbIngest: num(s.peakRssMbIngest),
      peakRssMbExport: num(s.peakRssMbExport),
      ...(s.error ? { error: String(s.error) } : {}),
    };
  // --compare: the other checkout's exports on the same data, as backend@commit.
  for (const s of r.inkwell ?? [])
    if (s.compare)
      inkwell[`${s.backend}@${s.compare.commit}`] = {
        export30dWarmMs: num(s.compare.exports?.['30d']?.warmMs),
        export30dFirstMs: num(s.compare.exports?.['30d']?.firstAfterRestartMs),
        export365dWarmMs: num(s.compare.exports?.['365d']?.warmMs),
        export365dFirstMs: num(s.compare.exports?.['365d']?.firstAfterRestartMs),
        peakRssMbExport: num(s.compare.peakRssMbExport),
      };
  const d = r.baselines?.duckdb ?? {};
  const p = r.baselines?.pgRaw ?? {};
  return {
    inkwell,
    baseline: {
      duckdb: { bytesPerEvent: num(d.bytesPerEvent), export30dWarmMs: num(d.exports?.['30d']?.warmMs), export365dWarmMs: num(d.exports?.['365d']?.warmMs) },
      'pg-raw': { bytesPerEvent: num(p.bytesPerEvent), export30dWarmMs: num(p.exports?.['30d']?.warmMs), export365dWarmMs: num(p.exports?.['365d']?.warmMs) },
    },
  };
}

const NODE_ALONE = "node -e ''";

function cliStartup(r: Json): Pick<HistoryLine, 'inkwell' | 'baseline'> {
  const inkwell: Record<string, Figures> = {};
  const baseline: Record<string, Figures> = {};
  for (const row of r.results ?? []) {
    const figures = { medianMs: num(row.medianMs), overNodeMs: num(row.overNodeMs) };
    if (row.command === NODE_ALONE) baseline[row.command] = { medianMs: figures.medianMs };
    else inkwell[row.command] = figures;
  }
  return { inkwell, baseline };
}

// segments.ts: the codec alone; the baselines are the dataset's CSV and its rows compressed with zstd in the same run.
function segments(r: Json): Pick<HistoryLine, 'inkwell' | 'baseline'> {
  const i = r.inkwell ?? {};
  return {
    inkwell: {
      segments: {
        liveBytesPerEvent: num(i.liveBytesPerEvent),
        compactedBytesPerEvent: num(i.compactedBytesPerEvent),
        importedCompactedBytesPerEvent: num(i.importedCompactedBytesPerEvent),
        dedupBytesPerEvent: num(i.dedupBytesPerEvent),
        encodeEventsPerSecond: num(i.encodeEventsPerSecond),
        decodeColumnsEventsPerSecond: num(i.decodeColumnsEventsPerSecond),
      },
    },
    baseline: { csv: { bytesPerEvent: num(r.baseline?.csv?.bytesPerEvent) }, csvZstd: { bytesPerEvent: num(r.baseline?.csvZstd?.bytesPerEvent) } },
  };
}

const EXTRACTORS: Record<string, (r: Json) => Pick<HistoryLine, 'inkwell' | 'baseline'>> = {
  analytics,
  ingest,
  'ingest-pageviews': ingestPageViews,
  api,
  jobs,
  views,
  // bench/views.ts --kind visitors: the visitors export walked the same way.
  'views-visitors': views,
  drill,
  'cli-startup': cliStartup,
  insights,
  import: importBench,
  segments,
  scale,
};

/** The history line for one result as the bench scripts write it; `name` is the file name prefix (`api`, `drill`, …). */
export function historyLine(name: string, result: Json): HistoryLine {
  const extract = EXTRACTORS[name];
  if (!extract) throw new Error(`no history summary for benchmark "${name}" (known: ${Object.keys(EXTRACTORS).join(', ')})`);
  const env = result.environment ?? {};
  const method: Figures = scalars(result.method);
  const events = num(result.dataset?.counts?.events);
  if (events !== null) method.events = events;
  else if (typeof result.dataset?.name === 'string') method.dataset = result.dataset.name;
  if (typeof result.compare?.commit === 'string') method.compare = result.compare.commit;
  return {
    bench: name,
    date: typeof env.date === 'string' ? env.date : null,
    commit: typeof env.commit === 'string' ? env.commit : null,
    srcDirty: typeof env.srcDirty === 'boolean' ? env.srcDirty : null,
    cpus: num(env.cpus),
    cpuModel: typeof env.cpuModel === 'string' ? env.cpuModel : null,
    load1: num(env.loadAverage?.[0]),
    method,
    ...withoutNulls(extract(result)),
    ...(typeof result.note === 'string' ? { note: result.note } : {}),
  };
}

// A figure a run did not measure (older runs recorded less) is left out rather than written as null.
function withoutNulls(x: Pick<HistoryLine, 'inkwell' | 'baseline'>): Pick<HistoryLine, 'inkwell' | 'baseline'> {
  const strip = (group: Record<string, Figures>) =>
    Object.fromEntries(Object.entries(group).map(([k, f]) => [k, Object.fromEntries(Object.entries(f).filter(([, v]) => v !== null))]));
  return { inkwell: strip(x.inkwell), baseline: strip(x.baseline) };
}

export function readHistory(text: string): HistoryLine[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as HistoryLine);
}
