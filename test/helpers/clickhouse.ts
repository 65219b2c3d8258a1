// ClickHouse for tests: chdb (ClickHouse in this process; the devDependency `chdb`) with a fresh database per
// store, or a real server when CLICKHOUSE_URL is set (tests that need one skip without it).
import { randomBytes } from 'node:crypto';
import { createChdbExecutor, dropChdbDatabase } from '../../src/analytics/clickhouse/chdb-executor.ts';
import type { ClickHouseExecutor } from '../../src/analytics/clickhouse/executor.ts';
import { createHttpExecutor, ensureServerDatabase } from '../../src/analytics/clickhouse/http-executor.ts';
import { createSqlVisitorNumbering, type VisitorNumbering } from '../../src/analytics/clickhouse/visitor-numbers.ts';
import type { Database } from '../../src/db/index.ts';
import { type DialectName, openTestDb, type TestDb } from './db.ts';

export interface TestClickHouse {
  ch: ClickHouseExecutor;
  /** The SQL database that holds the projects and numbers the visitors (a fresh one: SQLite unless asked). */
  sql: TestDb;
  /** Visitor numbers through `sql` (a store's; another process's is createSqlVisitorNumbering(sql.reopen())). */
  numbering: VisitorNumbering;
  /**
   * Another process's numbering of the same SQL database: its own index and caches; on PostgreSQL its own pool
   * (transactions really concurrent, ordered by the row lock); on SQLite the same connection (better-sqlite3 is
   * synchronous: a second connection in this thread would wait for the first one's lock while blocking it).
   */
  otherNumbering(): VisitorNumbering;
  /** Drops the database. */
  cleanup(): Promise<void>;
}

/**
 * Numbering through `db` for a test whose project ids are made up: the project row the SQL dictionary refers to
 * (a foreign key, as in production, where every project exists) is made on first use.
 */
export function testNumbering(db: Database, opts: Parameters<typeof createSqlVisitorNumbering>[1] = {}): VisitorNumbering {
  const inner = createSqlVisitorNumbering(db, opts);
  const made = new Set<string>();
  return {
    async numbers(projectId, keys) {
      if (!made.has(projectId)) {
        await db.kysely
          .insertInto('projects')
          .values({ id: projectId, name: projectId, repository: 'r', ref: 'main', visitor_secret: 's', created_at: 0 } as never)
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
        made.add(projectId);
      }
      return inner.numbers(projectId, keys);
    },
    clear: () => inner.clear(),
  };
}

const freshName = () => `inkwell_test_${Date.now()}_${randomBytes(4).toString('hex')}`;

export async function openChdb(dialect: DialectName = 'sqlite'): Promise<TestClickHouse> {
  const name = freshName();
  const ch = createChdbExecutor(name);
  const sql = await openTestDb(dialect);
  return {
    ch,
    sql,
    numbering: testNumbering(sql.db),
    otherNumbering: () => testNumbering(dialect === 'postgres' ? sql.reopen() : sql.db),
    async cleanup() {
      await ch.close();
      await dropChdbDatabase(name);
      await sql.cleanup();
    },
  };
}

/** The server of CLICKHOUSE_URL (CLICKHOUSE_USER, CLICKHOUSE_PASSWORD), or null. */
export function clickHouseServerOptions(): { url: string; user?: string; password?: string } | null {
  const url = process.env.CLICKHOUSE_URL;
  if (!url) return null;
  return {
    url,
    ...(process.env.CLICKHOUSE_USER ? { user: process.env.CLICKHOUSE_USER } : {}),
    ...(process.env.CLICKHOUSE_PASSWORD ? { password: process.env.CLICKHOUSE_PASSWORD } : {}),
  };
}

export async function openServer(): Promise<TestClickHouse> {
  const opts = clickHouseServerOptions();
  if (!opts) throw new Error('CLICKHOUSE_URL is not set');
  const database = freshName();
  await ensureServerDatabase({ ...opts, database });
  const ch = createHttpExecutor({ ...opts, database });
  const sql = await openTestDb('sqlite');
  return {
    ch,
    sql,
    numbering: testNumbering(sql.db),
    otherNumbering: () => testNumbering(sql.db),
    async cleanup() {
      await ch.command(`DROP DATABASE IF EXISTS ${database}`);
      await ch.close();
      await sql.cleanup();
    },
  };
}
