// Dialect differences live here as capability flags, and nowhere else (ARCHITECTURE principle 3).
import { type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely, type RawBuilder, sql } from 'kysely';

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
   * Large binary values read in bulk (the day summaries' blobs): the select expression of the column and what turns
   * the driver's value into bytes. pg reads bytea in its text form, hex (two characters a byte, decoded in
   * JavaScript); base64 is a third fewer characters and Node decodes it faster: reading a 2M-event year's
   * summaries took 30% less of the serving thread's CPU (bench/README.md, Scale). SQLite hands blobs over as they are.
   */
  blobRead(column: string): RawBuilder<unknown>;
  blobBytes(value: unknown): Uint8Array;
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
  blobRead: (column) => sql`${sql.ref(column)}`,
  blobBytes: (value) => value as Uint8Array,
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
  // encode(…, 'base64') breaks lines every 76 characters; Node's decoder skips the line breaks.
  blobRead: (column) => sql`encode(${sql.ref(column)}, 'base64')`,
  blobBytes: (value) => Buffer.from(value as string, 'base64'),
  intListAgg: (value, orderBy) => sql<string>`string_agg((${value})::text, ',' order by ${orderBy})`,
  batchedLookups: true,
  writerThread: false,
  reclaimSpace: async (db, tables) => {
    if (tables.length === 0) return;
    // Not in a transaction (VACUUM refuses one): a pool connection of its own.
    await sql`vacuum (skip_locked) ${sql.join(tables.map((t) => sql.table(t)))}`.execute(db);
  },
};
