// The embedded executor (executor.ts): chdb, ClickHouse inside this process (the npm package `chdb`, a
// devDependency: tests and benchmarks). chdb allows one data directory per process, so every executor of the
// process shares one session; calls are serialised through it and each switches to its own database first
// (`USE`), so several stores (one database each) can share the process.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { type ClickHouseExecutor, checkDatabaseName, OUTPUT_SETTINGS, type Params, type Settings } from './executor.ts';

type ChdbModule = typeof import('chdb');
type Session = InstanceType<ChdbModule['Session']>;

let shared: { chdb: ChdbModule; session: Session; current: string | null; tail: Promise<unknown> } | null = null;

/** Loads chdb (throws when the package or its native library is missing: npm skips optional dependencies silently). */
export function loadChdb(): ChdbModule {
  return createRequire(import.meta.url)('chdb') as ChdbModule;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function sharedSession() {
  if (!shared) {
    const chdb = loadChdb();
    const args = Object.entries(OUTPUT_SETTINGS).map(([k, v]) => `--${k}=${v}`);
    // The engine's data directory: one per process, removed at exit, and — since a process killed by a signal
    // never gets there (test workers are) — those of processes that are gone are removed by the next one.
    for (const name of fs.readdirSync(os.tmpdir())) {
      const m = /^inkwell-chdb-(\d+)$/.exec(name);
      if (m && !alive(Number(m[1]))) fs.rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
    }
    const dir = path.join(os.tmpdir(), `inkwell-chdb-${process.pid}`);
    fs.rmSync(dir, { recursive: true, force: true });
    const session = new chdb.Session(dir, { connectionArgs: args });
    shared = { chdb, session, current: null, tail: Promise.resolve() };
    process.once('exit', () => {
      session.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }
  return shared;
}

/** SET statements for query-level settings (chdb takes no per-query settings), and their undoing. */
function settingsSql(settings: Settings | undefined): { set: string; reset: string } {
  const entries = Object.entries(settings ?? {});
  for (const [k] of entries) if (!/^[a-z_][a-z0-9_]*$/.test(k)) throw new Error(`bad setting name ${k}`);
  return {
    set: entries.map(([k, v]) => `SET ${k} = ${typeof v === 'number' ? v : `'${String(v).replace(/['\\]/g, '\\$&')}'`}`).join('; '),
    reset: entries.map(([k]) => `SET ${k} = DEFAULT`).join('; '),
  };
}

/** An executor over the process's chdb session, bound to `database` (created if missing). */
export function createChdbExecutor(database: string): ClickHouseExecutor {
  const db = checkDatabaseName(database);
  const s = sharedSession();
  let closed = false;
  /** Runs `f` alone on the session, in `db`. */
  function serial<T>(f: (session: Session) => Promise<T>): Promise<T> {
    const run = s.tail.then(async () => {
      if (closed) throw new Error('chdb executor is closed');
      if (s.current !== db) {
        await s.session.queryAsync(`CREATE DATABASE IF NOT EXISTS ${db}`);
        await s.session.queryAsync(`USE ${db}`);
        s.current = db;
      }
      return f(s.session);
    });
    s.tail = run.catch(() => undefined);
    return run;
  }
  async function withSettings<T>(session: Session, settings: Settings | undefined, f: () => Promise<T>): Promise<T> {
    const { set, reset } = settingsSql(settings);
    if (!set) return f();
    await session.queryAsync(set);
    try {
      return await f();
    } finally {
      await session.queryAsync(reset);
    }
  }
  return {
    describe: 'chdb',
    database: db,
    query<T>(sql: string, params: Params = {}, settings?: Settings): Promise<T[]> {
      return serial((session) =>
        withSettings(session, settings, async () => {
          const text = (await session.queryBindAsync(sql, params, { format: 'JSONEachRow' })).text();
          const rows: T[] = [];
          for (const line of text.split('\n')) if (line !== '') rows.push(JSON.parse(line) as T);
          return rows;
        }),
      );
    },
    command(sql: string, params: Params = {}, settings?: Settings): Promise<void> {
      return serial((session) =>
        withSettings(session, settings, async () => {
          await session.queryBindAsync(sql, params);
        }),
      );
    },
    insert(table: string, rows: readonly Record<string, unknown>[], settings?: Settings): Promise<void> {
      if (rows.length === 0) return Promise.resolve();
      const payload = Buffer.from(rows.map((r) => JSON.stringify(r)).join('\n'));
      return serial(async (session) => {
        await session.insert({ table: `${db}.${table}`, values: payload, format: 'JSONEachRow', ...(settings ? { settings } : {}) });
      });
    },
    async close(): Promise<void> {
      closed = true;
    },
  };
}

/** Drops a database of the shared session (tests' cleanup). */
export async function dropChdbDatabase(database: string): Promise<void> {
  const s = sharedSession();
  const db = checkDatabaseName(database);
  const run = s.tail.then(async () => {
    await s.session.queryAsync(`DROP DATABASE IF EXISTS ${db} SYNC`);
    if (s.current === db) {
      await s.session.queryAsync('USE default');
      s.current = 'default';
    }
  });
  s.tail = run.catch(() => undefined);
  await run;
}
