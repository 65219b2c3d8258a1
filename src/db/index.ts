// One Kysely instance per process, over better-sqlite3 (embedded default) or pg (DATABASE_URL).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  type PostgresCursor,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
  type SqliteDatabase,
  SqliteDialect,
  sql,
} from 'kysely';
import type pg from 'pg';
import { type DialectCaps, postgresCaps, sqliteCaps } from './dialect.ts';
import { MIGRATIONS } from './migrations/index.ts';
import { binaryCopyRequest, runBinaryCopy } from './pg-copy.ts';
import { type RowShape, runLookup } from './pg-lookup.ts';
import { type BatchRunner, preparedName, registerBatchRunner, registerDirectReader } from './reusable.ts';
import type { DB } from './schema.ts';
import { sqliteDirectReader } from './sqlite-reads.ts';

export type { DialectCaps } from './dialect.ts';
export type { DB } from './schema.ts';

export interface Database {
  readonly kysely: Kysely<DB>;
  readonly caps: DialectCaps;
  /** Where the data lives, without credentials (for logs). */
  readonly description: string;
  /**
   * The file a connection in another thread opens to reach the same data (a SQLite file; undefined for an
   * in-memory database and for PostgreSQL, whose pool is shared instead). See `caps.writerThread`.
   */
  readonly file?: string;
  /**
   * The embedded database's own handle (undefined on PostgreSQL), for src/db/bulk.ts only: it reuses
   * prepared statements inside a Kysely transaction, which Kysely's driver does not.
   */
  readonly sqliteHandle?: SQLite.Database;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** postgres://… or undefined for SQLite. */
  databaseUrl?: string | undefined;
  /** SQLite file path (ignored for PostgreSQL). */
  sqlitePath?: string;
  /** SQLite: WAL pages after which this connection's commit checkpoints (SQLite's default: 1,000; ignored for PostgreSQL). */
  walAutocheckpointPages?: number;
  /** SQLite: this connection's page cache in KiB (default 65,536; ignored for PostgreSQL). */
  sqliteCacheKib?: number;
  /**
   * SQLite: prepared statements kept (default SQLITE_STATEMENT_CACHE_SIZE). Each `in (…)` list length is a
   * statement of its own, up to thousands of parameters, so a large cache holds tens of MB of compiled statements.
   */
  sqliteStatementCache?: number;
  /** PostgreSQL schema to use (tests use one schema per test). */
  pgSchema?: string;
  pgPoolSize?: number;
  /**
   * PostgreSQL: statements of one batchable query (src/db/reusable.ts) in flight at once; calls made
   * meanwhile are combined into the next one.
   */
  pgBatchInFlight?: number;
  /**
   * PostgreSQL: keep the results of batchable queries with the snapshot they were read under, and answer
   * from them while the snapshot is unchanged (src/db/kept-results.ts). Default true.
   */
  pgKeepResults?: boolean;
}

/** The snapshot a PostgreSQL statement reads under, as text (PostgreSQL 13+). */
const PG_SNAPSHOT = 'pg_current_snapshot()::text';

// pg is loaded when a PostgreSQL database is opened, not at import: a CLI command on the embedded database
// does not pay for loading it (about 80 ms of CPU on a loaded machine, bench/cli-startup.ts).
let pgModule: typeof import('pg') | undefined;
const pgLib = (): typeof import('pg') => (pgModule ??= createRequire(import.meta.url)('pg') as typeof import('pg'));

// int8 and numeric come back as JavaScript numbers: our 64-bit values (epoch ms, counts, ids) stay far
// below 2^53.
const toNumber = (v: string) => (v === null ? null : Number(v));
const pgTypes = {
  // Called for every field of every result: one shared parser, no closure per call.
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return toNumber;
    return pgLib().types.getTypeParser(oid, format);
  },
};

