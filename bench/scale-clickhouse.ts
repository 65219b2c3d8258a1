// The ClickHouse analytics store in the scale benchmark (bench/scale.ts, --backends …,clickhouse): the service
// built in this process (chdb runs one engine per process) with its analytics on ClickHouse — chdb, or the
// server of CLICKHOUSE_URL — and projects on a temporary SQLite database, served over HTTP like the others.
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createChdbExecutor, dropChdbDatabase } from '../src/analytics/clickhouse/chdb-executor.ts';
import { openClickHouseAnalyticsStore } from '../src/analytics/clickhouse/clickhouse-store.ts';
import type { ClickHouseExecutor } from '../src/analytics/clickhouse/executor.ts';
import { createHttpExecutor, ensureServerDatabase } from '../src/analytics/clickhouse/http-executor.ts';
import { STATE_TABLES } from '../src/analytics/clickhouse/migrations.ts';
import { createSqlVisitorNumbering } from '../src/analytics/clickhouse/visitor-numbers.ts';
import { createAnalyticsService } from '../src/analytics/service.ts';
import { testConfig } from '../src/config.ts';
import { createContext, wireServices } from '../src/context.ts';
import { migrate, openDatabase } from '../src/db/index.ts';
import { buildApp } from '../src/http/app.ts';
import { createLogger } from '../src/lib/logger.ts';
import type { DatasetMeta } from './lib/dataset.ts';
import { walkExport } from './lib/inkwell-client.ts';
import { BENCH_LIMITS_ENV, tempDir } from './lib/service.ts';
import { median, round } from './lib/stats.ts';

type Windows = Record<string, { dateFrom: string; dateTo: string }>;
interface Figures {
  firstAfterRestartMs: number;
  warmMs: number;
  digest: string;
}
type IngestFigures = { eventsPerSecond: number; firstTenthEventsPerSecond: number; lastTenthEventsPerSecond: number; rejected: number };

