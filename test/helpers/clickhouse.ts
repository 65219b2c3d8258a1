// ClickHouse for tests: chdb (ClickHouse in this process; the devDependency `chdb`) with a fresh database per
// store, or a real server when CLICKHOUSE_URL is set (tests that need one skip without it).
import { randomBytes } from 'node:crypto';
import { createChdbExecutor, dropChdbDatabase } from '../../src/analytics/clickhouse/chdb-executor.ts';
import type { ClickHouseExecutor } from '../../src/analytics/clickhouse/executor.ts';
import { createHttpExecutor, ensureServerDatabase } from '../../src/analytics/clickhouse/http-executor.ts';

export interface TestClickHouse {
  ch: ClickHouseExecutor;
  /** Drops the database. */
  cleanup(): Promise<void>;
}

const freshName = () => `inkwell_test_${Date.now()}_${randomBytes(4).toString('hex')}`;

export function openChdb(): TestClickHouse {
  const name = freshName();
  const ch = createChdbExecutor(name);
  return {
    ch,
    async cleanup() {
      await ch.close();
      await dropChdbDatabase(name);
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
  return {
    ch,
    async cleanup() {
      await ch.command(`DROP DATABASE IF EXISTS ${database}`);
      await ch.close();
    },
  };
}