/**
 * The pool Kysely runs on: pg's pool, whose clients run a reusable query's compiled text (src/db/reusable.ts)
 * as that query's named prepared statement (`{ name, text, values }`), so each connection parses and plans
 * it once. Every other query runs unnamed, so the per-connection set of prepared statements stays small and
 * fixed; a query whose one parameter is a BinaryCopyRequest runs as a binary COPY (src/db/pg-copy.ts,
 * DialectCaps.selectBinary). The name comes from `preparedName`, which gives one name to exactly one text (pg refuses a name
 * reused for another text on a connection). Kysely calls only `query(text, values)` (no cursor is configured)
 * and `release()`; one wrapper per pg client, so Kysely's per-client connection objects are reused.
 */
function namingPool(pool: pg.Pool): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    function query<R>(text: string, values: readonly unknown[]): Promise<PostgresQueryResult<R>>;
    function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
    function query(text: string | PostgresCursor<unknown>, values?: readonly unknown[]): unknown {
      if (typeof text !== 'string') throw new Error('no cursor is configured for streaming queries');
      const copy = binaryCopyRequest(values);
      if (copy) return runBinaryCopy(client, text, copy);
      const name = preparedName(text);
      return client.query(name ? { name, text, values: values as unknown[] } : { text, values: values as unknown[] });
    }
    // pg-pool sets `release` on the client at every checkout: look it up at call time.
    return { query, release: () => client.release() };
  };
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = wrap(client);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

export function redactUrl(u: string): string {
  try {
    const url = new URL(u);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return 'postgres://(unparseable)';
  }
}

/**
 * No pg error event goes unheard (an unheard 'error' event ends the process). The pool emits one when an
 * idle client loses its connection (the pool replaces it); a client emits one when its connection ends
 * while it is checked out (between the statements of a transaction, or during one), and pg-pool listens to
 * idle clients only. The query that was running, or the next one, reports the failure itself, and the
 * broken client is discarded on release (it is no longer queryable).
 */
function guardPool(pool: pg.Pool): void {
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
}

/**
 * Kysely's SQLite driver, except that a rollback SQLite already did is not an error. On SQLITE_FULL (and
 * some I/O errors) SQLite rolls the transaction back itself; Kysely's ROLLBACK then fails with "cannot
 * rollback - no transaction is active", and that error replaced the one that said the disk was full.
 */
class SqliteDialectKeepingCause extends SqliteDialect {
  override createDriver() {
    const driver = super.createDriver();
    const rollback = driver.rollbackTransaction.bind(driver);
    driver.rollbackTransaction = async (connection) => {
      try {
        await rollback(connection);
      } catch (err) {
        if (!/no transaction is active/.test(String((err as Error)?.message))) throw err;
      }
    };
    return driver;
  }
}

/** Default of `OpenOptions.pgBatchInFlight`: with `npm run bench:api`, 2 beat 1 (bigger batches, more waiting) and matched 3. */
export const PG_BATCH_IN_FLIGHT = 2;

export function openDatabase(opts: OpenOptions): Database {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts) : openSqlite(opts);
}

function openPostgres(url: string, opts: OpenOptions): Database {
  const poolOptions: pg.PoolConfig = {
    connectionString: url,
    types: pgTypes,
    ...(opts.pgSchema ? { options: `-c search_path=${opts.pgSchema}` } : {}),
  };
  const pool = new (pgLib().Pool)({ ...poolOptions, max: opts.pgPoolSize ?? 10 });
  guardPool(pool);
  const kysely = new Kysely<DB>({ dialect: new PostgresDialect({ pool: namingPool(pool) }) });
  let lookupPool: pg.Pool | undefined;
  if (postgresCaps.batchedLookups) {
    const maxInFlight = opts.pgBatchInFlight ?? PG_BATCH_IN_FLIGHT;
    lookupPool = new (pgLib().Pool)({ ...poolOptions, max: maxInFlight });
    guardPool(lookupPool);
    registerBatchRunner(kysely, {
      maxInFlight,
      maxBatch: 256,
      ...(opts.pgKeepResults === false ? {} : { snapshotExpression: PG_SNAPSHOT }),
      run: lookupRunner(lookupPool),
    });
  }
  return {
    kysely,
    caps: postgresCaps,
    description: redactUrl(url) + (opts.pgSchema ? ` (schema ${opts.pgSchema})` : ''),
    close: once(async () => {
      try {
        await kysely.destroy();
      } finally {
        await lookupPool?.end();
      }
    }),
  };
}

