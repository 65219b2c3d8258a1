// Baseline 2: the raw-table approach of a popular open-source analytics tool on PostgreSQL — every page view is
// a row of `website_event` (indexed on website_id, created_at, url_path) and the export is
// `count(distinct session_id)` grouped by url_path over the window, with a human/AI class column added.
// Lives in its own database `bench_raw` (created on first use; loaded once per dataset and reused).
// Standalone: `npx tsx bench/baselines/pg-raw.ts [--events 200k] [--runs 5] [--naive-pages all|N]`.
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { runBaselineCli } from '../lib/baseline-cli.ts';
import type { DatasetMeta } from '../lib/dataset.ts';
import type { PageRow, Totals } from '../lib/export.ts';
import { type ExportMeasurement, type ExportSource, type MeasureOptions, measureExport } from '../lib/harness.ts';
import { since } from '../lib/stats.ts';

export const BENCH_PG_ADMIN_URL = process.env.BENCH_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const RAW_DB = 'bench_raw';
/** Session work_mem for the baseline's queries (the server default, 4MB, makes the sorts spill to disk). */
export const WORK_MEM = process.env.BENCH_PG_WORK_MEM ?? '256MB';
/** The one site of the benchmark (a fixed uuid, as the tool's website_id). */
export const WEBSITE_ID = '0b6c1f4e-5a4f-4c36-9d3e-6a2f6a1f0001';

export function dbUrl(base: string, database: string): string {
  const u = new URL(base);
  u.pathname = `/${database}`;
  return u.toString();
}

/** Creates `name` if missing (connecting through the admin database). */
export async function ensureDatabase(name: string, adminUrl = BENCH_PG_ADMIN_URL): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    const r = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (r.rowCount === 0) await c.query(`CREATE DATABASE "${name.replaceAll('"', '')}"`);
  } finally {
    await c.end();
  }
}

const SCHEMA = `
CREATE TABLE website_event (
  event_id uuid NOT NULL PRIMARY KEY,
  website_id uuid NOT NULL,
  session_id uuid NOT NULL,
  visit_id uuid NOT NULL,
  created_at timestamptz(6) DEFAULT now(),
  url_path varchar(500) NOT NULL,
  url_query varchar(500),
  referrer_path varchar(500),
  referrer_query varchar(500),
  referrer_domain varchar(500),
  page_title varchar(500),
  hostname varchar(100),
  event_type integer NOT NULL DEFAULT 1,
  event_name varchar(50),
  -- Added for the export's split: 0 human, 1 ai, 2 crawler (the tool itself has no such column).
  visitor_class smallint NOT NULL
)`;

async function loadIfNeeded(client: pg.Client, url: string, csv: string, meta: DatasetMeta, log: (m: string) => void): Promise<number | null> {
  await client.query('CREATE TABLE IF NOT EXISTS bench_meta (dataset text NOT NULL, loaded_at timestamptz NOT NULL DEFAULT now())');
  const have = await client.query<{ dataset: string }>('SELECT dataset FROM bench_meta');
  const haveTable = await client.query(`SELECT 1 FROM pg_tables WHERE schemaname = 'public' AND tablename = 'website_event'`);
  const identity = `${meta.name} ${meta.generatedAt}`;
  if (have.rows[0]?.dataset === identity && haveTable.rowCount === 1) return null;
  log(`pg-raw: loading ${meta.counts.events.toLocaleString('en')} events into ${new URL(url).pathname.slice(1)}.website_event (once per dataset)`);
  const t0 = performance.now();
  await client.query('DROP TABLE IF EXISTS website_event');
  await client.query('DROP TABLE IF EXISTS staging');
  await client.query('DELETE FROM bench_meta');
  await client.query(SCHEMA);
  await client.query(
    `CREATE UNLOGGED TABLE staging (ts timestamptz, day date, raw text, path text, visitor uuid, ua int, status int, method text,
       accept_md int, class text, q int)`,
  );
  // COPY through psql (client side), so the server needs no access to the file.
  execFileSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-c', `\\copy staging FROM '${csv.replaceAll("'", "''")}' WITH (FORMAT csv, HEADER true)`], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  log(`pg-raw: copied in ${Math.round(since(t0))} ms`);
  // The tool records each page view with its session; event_type 1 is a page view. Events that are not qualifying
  // views (assets, non-2xx, non-GET, crawlers) are stored with another event_type so the table holds every event.
  await client.query(
    `INSERT INTO website_event (event_id, website_id, session_id, visit_id, created_at, url_path, url_query, hostname, event_type, visitor_class)
     SELECT gen_random_uuid(), $1::uuid, visitor, visitor, ts, left(path, 500),
            nullif(split_part(split_part(raw, '?', 2), '#', 1), ''), 'docs.example.com',
            CASE WHEN q = 1 THEN 1 ELSE 3 END,
            CASE class WHEN 'human' THEN 0 WHEN 'ai' THEN 1 ELSE 2 END
     FROM staging`,
    [WEBSITE_ID],
  );
  await client.query('DROP TABLE staging');
  await client.query('CREATE INDEX website_event_website_id_created_at_url_path_idx ON website_event (website_id, created_at, url_path)');
  await client.query('CREATE INDEX website_event_website_id_session_id_created_at_idx ON website_event (website_id, session_id, created_at)');
  await client.query('VACUUM ANALYZE website_event');
  await client.query('INSERT INTO bench_meta (dataset) VALUES ($1)', [identity]);
  const ms = since(t0);
  log(`pg-raw: loaded and indexed in ${Math.round(ms)} ms`);
  return ms;
}

