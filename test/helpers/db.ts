// Real databases for tests: a temp SQLite file, or a fresh PostgreSQL schema per test.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, inject } from 'vitest';
import { type Database, migrate, openDatabase } from '../../src/db/index.ts';

export type DialectName = 'sqlite' | 'postgres';
export const DIALECTS: DialectName[] = ['sqlite', 'postgres'];

export function pgUrl(): string | null {
  return inject('pgUrl');
}

export interface TestDb {
  db: Database;
  dialect: DialectName;
  /** Options that reopen the same database (e.g. for a restarted process). */
  reopen(): Database;
  /** For child processes: env vars that point at this database. */
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

export function tempDir(prefix = 'inkwell-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * Opens a fresh, migrated database of the given dialect. `keepResults: false` (PostgreSQL): batchable reads
 * are always read, never answered from kept results (for tests that count statements).
 */
export async function openTestDb(dialect: DialectName, { migrated = true, keepResults = true } = {}): Promise<TestDb> {
  if (dialect === 'sqlite') {
    const dir = tempDir();
    const file = path.join(dir, 'inkwell.db');
    const db = openDatabase({ sqlitePath: file });
    if (migrated) await migrate(db);
    const opened: Database[] = [db];
    return {
      db,
      dialect,
      reopen: () => {
        const d = openDatabase({ sqlitePath: file });
        opened.push(d);
        return d;
      },
      env: { INKWELL_DATA_DIR: dir },
      cleanup: async () => {
        for (const d of opened) await d.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const url = pgUrl();
  if (!url) throw new Error('PostgreSQL is not available');
  // The name carries its creation time, so that global setup only removes schemas left behind long ago,
  // never those of a test run that is going on at the same time (several people share one server).
  const schema = `t_${Date.now().toString(36)}_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema "${schema}"`);
  await admin.end();
  const pgOptions = { databaseUrl: url, pgSchema: schema, pgPoolSize: 5, pgKeepResults: keepResults };
  const db = openDatabase(pgOptions);
  if (migrated) await migrate(db);
  const opened: Database[] = [db];
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return {
    db,
    dialect,
    reopen: () => {
      const d = openDatabase(pgOptions);
      opened.push(d);
      return d;
    },
    env: { DATABASE_URL: u.toString(), INKWELL_DATA_DIR: tempDir() },
    cleanup: async () => {
      for (const d of opened) await d.close();
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`drop schema if exists "${schema}" cascade`);
      await c.end();
    },
  };
}

/**
 * Runs a describe block once per dialect. The PostgreSQL block is skipped, visibly, when no server is
 * reachable (never in CI: global setup fails there instead).
 */
export function describeEachDialect(title: string, fn: (dialect: DialectName) => void): void {
  for (const dialect of DIALECTS) {
    const skip = dialect === 'postgres' && !pgUrl();
    (skip ? describe.skip : describe)(`${title} [${dialect}]`, () => fn(dialect));
  }
}

/** A `projects` row for store-level tests that insert projects directly. */
export const projectRow = (id: string, name: string, createdAt: number, ref = 'main') => ({
  id,
  name,
  repository: `https://example.com/${id}`,
  ref,
  model: null,
  settings: '{}',
  visitor_secret: 's',
  created_at: createdAt,
});