export async function runClickHouse(o: {
  windows: Windows;
  runs: number;
  meta: DatasetMeta;
  ingest: (baseUrl: string, projectId: string, key: string) => Promise<IngestFigures>;
  bump: (baseUrl: string, projectId: string, key: string) => Promise<void>;
  log: (m: string) => void;
}) {
  const server = process.env.CLICKHOUSE_URL;
  const out: {
    backend: 'clickhouse';
    engine: string;
    ingest?: IngestFigures;
    bytesPerEvent?: number;
    /**
     * Bytes per event of the visitor numbers' dictionary, which lives in the SQL database (the SQLite pages of
     * `analytics_visitor_chunks` and its primary key): part of what the store costs, not in `bytesPerEvent`.
     */
    dictionaryBytesPerEvent?: number;
    /** Compressed bytes of each `events` column per event. */
    columnBytesPerEvent?: Record<string, number>;
    diskMb?: number;
    peakRssMbIngest: null;
    peakRssMbExport: null;
    exports?: Record<string, Figures>;
    error?: string;
  } = { backend: 'clickhouse', engine: server ? 'server' : 'chdb', peakRssMbIngest: null, peakRssMbExport: null };
  const dir = tempDir('scale-clickhouse');
  const database = `bench_scale_${Date.now()}`;
  const opts = server ? { url: server, database, user: process.env.CLICKHOUSE_USER, password: process.env.CLICKHOUSE_PASSWORD } : null;
  const executor = (): ClickHouseExecutor => (opts ? createHttpExecutor(opts) : createChdbExecutor(database));
  const db = openDatabase({ sqlitePath: path.join(dir, 'inkwell.db') });
  await migrate(db);
  const config = testConfig({ dataDir: dir }, { ...BENCH_LIMITS_ENV, LOG_LEVEL: 'warn' });
  const ctx = createContext(config, db, createLogger(config));
  if (opts) await ensureServerDatabase(opts);

  /** The service with a freshly opened ClickHouse store; returns its URL and how to stop it. */
  async function start() {
    const services = await wireServices(ctx);
    await services.analytics.close();
    const store = await openClickHouseAnalyticsStore({ ch: executor(), numbering: createSqlVisitorNumbering(db), now: Date.now });
    services.analytics = createAnalyticsService({ store, projects: ctx.projects, now: ctx.now });
    const app = await buildApp(ctx, services);
    await app.listen({ host: '127.0.0.1', port: 0 });
    return {
      baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
      async stop() {
        await app.close();
        await services.analytics.close();
      },
    };
  }

  try {
    const project = await ctx.projects.createProject({ name: 'Bench', repository: 'https://github.com/acme/docs' });
    const adminKey = (await ctx.projects.createKey({ projectId: project.id, kind: 'admin' })).key;
    const ingestKey = (await ctx.projects.createKey({ projectId: project.id, kind: 'ingest-secret' })).key;
    let svc = await start();
    try {
      out.ingest = await o.ingest(svc.baseUrl, project.id, ingestKey);
      o.log(`inkwell-clickhouse (${out.engine}): ingest ${out.ingest.eventsPerSecond.toLocaleString('en')} events/s`);
    } finally {
      await svc.stop();
    }
    const ch = executor();
    try {
      // Merges settle the parts first (what a server does in the background over time): the events', and the
      // visitor states' (migrations 7 and 8), which each insert adds a part of.
      await ch.command('OPTIMIZE TABLE events FINAL');
      for (const table of STATE_TABLES) {
        const [made] = await ch.query<{ n: string }>('SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = {t:String}', {
          t: table,
        });
        if (Number(made?.n ?? 0) > 0) await ch.command(`OPTIMIZE TABLE ${table} FINAL`);
      }
      const [bytes] = await ch.query<{ b: string }>('SELECT sum(bytes_on_disk) AS b FROM system.parts WHERE database = currentDatabase() AND active');
      const columns = await ch.query<{ name: string; b: string }>(
        "SELECT name, sum(data_compressed_bytes) AS b FROM system.columns WHERE database = currentDatabase() AND table = 'events' GROUP BY name ORDER BY sum(data_compressed_bytes) DESC",
      );
      out.columnBytesPerEvent = Object.fromEntries(columns.map((c) => [c.name, round(Number(c.b) / o.meta.counts.events, 1)]));
      o.log(`inkwell-clickhouse: bytes per event by column: ${JSON.stringify(out.columnBytesPerEvent)}`);
      out.diskMb = Math.round(Number(bytes?.b ?? 0) / 2 ** 20);
      out.bytesPerEvent = round(Number(bytes?.b ?? 0) / o.meta.counts.events, 1);
      const dict = db.sqliteHandle
        ?.prepare("SELECT sum(pgsize) AS b FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = 'analytics_visitor_chunks')")
        .get() as { b: number | null } | undefined;
      out.dictionaryBytesPerEvent = round(Number(dict?.b ?? 0) / o.meta.counts.events, 1);
      o.log(`inkwell-clickhouse: visitor numbers' dictionary in SQLite ${out.dictionaryBytesPerEvent} bytes per event`);
    } finally {
      await ch.close();
    }
    out.exports = {};
    for (const [w, { dateFrom, dateTo }] of Object.entries(o.windows)) {
      svc = await start();
      try {
        const first = await walkExport(svc.baseUrl, project.id, adminKey, dateFrom, dateTo);
        const warm: number[] = [];
        for (let i = 0; i < o.runs; i++) {
          await o.bump(svc.baseUrl, project.id, ingestKey);
          const r = await walkExport(svc.baseUrl, project.id, adminKey, dateFrom, dateTo);
          if (r.digest !== first.digest) throw new Error(`${w} export changed between walks`);
          warm.push(r.walkMs);
        }
        out.exports[w] = { firstAfterRestartMs: Math.round(first.walkMs), warmMs: Math.round(median(warm)), digest: first.digest };
        o.log(`inkwell-clickhouse: ${w} export first ${Math.round(first.walkMs)} ms, warm ${Math.round(median(warm))} ms`);
      } finally {
        await svc.stop();
      }
    }
  } catch (err) {
    out.error = (err as Error).message;
    o.log(`inkwell-clickhouse: FAILED: ${out.error.slice(0, 600)}`);
  } finally {
    if (opts) {
      const ch = createHttpExecutor({ ...opts, database: 'default' });
      await ch.command(`DROP DATABASE IF EXISTS ${database}`).catch(() => undefined);
      await ch.close();
    } else await dropChdbDatabase(database);
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