export interface PgRawBaseline extends ExportSource {
  loadMs: number | null;
  settings: Record<string, string>;
  close(): Promise<void>;
}

/** `database`: where the table lives (default bench_raw; the scale bench keeps its own so neither reloads the other's). */
export async function openPgRaw(csv: string, meta: DatasetMeta, log: (m: string) => void = () => {}, database = RAW_DB): Promise<PgRawBaseline> {
  await ensureDatabase(database);
  const url = dbUrl(BENCH_PG_ADMIN_URL, database);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const loadMs = await loadIfNeeded(client, url, csv, meta, log);
  // At its best: the totals run on a second connection at the same time as the per-path query (each
  // count(DISTINCT) query uses one core), and the session's work_mem lets the sorts stay in memory.
  const second = new pg.Client({ connectionString: url });
  await second.connect();
  for (const c of [client, second]) await c.query(`SET work_mem = '${WORK_MEM.replaceAll("'", '')}'`);
  const settings: Record<string, string> = {};
  for (const s of ['server_version', 'work_mem', 'shared_buffers', 'max_parallel_workers_per_gather', 'effective_cache_size']) {
    settings[s] = String((await client.query(`SHOW ${s}`)).rows[0]?.[s]);
  }
  const params = [WEBSITE_ID, `${meta.window.dateFrom}T00:00:00.000Z`, `${meta.window.dateTo}T00:00:00.000Z`];
  const where = 'website_id = $1 AND created_at >= $2 AND created_at < $3 AND event_type = 1';
  const counts = `count(DISTINCT session_id) FILTER (WHERE visitor_class = 0) AS human,
                  count(DISTINCT session_id) FILTER (WHERE visitor_class = 1) AS ai,
                  count(DISTINCT session_id) AS total`;
  const rowsSql = `SELECT url_path, ${counts} FROM website_event WHERE ${where} GROUP BY url_path ORDER BY total DESC, url_path COLLATE "C" ASC`;
  const toRows = (rows: Record<string, unknown>[]): PageRow[] =>
    rows.map((r) => ({ path: String(r.url_path), human: Number(r.human), ai: Number(r.ai), total: Number(r.total) }));
  return {
    name: 'pg-raw',
    loadMs: loadMs === null ? null : Math.round(loadMs),
    settings,
    concurrentQueries: true,
    async totals(): Promise<Totals> {
      const r = (await second.query(`SELECT ${counts} FROM website_event WHERE ${where}`, params)).rows[0] as Record<string, unknown>;
      return { human: Number(r.human), ai: Number(r.ai), total: Number(r.total) };
    },
    async allRows() {
      return toRows((await client.query(rowsSql, params)).rows);
    },
    async pageRows(offset, limit) {
      return toRows((await client.query(`${rowsSql} LIMIT $4 OFFSET $5`, [...params, limit, offset])).rows);
    },
    async close() {
      await client.end();
      await second.end();
    },
  };
}

export async function runPgRawBaseline(
  csv: string,
  meta: DatasetMeta,
  o: MeasureOptions,
): Promise<ExportMeasurement & { loadMs: number | null; settings: Record<string, string> }> {
  const db = await openPgRaw(csv, meta, o.log);
  try {
    const m = await measureExport(db, o);
    return { ...m, loadMs: db.loadMs, settings: db.settings };
  } finally {
    await db.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runBaselineCli(process.argv.slice(2), runPgRawBaseline);
