// Dialect differences live here as capability flags, and nowhere else (ARCHITECTURE principle 3).
import { type ColumnDefinitionBuilder, CompiledQuery, type CreateTableBuilder, type Kysely, type RawBuilder, sql } from 'kysely';
import { type BinaryColumns, type BinaryRow, binaryCopyQuery } from './pg-copy.ts';

export interface DialectCaps {
  /** For logs and metrics only: never branch on it outside src/db. */
  readonly name: 'sqlite' | 'postgres';
  /** `SELECT … FOR UPDATE SKIP LOCKED` is available (queue claims across processes). */
  readonly skipLocked: boolean;
  /** Several processes may write at once with row-level locking (false: one writer at a time). */
  readonly concurrentWriters: boolean;
  /** Type name for a 64-bit integer column. */
  readonly bigintType: 'integer' | 'bigint';
  /** Adds an auto-increment 64-bit primary key column named `name`. */
  autoIdColumn<T extends string, C extends string>(t: CreateTableBuilder<T, C>, name: string): CreateTableBuilder<T, C>;
  /**
   * After rows were inserted into an autoIdColumn table with explicit ids (a migration copying a table): makes
   * the ids generated next larger than every stored one. SQLite's AUTOINCREMENT follows explicit ids itself; a
   * PostgreSQL sequence is set past the largest.
   */
  continueAutoIds(db: Kysely<any>, table: string, column: string): Promise<void>;
  /** Largest number of bound parameters one statement may carry. */
  readonly maxParams: number;
  /** A table whose primary key covers every column can be stored as that key alone (SQLite `WITHOUT ROWID`). */
  readonly withoutRowid: boolean;
  /** Type name for a binary column (read back as a Buffer). */
  readonly blobType: 'blob' | 'bytea';
  /**
   * Large binary values read in bulk (the day summaries' blobs): runs `query`, a select, and returns its rows with
   * the named columns alone, each an integer (a number) or bytes (`columns`: name → kind; none null).
   * SQLite hands blobs over as they are. pg decodes every field of a result as UTF-8 text, so a bytea came as text:
   * hex, or base64 (`encode`, which the server encodes and the serving thread decoded); here it is a binary
   * `COPY (select …) TO STDOUT` whose messages reach pg's client as raw bytes (src/db/pg-copy.ts: the query's
   * parameters must be integers, written into its text). A 10M-event year's blobs (47.8 MiB) read in 552 ms
   * instead of base64's 999, and a 365-day export from blobs took 16% less of the service's CPU and 40% less of
   * PostgreSQL's (bench/README.md, Decisions). pg's `binary: true` would not do: its rows' fields are still UTF-8
   * decoded, so a bytea's bytes would come back altered.
   */
  selectBinary<C extends BinaryColumns>(db: Kysely<any>, query: CompiledQuery, columns: C): Promise<BinaryRow<C>[]>;
  /** Aggregate: an integer expression's values as one comma-separated string, in `orderBy` order. */
  intListAgg(value: RawBuilder<unknown>, orderBy: RawBuilder<unknown>): RawBuilder<string>;
  /**
   * Concurrent calls of a batchable reusable query (src/db/reusable.ts) are combined into one statement
   * over arrays of their arguments (`unnest … with ordinality` + `lateral`): worth it where each statement
   * is a network round trip; false where reads are synchronous calls on an embedded handle.
   */
  readonly batchedLookups: boolean;
  /**
   * Writes are synchronous calls that hold up the calling thread (the inserts and the commit's fsync), and a
   * connection of its own in a worker thread can write the same database (`Database.file`): a busy writer —
   * ingest — belongs in such a thread. False where I/O is asynchronous and the calling thread never waits.
   */
  readonly writerThread: boolean;
  /**
   * Makes the space of deleted and replaced rows of these tables reusable by later writes (the store's background
   * work calls it for the tables it rewrites). SQLite reuses freed pages by itself: nothing. PostgreSQL keeps dead
   * row versions (and their TOAST) until a vacuum; autovacuum may be off or far behind (its default threshold is
   * a fifth of the table), so `VACUUM` runs here, skipping a table another vacuum holds.
   */
  reclaimSpace(db: Kysely<any>, tables: readonly string[]): Promise<void>;
}

export const sqliteCaps: DialectCaps = {
  name: 'sqlite',
  skipLocked: false,
  concurrentWriters: false,
  bigintType: 'integer',
  autoIdColumn: (t, name) => t.addColumn(name, 'integer', (c: ColumnDefinitionBuilder) => c.primaryKey().autoIncrement()),
  continueAutoIds: async () => {},
  maxParams: 32_766,
  withoutRowid: true,
  blobType: 'blob',
  selectBinary: async <C extends BinaryColumns>(db: Kysely<any>, query: CompiledQuery, columns: C) => {
    const { rows } = await db.executeQuery<Record<string, unknown>>(query);
    const names = Object.keys(columns);
    return rows.map((r) => {
      const out: Record<string, unknown> = {};
      for (const n of names) {
        const v = r[n];
        if (v === null || v === undefined) throw new Error(`selectBinary: a null in column ${n}`);
        out[n] = columns[n] === 'int' ? Number(v) : (v as Uint8Array);
      }
      return out as BinaryRow<C>;
    });
  },
  intListAgg: (value, orderBy) => sql<string>`group_concat(${value}, ',' order by ${orderBy})`,
  batchedLookups: false,
  writerThread: true,
  reclaimSpace: async () => {},
};

export const postgresCaps: DialectCaps = {
  name: 'postgres',
  skipLocked: true,
  concurrentWriters: true,
  bigintType: 'bigint',
  autoIdColumn: (t, name) => t.addColumn(name, 'bigserial', (c: ColumnDefinitionBuilder) => c.primaryKey()),
  continueAutoIds: async (db, table, column) => {
    await sql`select setval(pg_get_serial_sequence(${table}, ${column}), coalesce(max(${sql.ref(column)}), 0) + 1, false) from ${sql.table(table)}`.execute(db);
  },
  maxParams: 65_535,
  withoutRowid: false,
  blobType: 'bytea',
  selectBinary: async <C extends BinaryColumns>(db: Kysely<any>, query: CompiledQuery, columns: C) => {
    const copy = binaryCopyQuery(query, columns);
    // The pool's clients run it as a binary COPY (src/db/index.ts, namingPool), on the connection `db` holds.
    const { rows } = await db.executeQuery(CompiledQuery.raw(copy.sql, [...copy.parameters]));
    return rows as BinaryRow<C>[];
  },
  intListAgg: (value, orderBy) => sql<string>`string_agg((${value})::text, ',' order by ${orderBy})`,
  batchedLookups: true,
  writerThread: false,
  reclaimSpace: async (db, tables) => {
    if (tables.length === 0) return;
    // Not in a transaction (VACUUM refuses one): a pool connection of its own.
    await sql`vacuum (skip_locked) ${sql.join(tables.map((t) => sql.table(t)))}`.execute(db);
  },
};
