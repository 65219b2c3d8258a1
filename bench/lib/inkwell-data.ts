// An Inkwell data directory (and, on PostgreSQL, database) holding the benchmark dataset, ingested through the
// HTTP API, shared by the benchmarks that read analytics back (run-analytics.ts, insights.ts).
//
// With `reuse`, the ingested data is kept in bench/.data/<name>-<backend>/ with a state file naming the dataset,
// and later runs of the same dataset skip the ingest (migrations still run when the service starts). Each bench
// passes its own `name`, so one bench's extra writes (the export bench's bump events) never reach another's data.
import fs from 'node:fs';
import path from 'node:path';
import { DATA_DIR, type DatasetMeta } from './dataset.ts';
import { type IngestStats, ingestDataset } from './inkwell-client.ts';
import { type Backend, type BenchProject, createProject, type ServiceEnv, startService, tempDir } from './service.ts';

interface ReuseState {
  dataset: string;
  dataDir: string;
  databaseUrl?: string;
  project: BenchProject;
}

export interface InkwellData {
  /** `<name>-<backend>`, used in log lines and file names. */
  label: string;
  backend: Backend;
  dataDir: string;
  service: ServiceEnv;
  reuse: boolean;
  keep: boolean;
  stateFile: string;
  /** The state of an earlier run's data of the same dataset, when it can be reused. */
  reusable: ReuseState | null;
}

/** Chooses the data directory: the kept one of an earlier run (reuse), a fixed one to keep (reuse), or a temporary one. */
export function inkwellData(o: { name: string; backend: Backend; meta: DatasetMeta; reuse: boolean; keep: boolean }): InkwellData {
  const label = `${o.name}-${o.backend}`;
  const stateFile = path.join(DATA_DIR, `${o.name}-state-${o.backend}.json`);
  const state = o.reuse && fs.existsSync(stateFile) ? (JSON.parse(fs.readFileSync(stateFile, 'utf8')) as ReuseState) : null;
  const reusable = state !== null && state.dataset === datasetKey(o.meta) && fs.existsSync(state.dataDir) ? state : null;
  const dataDir = reusable ? reusable.dataDir : o.reuse ? path.join(DATA_DIR, label) : tempDir(label);
  return { label, backend: o.backend, dataDir, service: { backend: o.backend, dataDir }, reuse: o.reuse, keep: o.keep, stateFile, reusable };
}

const datasetKey = (meta: DatasetMeta) => `${meta.name} ${meta.generatedAt}`;

/** What loading recorded; filled in as it goes, so a failed ingest still reports the service's peak RSS. */
export interface LoadRecord {
  /** The ingest was skipped: data from an earlier run of the same dataset (reuse). */
  reusedIngest?: boolean;
  ingest?: IngestStats;
  peakRssMbIngest?: number | null;
}

/**
 * Creates a project and admin key and ingests every event of the dataset through
 * `POST /v1/analytics/{projectId}/events` (1,000 per request, `concurrency` in flight) into a service started for
 * it and stopped afterwards; or, when reusable, returns the earlier run's project without ingesting.
 */
export async function loadInkwellData(
  d: InkwellData,
  o: { meta: DatasetMeta; csv: string; concurrency: number; log: (m: string) => void; databaseUrl?: () => Promise<string> },
  out: LoadRecord,
): Promise<BenchProject> {
  const s = d.service;
  if (d.reusable) {
    if (d.reusable.databaseUrl) s.databaseUrl = d.reusable.databaseUrl;
    out.reusedIngest = true;
    o.log(`${d.label}: reusing ingested data (${d.dataDir}${s.databaseUrl ? `, ${s.databaseUrl}` : ''})`);
    return d.reusable.project;
  }
  if (d.reuse) {
    fs.rmSync(d.dataDir, { recursive: true, force: true });
    fs.mkdirSync(d.dataDir, { recursive: true });
  }
  if (d.backend === 'postgres') {
    if (!o.databaseUrl) throw new Error(`${d.label}: no PostgreSQL database given`);
    s.databaseUrl = await o.databaseUrl();
  }
  const project = await createProject(s);
  o.log(`${d.label}: project ${project.projectId}, data ${d.backend === 'sqlite' ? d.dataDir : s.databaseUrl}`);
  const svc = await startService(s);
  try {
    const ingest = await ingestDataset(svc.baseUrl, project.projectId, project.adminKey, o.csv, o.meta, {
      concurrency: o.concurrency,
      batchSize: 1000,
      log: o.log,
    });
    out.ingest = ingest;
    o.log(
      `${d.label}: ingested ${ingest.accepted.toLocaleString('en')} events (${ingest.rejected} rejected) at ${ingest.eventsPerSecond.toLocaleString('en')} events/s`,
    );
    if (ingest.rejected > 0) o.log(`${d.label}: first rejections ${JSON.stringify(ingest.firstRejections).slice(0, 800)}`);
  } finally {
    out.peakRssMbIngest = await svc.stop();
  }
  if (d.reuse) {
    const saved: ReuseState = { dataset: datasetKey(o.meta), dataDir: d.dataDir, project, ...(s.databaseUrl ? { databaseUrl: s.databaseUrl } : {}) };
    fs.writeFileSync(d.stateFile, `${JSON.stringify(saved, null, 2)}\n`);
  }
  return project;
}

/** At the end of a run: keeps the data (reuse, keep) or removes it. */
export function releaseInkwellData(d: InkwellData, log: (m: string) => void): void {
  if (d.reuse) log(`${d.label}: data kept for --reuse in ${d.dataDir}`);
  else if (d.keep) log(`${d.label}: kept data in ${d.dataDir}`);
  else fs.rmSync(d.dataDir, { recursive: true, force: true });
}
