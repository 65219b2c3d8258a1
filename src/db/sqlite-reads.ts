// Reusable reads (src/db/reusable.ts) on the embedded database: run directly on the better-sqlite3 handle,
// and their results kept for as long as the database has not changed.
//
// Invariant that keeps the kept results exact: a kept result is returned only when a check made after the
// read was asked for finds `PRAGMA data_version` and `total_changes()` where they were when it was read.
// Every commit, by any connection or process, moves one of them. So revoking a key (a committed UPDATE,
// from the API, the CLI or another process) is refused by the very next lookup, as without the cache.
//
// Direct: better-sqlite3 is synchronous, so a statement run while no transaction is open cannot interleave
// with other work; Kysely's connection mutex and promise chain guard nothing then. While a Kysely
// transaction is open (begin … commit spans awaits) the read is refused here and waits its turn through
// Kysely, so it never sees another caller's uncommitted rows.
//
// Kept results, with exact freshness: a read that may be kept (its arguments are strings, finite numbers
// or null) waits for the end of the current turn of the event loop (`setImmediate`). Then, once for all the
// reads that waited, the connection asks SQLite for two counters,
//   - `data_version` (PRAGMA), which changes when any other connection (another process: the CLI revoking
//     a key, a worker process; or another connection of this one: the ingest writer) commits, and
//   - `total_changes()`, the rows this connection itself has inserted, updated or deleted,
// and drops every kept result when either has moved; each read is then answered from a kept result or run
// (and kept). The check is made after every read it answers was asked for, so a kept result is only
// returned when nothing has been committed since it was read and before the read was asked for: a revoked
// key stops working at once, and a job's new status is seen by the next read, as without the cache.
// (Both counters are read by their own prepared statements: the `pragma_data_version` table-valued form
// prepares a PRAGMA on every run.) The counters are read before the reads run, so a commit landing between
// the check and a read can only make its result look older than it is (a needless re-read), never newer.
// Under load the requests parsed in one turn share one check, and their responses go out together, which
// in `npm run bench:api` cost less CPU per request than answering each at once (bench/README.md).
// A transaction opened on this connection before the turn ends hands the waiting reads back (they go
// through Kysely, after it). Not seen by the counters: schema changes made on this same connection
// (migrations run before serving).
import type SQLite from 'better-sqlite3';
import { KEPT_RESULTS_PER_STATEMENT, keyOf } from './kept-results.ts';
import { type DirectReader, rowBuilder } from './reusable.ts';

type Row = Readonly<Record<string, unknown>>;

interface Statement {
  stmt: SQLite.Statement;
  /** Builds a row object from the array better-sqlite3 returns in raw mode (one object shape per statement). */
  row: (values: readonly unknown[]) => Row;
  kept: Map<string, readonly Row[]>;
}

/** A keepable read waiting for the turn's check (undefined: run it through Kysely instead). */
interface Waiting {
  s: Statement;
  parameters: readonly unknown[];
  key: string;
  resolve(rows: unknown[] | undefined): void;
  reject(err: unknown): void;
}

export interface SqliteDirectReader extends DirectReader {
  /** Reads run on the database, reads answered from kept results, and checks of the counters, so far. */
  readonly stats: { reads: number; kept: number; checks: number };
  /** Results kept right now, over all statements. */
  keptResults(): number;
}

/**
 * The direct reader of `sqlite` (see the top of this file). `keep: false` runs every read (no kept results).
 * Longer than most functions because it is a factory: its closures (statementFor, run, answer, read; each
 * under 40 lines) share the reader's statements, counters and waiting reads.
 */
export function sqliteDirectReader(sqlite: SQLite.Database, opts: { keep?: boolean } = {}): SqliteDirectReader {
  const keep = opts.keep ?? true;
  const statements = new Map<string, Statement | null>();
  const dataVersion = sqlite.prepare('pragma data_version').pluck();
  const totalChanges = sqlite.prepare('select total_changes()').pluck();
  let version = -1;
  let changes = -1;
  const stats = { reads: 0, kept: 0, checks: 0 };
  let waiting: Waiting[] = [];
  let scheduled = false;

  const statementFor = (text: string): Statement | null => {
    let s = statements.get(text);
    if (s === undefined) {
      const stmt = sqlite.prepare(text);
      s = stmt.reader ? { stmt: stmt.raw(true), row: rowBuilder(stmt.columns().map((c) => c.name)), kept: new Map() } : null;
      statements.set(text, s);
    }
    return s;
  };

  const run = (s: Statement, parameters: readonly unknown[], key: string | undefined): unknown[] => {
    stats.reads++;
    const values = s.stmt.all(parameters as unknown[]) as unknown[][];
    const rows = new Array<Row>(values.length);
    for (let r = 0; r < values.length; r++) rows[r] = Object.freeze(s.row(values[r] as unknown[]));
    if (key !== undefined) {
      if (s.kept.size >= KEPT_RESULTS_PER_STATEMENT) s.kept.clear();
      s.kept.set(key, Object.freeze(rows));
    }
    return rows as unknown[];
  };

  // The reads that waited for this turn of the event loop: one check of the counters for all of them, made
  // after every one of them was asked for.
  const answer = (): void => {
    scheduled = false;
    const now = waiting;
    waiting = [];
    // A transaction was opened meanwhile: these reads go through Kysely, after it.
    if (sqlite.inTransaction) {
      for (const w of now) w.resolve(undefined);
      return;
    }
    try {
      stats.checks++;
      const v = dataVersion.get() as number;
      const c = totalChanges.get() as number;
      if (v !== version || c !== changes) {
        for (const other of statements.values()) other?.kept.clear();
        version = v;
        changes = c;
      }
    } catch (err) {
      for (const w of now) w.reject(err);
      return;
    }
    for (const w of now) {
      const hit = w.s.kept.get(w.key);
      if (hit) {
        stats.kept++;
        w.resolve(hit as unknown[]);
        continue;
      }
      try {
        w.resolve(run(w.s, w.parameters, w.key));
      } catch (err) {
        w.reject(err);
      }
    }
  };

  const read = (text: string, parameters: readonly unknown[]): unknown[] | Promise<unknown[] | undefined> | undefined => {
    if (sqlite.inTransaction) return undefined;
    const s = statementFor(text);
    if (!s) return undefined;
    const key = keep ? keyOf(parameters) : undefined;
    if (key === undefined) return run(s, parameters, undefined);
    return new Promise<unknown[] | undefined>((resolve, reject) => {
      waiting.push({ s, parameters, key, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(answer);
      }
    });
  };
  const keptResults = () => {
    let n = 0;
    for (const st of statements.values()) n += st?.kept.size ?? 0;
    return n;
  };
  return Object.assign(read, { stats, keptResults });
}