/**
 * Runs batchable reusable queries (src/db/reusable.ts) on connections of their own (`lookups`, one per
 * statement in flight), as named prepared statements through a lean query object (src/db/pg-lookup.ts: rows
 * as arrays, made into objects in reusable.ts without the batch's ordinal column). Those connections plan
 * them once (`force_generic_plan`): the planner would otherwise re-plan the combined statement on every run
 * (its generic plan's estimate for `unnest` of an array parameter looks worse than a plan for the actual
 * arrays), which costs more than running it. Only these point lookups run there; every other query keeps the
 * default planning on the main pool.
 */
function lookupRunner(lookups: pg.Pool): BatchRunner['run'] {
  const planned = new WeakSet<pg.PoolClient>();
  const shapes = new Map<string, RowShape>();
  return async (text, values) => {
    const name = preparedName(text);
    if (!name) throw new Error('batch runner: not a reusable query');
    const client = await lookups.connect();
    let broken: Error | undefined;
    try {
      if (!planned.has(client)) {
        await client.query('set plan_cache_mode = force_generic_plan').catch((err: unknown) => {
          // PostgreSQL before 12 has no such setting (and plans these statements as it always did).
          if ((err as { code?: string }).code !== '42704') throw err;
        });
        planned.add(client);
      }
      return await runLookup(client, name, text, values, shapes, pgTypes);
    } catch (err) {
      // A connection-level failure discards the connection; an error of the statement keeps it.
      if (!(err instanceof pgLib().DatabaseError)) broken = err as Error;
      throw err;
    } finally {
      client.release(broken);
    }
  };
}

function openSqlite(opts: OpenOptions): Database {
  const file = opts.sqlitePath ?? ':memory:';
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma('foreign_keys = ON');
  // 64 MiB page cache (default 2 MiB): analytics ingest inserts into large, randomly keyed indexes; with the
  // default cache a 1M-event load runs at half speed.
  sqlite.pragma(`cache_size = -${Math.trunc(opts.sqliteCacheKib ?? 65_536)}`);
  if (opts.walAutocheckpointPages !== undefined) sqlite.pragma(`wal_autocheckpoint = ${Math.trunc(opts.walAutocheckpointPages)}`);
  const kysely = new Kysely<DB>({
    dialect: new SqliteDialectKeepingCause({ database: withStatementCache(sqlite, opts.sqliteStatementCache ?? SQLITE_STATEMENT_CACHE_SIZE) }),
  });
  // Reusable reads (src/db/reusable.ts) run directly on the handle, their results kept while nothing changes
  // (src/db/sqlite-reads.ts: exact freshness, checked on every read).
  registerDirectReader(kysely, sqliteDirectReader(sqlite));
  return {
    kysely,
    caps: sqliteCaps,
    description: file,
    ...(file === ':memory:' ? {} : { file }),
    sqliteHandle: sqlite,
    close: once(() => kysely.destroy()),
  };
}

/** Distinct SQL texts whose prepared statements are kept per SQLite handle (least recently used evicted). */
export const SQLITE_STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely's SQLite driver prepares every statement anew, which costs more than running a point lookup.
 * This wraps the handle so `prepare` returns a cached statement for SQL it has seen (an LRU map by SQL
 * text). Safe with Kysely's driver: its one connection is behind a mutex, so a statement never runs twice
 * at once, and `all`/`run`/finished iterators reset the statement after use.
 */
function withStatementCache(sqlite: SQLite.Database, size: number): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let stmt = cache.get(text);
      if (stmt) {
        // Most recently used last: the first key is the one to evict.
        cache.delete(text);
      } else {
        stmt = sqlite.prepare(text);
        if (cache.size >= size) cache.delete(cache.keys().next().value as string);
      }
      cache.set(text, stmt);
      return stmt;
    },
  };
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let p: Promise<void> | undefined;
  return () => {
    p ??= fn();
    return p;
  };
}

