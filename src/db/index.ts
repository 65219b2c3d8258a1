// One Kysely instance per process, over better-sqlite3 (embedded default) or pg (DATABASE_URL).
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, type Migration, type MigrationProvider, Migrator, PostgresDialect, type SqliteDatabase, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { type DialectCaps, postgresCaps, sqliteCaps } from './dialect.ts';
import { MIGRATIONS } from './migrations/index.ts';
import { preparedName } from './reusable.ts';
import type { DB } from './schema.ts';

export type { DialectCaps } from './dialect.ts';
export type { DB } from './schema.ts';

export interface Database {
  readonly kysely: Kysely<DB>;
  readonly caps: DialectCaps;
  /** Where the data lives, without credentials (for logs). */
  readonly description: string;
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
  /** PostgreSQL schema to use (tests use one schema per test). */
  pgSchema?: string;
  pgPoolSize?: number;
}

// int8 and numeric come back as JavaScript numbers: our 64-bit values (epoch ms, counts, ids) stay far
// below 2^53.
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return (v: string) => (v === null ? null : Number(v));
    return pg.types.getTypeParser(oid, format);
  },
};

/**
 * A pg client that runs the compiled texts of reusable queries (src/db/reusable.ts) as named prepared
 * statements: each connection parses and plans them once. Every other query runs as before (unnamed), so
 * the per-connection set of prepared statements stays small and fixed.
 */
const baseQuery = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
class PreparingClient extends pg.Client {}
(PreparingClient.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (this: pg.Client, ...args: unknown[]) {
  const [text, values] = args;
  if (args.length === 2 && typeof text === 'string' && Array.isArray(values)) {
    const name = preparedName(text);
    if (name) return baseQuery.call(this, { name, text, values });
  }
  return baseQuery.apply(this, args);
};

export function redactUrl(u: string): string {
  try {
    const url = new URL(u);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return 'postgres://(unparseable)';
  }
}

export function openDatabase(opts: OpenOptions): Database {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: opts.pgPoolSize ?? 10,
      types: pgTypes,
      Client: PreparingClient,
      ...(opts.pgSchema ? { options: `-c search_path=${opts.pgSchema}` } : {}),
    });
    pool.on('error', () => {
      // An idle client lost its connection; the pool replaces it. Queries report their own errors.
    });
    const kysely = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return {
      kysely,
      caps: postgresCaps,
      description: redactUrl(opts.databaseUrl) + (opts.pgSchema ? ` (schema ${opts.pgSchema})` : ''),
      close: once(() => kysely.destroy()),
    };
  }
  const file = opts.sqlitePath ?? ':memory:';
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('busy_timeout = 10000');
  sqlite.pragma('foreign_keys = ON');
  // 64 MiB page cache (default 2 MiB): analytics ingest inserts into large, randomly keyed indexes; with the
  // default cache a 1M-event load runs at half speed.
  sqlite.pragma('cache_size = -65536');
  const kysely = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  return { kysely, caps: sqliteCaps, description: file, sqliteHandle: sqlite, close: once(() => kysely.destroy()) };
}

/** Distinct SQL texts whose prepared statements are kept per SQLite handle (least recently used evicted). */
export const SQLITE_STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely's SQLite driver prepares every statement anew, which costs more than running a point lookup.
 * This wraps the handle so `prepare` returns a cached statement for SQL it has seen (an LRU map by SQL
 * text). Safe with Kysely's driver: its one connection is behind a mutex, so a statement never runs twice
 * at once, and `all`/`run`/finished iterators reset the statement after use.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
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
        if (cache.size >= SQLITE_STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
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
 * On PostgreSQL the migration bookkeeping tables are pinned to the schema we work in. Without this,
 * Kysely's existence check looks at every schema of the database: a `kysely_migration` table of
 * another schema (another app, another test) would make it skip creating ours and then fail.
 */
async function migrationSchema(db: Database): Promise<{ migrationTableSchema?: string }> {
  if (db.caps.name !== 'postgres') return {};
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db.kysely);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('PostgreSQL has no current schema: check search_path (the first schema on it must exist)');
  return { migrationTableSchema: schema };
}

/**
 * Kysely takes no migration lock on SQLite (it assumes one connection), so two processes starting on a
 * fresh file at once (`serve` and a CLI command) would both run 0001 and one would fail. On SQLite the
 * whole run happens inside BEGIN IMMEDIATE: the second process waits (busy_timeout), then finds
 * everything applied. It also makes a failed run roll back as a whole.
 */
async function withSqliteWriteLock<T extends { error?: unknown }>(db: Database, run: () => Promise<T>): Promise<T> {
  if (db.caps.name !== 'sqlite') return run();
  await sql`begin immediate`.execute(db.kysely);
  let result: T;
  try {
    result = await run();
  } catch (err) {
    await sql`rollback`.execute(db.kysely);
    throw err;
  }
  await sql.raw(result.error ? 'rollback' : 'commit').execute(db.kysely);
  return result;
}

/** Applies every pending migration. Idempotent; safe to run from several processes at once on PostgreSQL. */
export async function migrate(db: Database): Promise<string[]> {
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const [name, up] of Object.entries(MIGRATIONS)) out[name] = { up: (k) => up(k, db.caps) };
      return out;
    },
  };
  const migrator = new Migrator({ db: db.kysely, provider, ...(await migrationSchema(db)) });
  const { error, results } = await withSqliteWriteLock(db, () => migrator.migrateToLatest());
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** True when every known migration has been applied (for /readyz). */
export async function migrationsApplied(db: Database): Promise<boolean> {
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => Object.fromEntries(Object.keys(MIGRATIONS).map((k) => [k, { up: async () => {} }])) },
    ...(await migrationSchema(db)),
  });
  const all = await migrator.getMigrations();
  return all.every((m) => m.executedAt !== undefined);
}

export async function ping(db: Database): Promise<void> {
  await sql`select 1`.execute(db.kysely);
}

/** Opens the configured database and migrates it. */
export async function openFromConfig(cfg: { databaseUrl: string | undefined; dataDir: string }): Promise<Database> {
  const db = openDatabase({ databaseUrl: cfg.databaseUrl, sqlitePath: path.join(cfg.dataDir, 'inkwell.db') });
  try {
    await migrate(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}
