// Bulk inserts for hot write paths (analytics ingest), with the dialect differences kept here:
// - SQLite: prepared statements are cached and reused (Kysely prepares every statement anew, which for a
//   1,000-row insert costs more than running it). Statements run on the database's own handle, so they
//   MUST be called inside a Kysely transaction callback: the SQLite driver has one connection guarded by a
//   mutex, so while the callback runs no other Kysely work can interleave and the statements join the
//   open transaction.
// - PostgreSQL: one statement per call with one array parameter per column (`unnest`), so the parameter
//   count does not grow with the rows.
// Lookups by many keys (`lookup`) the same way: on SQLite one cached single-row statement run per key (a
// statement over a list of N keys is compiled anew for every N: at the end of bench:scale's 10M-event year the
// ingest writer spent 19% of its time compiling such lists), on PostgreSQL one statement joining the keys
// `unnest`ed from one array per column.

import type { Statement } from 'better-sqlite3';
import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './index.ts';

/** `bytes`: a binary column (blob / bytea), given as Buffers. */
export type BulkColumnType = 'smallint' | 'integer' | 'bigint' | 'text' | 'bytes';

export interface BulkTable {
  table: string;
  columns: readonly { name: string; type: BulkColumnType }[];
  /**
   * `ignore`: rows violating any unique constraint are skipped (ON CONFLICT DO NOTHING). `{ key, add }`: a row
   * whose `key` columns match a stored row adds its `add` columns to it (counters). The rows of one call must
   * have distinct keys (PostgreSQL cannot update a row twice in one statement).
   */
  onConflict: 'ignore' | 'error' | { key: readonly string[]; add: readonly string[] };
}

export type BulkRow = readonly unknown[];

/**
 * A lookup by many keys: rows of `keys` (the key table `k`, one column per key part) joined by `join` (SQL after
 * `from <keys> as k`, e.g. `join t on t.id = k.id`, or nothing), selecting `select` (SQL over `k` and the joined
 * tables, e.g. a correlated subquery). Identifiers and SQL are the caller's constants, never input.
 */
export interface BulkLookup {
  keys: readonly { name: string; type: BulkColumnType }[];
  join: string;
  select: string;
}

export interface BulkWriter {
  /** Inserts rows (values in column order) inside the transaction `trx`; returns rows inserted. */
  insert(trx: Kysely<any>, spec: BulkTable, rows: readonly BulkRow[]): Promise<number>;
  /**
   * Like insert, with the rows' values given one after the other in one array (`values.length` = rows ×
   * columns): the hot paths build them so, without an array per row.
   */
  insertFlat(trx: Kysely<any>, spec: BulkTable, values: readonly unknown[]): Promise<number>;
  /**
   * Like insert, and returns the given columns of the rows actually inserted (`RETURNING`; rows skipped by
   * `onConflict: 'ignore'` return nothing), in no particular order.
   */
  insertReturning(trx: Kysely<any>, spec: BulkTable, rows: readonly BulkRow[], returning: readonly string[]): Promise<Record<string, unknown>[]>;
  /**
   * The rows of a lookup (BulkLookup) for the key rows given one after the other in `values` (`values.length` =
   * keys × key columns), inside the transaction `trx`, in no particular order.
   */
  lookup(trx: Kysely<any>, spec: BulkLookup, values: readonly unknown[]): Promise<Record<string, unknown>[]>;
}

const SQLITE_MULTI_ROWS = 64;

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`bulk insert: bad identifier ${name}`);
  return `"${name}"`;
}

function insertHead(spec: BulkTable): string {
  return `insert into ${quoteIdent(spec.table)} (${spec.columns.map((c) => quoteIdent(c.name)).join(', ')})`;
}

function conflictTail(spec: BulkTable): string {
  const c = spec.onConflict;
  if (c === 'ignore') return ' on conflict do nothing';
  if (c === 'error') return '';
  const table = quoteIdent(spec.table);
  const sums = c.add.map((n) => `${quoteIdent(n)} = ${table}.${quoteIdent(n)} + excluded.${quoteIdent(n)}`);
  return ` on conflict (${c.key.map(quoteIdent).join(', ')}) do update set ${sums.join(', ')}`;
}

function returningTail(columns: readonly string[]): string {
  return columns.length === 0 ? '' : ` returning ${columns.map(quoteIdent).join(', ')}`;
}

/**
 * Flat rows of numbers sorted by their columns in order (first column first). Rows inserted in key order land
 * in neighbouring B-tree pages one after another instead of all over the index.
 */
export function sortFlatRows(values: readonly number[], width: number): number[] {
  const n = values.length / width;
  const starts = new Array<number>(n);
  for (let i = 0; i < n; i++) starts[i] = i * width;
  starts.sort((a, b) => {
    for (let c = 0; c < width; c++) {
      const d = (values[a + c] as number) - (values[b + c] as number);
      if (d !== 0) return d;
    }
    return 0;
  });
  const out = new Array<number>(values.length);
  let o = 0;
  for (const start of starts) for (let c = 0; c < width; c++) out[o++] = values[start + c] as number;
  return out;
}

/** Rows in `values` (row-major) for a spec, checking the length is a whole number of rows. */
function rowCount(spec: BulkTable, values: readonly unknown[]): number {
  const width = spec.columns.length;
  if (values.length % width !== 0) throw new Error(`bulk insert into ${spec.table}: ${values.length} values are not whole rows of ${width}`);
  return values.length / width;
}

export function createBulkWriter(db: Database): BulkWriter {
  return db.sqliteHandle ? sqliteBulkWriter(db.sqliteHandle) : postgresBulkWriter();
}

