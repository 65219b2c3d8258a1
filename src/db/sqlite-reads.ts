// Reusable reads (src/db/reusable.ts) on the embedded database: run directly on the better-sqlite3 handle,
// and their results kept for as long as the database has not changed.
//
// Direct: better-sqlite3 is synchronous, so a statement run while no transaction is open cannot interleave
// with other work; Kysely's connection mutex and promise chain guard nothing then. While a Kysely
// transaction is open (begin … commit spans awaits) the read is refused here and waits its turn through
// Kysely, so it never sees another caller's uncommitted rows.
//
// Kept results, with exact freshness: before every read the connection asks SQLite for two counters,
//   - `data_version` (PRAGMA), which changes when any other connection (another process: the CLI revoking
//     a key, a worker process; or another connection of this one: the ingest writer) commits, and
//   - `total_changes()`, the rows this connection itself has inserted, updated or deleted,
// and drops every kept result when either has moved. A kept result is therefore only returned when nothing
// has been committed since it was read: a revoked key stops working at once, and a job's new status is
// seen by the next read, as without the cache. The check costs about a third of the key + job read it
// replaces on the hot GET job path, and none of the row building. (Both counters are read by their own
// prepared statements: the `pragma_data_version` table-valued form prepares a PRAGMA on every run.)
// A result is stamped with the counters read *before* its query ran, so a commit landing between the check
// and the query can only make it look older than it is (a needless re-read), never newer.
// Not seen by the counters: schema changes made on this same connection (migrations run before serving).
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

export interface SqliteDirectReader extends DirectReader {
  /** Reads run on the database, and reads answered from kept results, so far. */
  readonly stats: { reads: number; kept: number };
  /** Results kept right now, over all statements. */
  keptResults(): number;
}

/** The direct reader of `sqlite` (see the top of this file). `keep: false` runs every read (no kept results). */
export function sqliteDirectReader(sqlite: SQLite.Database, opts: { keep?: boolean } = {}): SqliteDirectReader {
  const keep = opts.keep ?? true;
  const statements = new Map<string, Statement | null>();
  const dataVersion = sqlite.prepare('pragma data_version').pluck();
  const totalChanges = sqlite.prepare('select total_changes()').pluck();
  let version = -1;
  let changes = -1;
  const stats = { reads: 0, kept: 0 };

  const read = (text: string, parameters: readonly unknown[]): unknown[] | undefined => {
    if (sqlite.inTransaction) return undefined;
    let s = statements.get(text);
    if (s === undefined) {
      const stmt = sqlite.prepare(text);
      s = stmt.reader ? { stmt: stmt.raw(true), row: rowBuilder(stmt.columns().map((c) => c.name)), kept: new Map() } : null;
      statements.set(text, s);
    }
    if (!s) return undefined;
    const key = keep ? keyOf(parameters) : undefined;
    if (key !== undefined) {
      const v = dataVersion.get() as number;
      const c = totalChanges.get() as number;
      if (v !== version || c !== changes) {
        for (const other of statements.values()) other?.kept.clear();
        version = v;
        changes = c;
      } else {
        const hit = s.kept.get(key);
        if (hit) {
          stats.kept++;
          return hit as unknown[];
        }
      }
    }
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
  const keptResults = () => {
    let n = 0;
    for (const st of statements.values()) n += st?.kept.size ?? 0;
    return n;
  };
  return Object.assign(read, { stats, keptResults });
}
