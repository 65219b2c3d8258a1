// Baseline 1: DuckDB computing the exact export from the raw events (columnar, vectorised, all cores).
// Standalone: `npx tsx bench/baselines/duckdb.ts [--events 200k] [--runs 5] [--naive-pages all|N]`.
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { runBaselineCli } from '../lib/baseline-cli.ts';
import type { DatasetMeta } from '../lib/dataset.ts';
import type { PageRow, Totals } from '../lib/export.ts';
import { type ExportMeasurement, type ExportSource, type MeasureOptions, measureExport } from '../lib/harness.ts';
import { since } from '../lib/stats.ts';

export interface DuckDbBaseline extends ExportSource {
  loadMs: number;
  version: string;
  threads: number;
  close(): void;
}

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** Loads the dataset's columns the export needs into an in-memory DuckDB table (not timed as part of the export). */
export async function openDuckDb(csv: string, meta: DatasetMeta, threads = 2): Promise<DuckDbBaseline> {
  const instance = await DuckDBInstance.create(':memory:', { threads: String(threads) });
  const conn: DuckDBConnection = await instance.connect();
  const t0 = performance.now();
  // The file is in time order, so DuckDB's zone maps let the window scan skip the first 60 days.
  await conn.run(`CREATE TYPE visitor_class AS ENUM ('human', 'ai', 'crawler')`);
  await conn.run(
    `CREATE TABLE events AS
       SELECT ts::TIMESTAMP AS ts, path, visitor::UUID AS visitor, class::visitor_class AS class, q = 1 AS q
       FROM read_csv(${sqlString(csv)}, header = true, delim = ',', quote = '', escape = '',
         columns = {'ts': 'VARCHAR', 'day': 'VARCHAR', 'raw': 'VARCHAR', 'path': 'VARCHAR', 'visitor': 'VARCHAR', 'ua': 'INTEGER',
                    'status': 'INTEGER', 'method': 'VARCHAR', 'accept_md': 'INTEGER', 'class': 'VARCHAR', 'q': 'INTEGER'})`,
  );
  const loadMs = since(t0);
  const version = String((await conn.runAndReadAll('SELECT version()')).getRows()[0]?.[0]);
  // ts strings end in Z (UTC); the window bounds are UTC midnights.
  const where = `q AND ts >= TIMESTAMP '${meta.window.dateFrom} 00:00:00' AND ts < TIMESTAMP '${meta.window.dateTo} 00:00:00'`;
  const counts = `count(DISTINCT visitor) FILTER (WHERE class = 'human') AS human,
                  count(DISTINCT visitor) FILTER (WHERE class = 'ai') AS ai,
                  count(DISTINCT visitor) AS total`;
  const rowsSql = `SELECT path, ${counts} FROM events WHERE ${where} GROUP BY path ORDER BY total DESC, path ASC`;
  const toRows = (rows: unknown[][]): PageRow[] => rows.map((r) => ({ path: String(r[0]), human: Number(r[1]), ai: Number(r[2]), total: Number(r[3]) }));
  return {
    name: 'duckdb',
    loadMs,
    version,
    threads,
    async totals(): Promise<Totals> {
      const r = (await conn.runAndReadAll(`SELECT ${counts} FROM events WHERE ${where}`)).getRows()[0] as unknown[];
      return { human: Number(r[0]), ai: Number(r[1]), total: Number(r[2]) };
    },
    async allRows() {
      return toRows((await conn.runAndReadAll(rowsSql)).getRows() as unknown[][]);
    },
    async pageRows(offset, limit) {
      return toRows((await conn.runAndReadAll(`${rowsSql} LIMIT ${Number(limit)} OFFSET ${Number(offset)}`)).getRows() as unknown[][]);
    },
    close() {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

export async function runDuckDbBaseline(
  csv: string,
  meta: DatasetMeta,
  o: MeasureOptions,
): Promise<ExportMeasurement & { loadMs: number; version: string; threads: number }> {
  const db = await openDuckDb(csv, meta);
  try {
    o.log?.(`duckdb ${db.version}: loaded ${meta.counts.events.toLocaleString('en')} events in ${Math.round(db.loadMs)} ms`);
    const m = await measureExport(db, o);
    return { ...m, loadMs: Math.round(db.loadMs), version: db.version, threads: db.threads };
  } finally {
    db.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runBaselineCli(process.argv.slice(2), runDuckDbBaseline);
