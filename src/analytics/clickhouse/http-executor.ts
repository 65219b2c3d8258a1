// The production executor (executor.ts): the official client, @clickhouse/client, over HTTP(S).
import { ClickHouseLogLevel, createClient } from '@clickhouse/client';
import { type ClickHouseExecutor, checkDatabaseName, OUTPUT_SETTINGS, type Params, type Settings } from './executor.ts';

export interface ClickHouseServerOptions {
  url: string;
  database: string;
  user?: string | undefined;
  password?: string | undefined;
  /** Per-request timeout (ms). */
  requestTimeoutMs?: number;
}

/** The URL without credentials or query (for messages and logs). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

export function createHttpExecutor(opts: ClickHouseServerOptions): ClickHouseExecutor {
  const database = checkDatabaseName(opts.database);
  const client = createClient({
    url: opts.url,
    database,
    ...(opts.user !== undefined ? { username: opts.user } : {}),
    ...(opts.password !== undefined ? { password: opts.password } : {}),
    request_timeout: opts.requestTimeoutMs ?? 60_000,
    clickhouse_settings: { ...OUTPUT_SETTINGS } as never,
    // Failures reach the caller as errors (and the service's log, redacted); the client's own console logger stays off.
    log: { level: ClickHouseLogLevel.OFF },
  });
  const merged = (settings?: Settings) => ({ ...OUTPUT_SETTINGS, ...settings }) as never;
  return {
    describe: redactUrl(opts.url),
    database,
    async query<T>(sql: string, params: Params = {}, settings?: Settings): Promise<T[]> {
      const rs = await client.query({ query: sql, query_params: params, format: 'JSONEachRow', clickhouse_settings: merged(settings) });
      return (await rs.json()) as T[];
    },
    async command(sql: string, params: Params = {}, settings?: Settings): Promise<void> {
      await client.command({ query: sql, query_params: params, clickhouse_settings: merged(settings) });
    },
    async insert(table: string, rows: readonly Record<string, unknown>[], settings?: Settings): Promise<void> {
      if (rows.length === 0) return;
      // Synchronous insert: the request returns once the part is written (the tables fsync it: migrations.ts).
      await client.insert({ table, values: rows as Record<string, unknown>[], format: 'JSONEachRow', clickhouse_settings: merged(settings) });
    },
    async close(): Promise<void> {
      await client.close();
    },
  };
}

/** A server's database may not exist yet: creates it (through a client bound to `default`). */
export async function ensureServerDatabase(opts: ClickHouseServerOptions): Promise<void> {
  const admin = createHttpExecutor({ ...opts, database: 'default' });
  try {
    await admin.command(`CREATE DATABASE IF NOT EXISTS ${checkDatabaseName(opts.database)}`);
  } finally {
    await admin.close();
  }
}