/**
 * Our own small migration runner. Kysely's Migrator checks for its tables by introspecting every schema of
 * the database (`has_schema_privilege` on each), which fails when another schema is dropped at the same
 * moment (parallel test runs, other apps) and reads the whole catalog on every start. This runner only
 * touches its bookkeeping table, `kysely_migration` (Kysely's layout, so databases migrated by it stay
 * compatible), in the current schema.
 *
 * Concurrency: on PostgreSQL a session advisory lock (per schema) serialises processes starting at once and
 * each migration runs in its own transaction; on SQLite the whole run happens inside BEGIN IMMEDIATE, so a
 * second process waits (busy_timeout) and then finds everything applied.
 */
const MIGRATION_TABLE = 'kysely_migration';

async function appliedMigrations(k: Kysely<any>): Promise<Set<string>> {
  const rows = await k.selectFrom(MIGRATION_TABLE).select('name').execute();
  return new Set(rows.map((r: { name: string }) => r.name));
}

async function ensureMigrationTable(k: Kysely<any>): Promise<void> {
  await k.schema
    .createTable(MIGRATION_TABLE)
    .ifNotExists()
    .addColumn('name', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('timestamp', 'varchar(255)', (c) => c.notNull())
    .execute();
}

async function applyPending(k: Kysely<any>, caps: DialectCaps, inTransaction: boolean): Promise<string[]> {
  await ensureMigrationTable(k);
  const done = await appliedMigrations(k);
  const applied: string[] = [];
  for (const [name, up] of Object.entries(MIGRATIONS)) {
    if (done.has(name)) continue;
    const run = async (t: Kysely<any>) => {
      await up(t, caps);
      await t.insertInto(MIGRATION_TABLE).values({ name, timestamp: new Date().toISOString() }).execute();
    };
    if (inTransaction) await run(k);
    else await k.transaction().execute(run);
    applied.push(name);
  }
  return applied;
}

/**
 * Applies every pending migration in order. Idempotent; safe when several processes start at once. When
 * every migration is applied already (each start but the first) it only reads: no lock, no write
 * transaction, so a CLI command neither waits behind a busy service's writer nor makes it wait.
 */
export async function migrate(db: Database): Promise<string[]> {
  if (await migrationsApplied(db)) return [];
  return db.kysely.connection().execute(async (conn) => {
    if (db.caps.name === 'postgres') {
      const lockKey = sql`hashtext('inkwell_migrate:' || current_schema())`;
      await sql`select pg_advisory_lock(${lockKey})`.execute(conn);
      try {
        return await applyPending(conn, db.caps, false);
      } finally {
        await sql`select pg_advisory_unlock(${lockKey})`.execute(conn);
      }
    }
    await sql`begin immediate`.execute(conn);
    try {
      const applied = await applyPending(conn, db.caps, true);
      await sql`commit`.execute(conn);
      return applied;
    } catch (err) {
      await sql`rollback`.execute(conn);
      throw err;
    }
  });
}

/** True when every known migration has been applied (for /readyz). */
export async function migrationsApplied(db: Database): Promise<boolean> {
  try {
    const done = await appliedMigrations(db.kysely);
    return Object.keys(MIGRATIONS).every((m) => done.has(m));
  } catch (err) {
    // No bookkeeping table yet: nothing is applied. Anything else (database unreachable) is the caller's.
    if (/kysely_migration|no such table|does not exist/i.test((err as Error).message)) return false;
    throw err;
  }
}

export async function ping(db: Database): Promise<void> {
  await sql`select 1`.execute(db.kysely);
}

/** Opens the configured database and migrates it. */
export async function openFromConfig(cfg: { databaseUrl: string | undefined; dataDir: string; sqliteCacheMb?: number }): Promise<Database> {
  const db = openDatabase({
    databaseUrl: cfg.databaseUrl,
    sqlitePath: path.join(cfg.dataDir, 'inkwell.db'),
    ...(cfg.sqliteCacheMb !== undefined ? { sqliteCacheKib: cfg.sqliteCacheMb * 1024 } : {}),
  });
  try {
    await migrate(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}