/** On SQLite: multi-row INSERT statements prepared once per shape on the database's own handle. */
function sqliteBulkWriter(handle: NonNullable<Database['sqliteHandle']>): BulkWriter {
  const statements = new Map<string, Statement>();
  const statement = (spec: BulkTable, rows: number, returning: readonly string[]): Statement => {
    const key = `${spec.table}\u0000${spec.columns.map((c) => c.name).join(',')}\u0000${conflictTail(spec)}\u0000${rows}\u0000${returning.join(',')}`;
    let s = statements.get(key);
    if (!s) {
      const tuple = `(${spec.columns.map(() => '?').join(', ')})`;
      s = handle.prepare(`${insertHead(spec)} values ${Array.from({ length: rows }, () => tuple).join(', ')}${conflictTail(spec)}${returningTail(returning)}`);
      statements.set(key, s);
    }
    return s;
  };
  /**
   * Runs the rows through multi-row statements: SQLITE_MULTI_ROWS rows at a time, then the rest in
   * power-of-two parts (at most one statement each of 32, 16, … 1 rows), so few statements run per call.
   */
  const each = (spec: BulkTable, values: readonly unknown[], returning: readonly string[], run: (s: Statement, params: unknown[]) => void) => {
    const width = spec.columns.length;
    const rows = rowCount(spec, values);
    let i = 0;
    for (let part = SQLITE_MULTI_ROWS; part >= 1; part >>= 1) {
      if (rows - i < part) continue;
      const s = statement(spec, part, returning);
      for (; i + part <= rows; i += part) run(s, values.slice(i * width, (i + part) * width));
    }
  };
  const insertFlat = async (_trx: Kysely<any>, spec: BulkTable, values: readonly unknown[]) => {
    let changes = 0;
    each(spec, values, [], (s, params) => {
      changes += s.run(params).changes;
    });
    return changes;
  };
  const lookups = new Map<BulkLookup, Statement>();
  return {
    insert: (trx, spec, rows) => insertFlat(trx, spec, rows.flat()),
    insertFlat,
    async insertReturning(_trx, spec, rows, returning) {
      const out: Record<string, unknown>[] = [];
      each(spec, rows.flat(), returning, (s, params) => {
        for (const r of s.all(params) as Record<string, unknown>[]) out.push(r);
      });
      return out;
    },
    async lookup(_trx, spec, values) {
      let s = lookups.get(spec);
      if (!s) {
        s = handle.prepare(`select ${spec.select} from (select ${spec.keys.map((k) => `? as ${quoteIdent(k.name)}`).join(', ')}) as k ${spec.join}`);
        lookups.set(spec, s);
      }
      const width = spec.keys.length;
      if (values.length % width !== 0) throw new Error(`bulk lookup: ${values.length} values are not whole keys of ${width}`);
      const out: Record<string, unknown>[] = [];
      for (let i = 0; i < values.length; i += width) for (const r of s.all(values.slice(i, i + width)) as Record<string, unknown>[]) out.push(r);
      return out;
    },
  };
}

/** On PostgreSQL: one INSERT … SELECT FROM unnest(column arrays) per call. */
function postgresBulkWriter(): BulkWriter {
  const pgArrayType: Record<BulkColumnType, string> = { smallint: 'int2[]', integer: 'int4[]', bigint: 'int8[]', text: 'text[]', bytes: 'bytea[]' };
  const pgInsert = (spec: BulkTable, values: readonly unknown[], returning: readonly string[]) => {
    const width = spec.columns.length;
    const rows = rowCount(spec, values);
    const columns: unknown[][] = spec.columns.map(() => new Array(rows));
    for (let r = 0; r < rows; r++) for (let c = 0; c < width; c++) (columns[c] as unknown[])[r] = values[r * width + c];
    const args = spec.columns.map((c, i) => `$${i + 1}::${pgArrayType[c.type]}`).join(', ');
    return CompiledQuery.raw(`${insertHead(spec)} select * from unnest(${args})${conflictTail(spec)}${returningTail(returning)}`, columns);
  };
  const insertFlat = async (trx: Kysely<any>, spec: BulkTable, values: readonly unknown[]) => {
    if (values.length === 0) return 0;
    const result = await trx.executeQuery(pgInsert(spec, values, []));
    return Number(result.numAffectedRows ?? 0n);
  };
  return {
    insert: (trx, spec, rows) => insertFlat(trx, spec, rows.flat()),
    insertFlat,
    async insertReturning(trx, spec, rows, returning) {
      if (rows.length === 0) return [];
      const result = await trx.executeQuery<Record<string, unknown>>(pgInsert(spec, rows.flat(), returning));
      return result.rows;
    },
    async lookup(trx, spec, values) {
      const width = spec.keys.length;
      if (values.length % width !== 0) throw new Error(`bulk lookup: ${values.length} values are not whole keys of ${width}`);
      const n = values.length / width;
      if (n === 0) return [];
      const columns: unknown[][] = spec.keys.map(() => new Array(n));
      for (let r = 0; r < n; r++) for (let c = 0; c < width; c++) (columns[c] as unknown[])[r] = values[r * width + c];
      const args = spec.keys.map((k, i) => `$${i + 1}::${pgArrayType[k.type]}`).join(', ');
      const names = spec.keys.map((k) => quoteIdent(k.name)).join(', ');
      const result = await trx.executeQuery<Record<string, unknown>>(
        CompiledQuery.raw(`select ${spec.select} from unnest(${args}) as k(${names}) ${spec.join}`, columns),
      );
      return result.rows;
    },
  };
}
