// Queries built and compiled once, then run with new parameter values: hot read paths (API key lookup,
// job fetch) skip Kysely's query builder and compiler on every request. The SQL is still Kysely's, written
// in the store that owns it; this only reuses the compiled text with fresh parameters.
//
// On SQLite, outside transactions, the statement runs directly on the handle (see `registerDirectReader`),
// without Kysely's connection mutex and promise chain.
//
// On PostgreSQL the compiled text is also registered as a named prepared statement (`preparedName`; the
// pool in src/db/index.ts and the lookup runner pass the name with the query): each pooled connection
// parses and plans it once instead of on every request.
//
// Batching (PostgreSQL, `caps.batchedLookups`): a query declared with argument types (`batch`) is, outside
// transactions, combined with the calls of the same query that arrive while earlier ones are in flight:
// one statement runs the query once per caller over arrays of their arguments
//
//   select b.ord, q.* from unnest($1::text[], $2::text[]) with ordinality as b(a0, a1, ord)
//     cross join lateral (<the query, its arguments replaced by b.a0, b.a1>) as q
//
// and each caller gets the rows of its own ordinal. Ten concurrent lookups then cost one round trip (and one
// plan execution, one protocol exchange) instead of ten. A call always waits for a statement sent after it
// was made, so it sees every change committed before it. When a combined statement fails, each of its calls
// is run again alone, so an error reaches only the calls it belongs to.
//
// Kept results (a runner with `snapshotExpression`: PostgreSQL): the combined statement also returns the
// snapshot it read under, and its results are kept with it; a batch whose calls all have kept results first
// runs a one-value statement asking for the current snapshot, and gets the kept rows when nothing has
// been committed since (src/db/kept-results.ts).
import crypto from 'node:crypto';
import { type Compilable, type CompiledQuery, createQueryId, type Kysely, sql } from 'kysely';
import { KeptSnapshots, keyOf } from './kept-results.ts';

/** Marks argument `i` in the query built for compilation; never a real value (contains NUL). */
const marker = (i: number) => `\u0000inkwell-param-${i}\u0000`;

/** Compiled SQL texts to run as named prepared statements where the dialect has them, and the reverse. */
const preparedTexts = new Map<string, string>();
const textsByName = new Map<string, string>();

/**
 * Registers `text` to run as a named prepared statement. Invariant: the same name always stands for the
 * same text (pg refuses a name prepared twice with different texts on one connection, and a name reused for
 * other SQL would run the wrong statement). The name is derived from the text; a clash of two texts on one
 * name is refused here rather than run.
 */
function registerPrepared(name: string, text: string): void {
  if (preparedTexts.has(text)) return;
  const prepared = `inkwell_${name}_${crypto.createHash('sha256').update(text).digest('hex').slice(0, 12)}`;
  const other = textsByName.get(prepared);
  if (other !== undefined) throw new Error(`prepared statement ${prepared} would stand for two SQL texts`);
  preparedTexts.set(text, prepared);
  textsByName.set(prepared, text);
}

/** The prepared-statement name for a compiled SQL text, or undefined when it is not a reusable query. */
export function preparedName(text: string): string | undefined {
  return preparedTexts.get(text);
}

/**
 * Runs a read statement on the database's own handle: its rows, now or (a read that waits for a freshness
 * check) later; undefined when it cannot run there, now or when its turn comes (the read then goes through Kysely).
 */
export type DirectReader = (text: string, parameters: readonly unknown[]) => unknown[] | Promise<unknown[] | undefined> | undefined;

const directReaders = new WeakMap<Kysely<any>, DirectReader>();

/** Called by openDatabase for an embedded database: reusable reads on `db` (not on its transactions) may run directly. */
export function registerDirectReader(db: Kysely<any>, reader: DirectReader): void {
  directReaders.set(db, reader);
}

/** Element type of the array each argument of a batchable query is sent in (PostgreSQL type names). */
export type BatchArgType = 'text' | 'int8' | 'float8';

/** Rows as arrays, with their column names. */
export interface RawRows {
  columns: readonly string[];
  rows: readonly (readonly unknown[])[];
}

/** How a database that batches lookups (`caps.batchedLookups`) runs their statements. */
export interface BatchRunner {
  /** Runs a reusable query's compiled text (alone or combined) outside any transaction. */
  run(text: string, parameters: readonly unknown[]): Promise<RawRows>;
  /** Statements of one batchable query in flight at once; calls made meanwhile wait and go together. */
  readonly maxInFlight: number;
  /** Most calls combined into one statement. */
  readonly maxBatch: number;
  /**
   * An SQL expression giving, as text, the snapshot the statement it is in reads under; two equal values
   * must mean the same committed data (PostgreSQL: `pg_current_snapshot()::text`). Set: results are kept
   * (see the top of this file). Unset: every call is read.
   */
  readonly snapshotExpression?: string;
}

/**
 * Counts of a database's batchable calls and of the statements that ran them (each statement counted once,
 * combined or alone); `checks`: snapshot checks run, `kept`: calls answered from kept results.
 */
export interface BatchStats {
  calls: number;
  statements: number;
  checks: number;
  kept: number;
}

const batchRunners = new WeakMap<Kysely<any>, { runner: BatchRunner; stats: BatchStats }>();

/** Called by openDatabase for a database that batches lookups: batchable queries on `db` (not on its transactions) are combined. */
export function registerBatchRunner(db: Kysely<any>, runner: BatchRunner): void {
  batchRunners.set(db, { runner, stats: { calls: 0, statements: 0, checks: 0, kept: 0 } });
}

/** The batching counts of `db` (a copy), or undefined when it does not batch lookups. */
export function batchStats(db: Kysely<any>): BatchStats | undefined {
  const b = batchRunners.get(db);
  return b && { ...b.stats };
}

type Slot = { arg: number } | { value: unknown };
interface Compiled<R> {
  text: string;
  slots: Slot[];
  query: CompiledQuery<R>['query'];
}

/** The combined form of a batchable query; `snapshot`: its rows start with the snapshot column (then the ordinal). */
interface CombinedForm {
  text: string;
  constants: readonly unknown[];
  snapshot: boolean;
}

// Names in the combined statement; the query's own columns come after the ordinal, under their own names.
const BATCH_REL = '__inkwell_batch';
const BATCH_ORD = '__inkwell_ord';
const BATCH_SUB = '__inkwell_q';
const BATCH_SNAP = '__inkwell_snap';

/**
 * Builds `{[columns[from]]: v[from], …}` from a row's values (column names are those of our own statements).
 * Plain assignment in column order. An object literal generated with `new Function` is faster per row: for a
 * 25-column row, ~0.1-0.3 µs against ~0.8-1.7 µs here, ~1 µs more once the row is read and serialised (Node
 * 24, 2-core machine). A lookup builds its rows only when its kept result is stale (one row for GET job), and
 * `npm run bench:api` could not tell the two apart (server CPU per request, old / new, two interleaved runs:
 * SQLite 50.2, 72.3 / 61.0, 50.1 µs; PostgreSQL 83.6, 125 / 92.1, 121 µs), so the plain form stays.
 */
export function rowBuilder(columns: readonly string[], from = 0): (values: readonly unknown[]) => Record<string, unknown> {
  const names = columns.slice(from);
  return (values) => {
    const row: Record<string, unknown> = {};
    for (let c = 0; c < names.length; c++) row[names[c] as string] = values[c + from];
    return row;
  };
}

const builders = new Map<string, (values: readonly unknown[]) => Record<string, unknown>>();

/** Rows of `columns` from `from` on, as objects (builders kept per column list: the statements are a small fixed set). */
function toObjects(columns: readonly string[], rows: readonly (readonly unknown[])[], from: number): Record<string, unknown>[] {
  const key = `${from}\u0000${columns.join('\u0000')}`;
  let build = builders.get(key);
  if (!build) {
    build = rowBuilder(columns, from);
    builders.set(key, build);
  }
  const out = new Array<Record<string, unknown>>(rows.length);
  for (let r = 0; r < rows.length; r++) out[r] = build(rows[r] as readonly unknown[]);
  return out;
}

interface Call {
  args: readonly unknown[];
  resolve(rows: unknown[]): void;
  reject(err: unknown): void;
}

/** Combines concurrent calls of one batchable query on one database (see the top of this file). */
class Batcher {
  private queue: Call[] = [];
  private inFlight = 0;
  private scheduled = false;
  /** Results kept with their snapshot (runners with a snapshot expression), and the statement checking it. */
  private readonly kept: KeptSnapshots<Record<string, unknown>> | undefined;
  private readonly checkText: string;

  constructor(
    private readonly runner: BatchRunner,
    private readonly stats: BatchStats,
    private readonly compiled: Compiled<unknown>,
    private readonly combined: CombinedForm,
  ) {
    this.kept = combined.snapshot ? new KeptSnapshots() : undefined;
    this.checkText = runner.snapshotExpression ? snapshotCheck(runner.snapshotExpression) : '';
  }

  call(args: readonly unknown[]): Promise<unknown[]> {
    return new Promise<unknown[]>((resolve, reject) => {
      this.queue.push({ args, resolve, reject });
      // Sent after the I/O callbacks of this turn of the event loop (which may add calls), unless enough
      // statements are in flight already: then when one of them comes back.
      if (!this.scheduled && this.inFlight < this.runner.maxInFlight) {
        this.scheduled = true;
        setImmediate(this.flush);
      }
    });
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    while (this.queue.length > 0 && this.inFlight < this.runner.maxInFlight) {
      const calls = this.queue.length <= this.runner.maxBatch ? this.queue : this.queue.slice(0, this.runner.maxBatch);
      this.queue = calls === this.queue ? [] : this.queue.slice(calls.length);
      this.inFlight++;
      void this.run(calls)
        .catch((err: unknown) => {
          for (const c of calls) c.reject(err);
        })
        .finally(() => {
          this.inFlight--;
          this.flush();
        });
    }
  };

  private async run(calls: Call[]): Promise<void> {
    this.stats.calls += calls.length;
    const kept = this.kept;
    const keys = kept && calls.map((c) => keyOf(c.args));
    if (kept && keys) {
      const hit = kept.all(keys);
      if (hit && kept.shouldCheck() && (await this.stillCurrent(kept, hit.snapshot))) {
        this.stats.kept += calls.length;
        for (let i = 0; i < calls.length; i++) (calls[i] as Call).resolve(hit.rows[i] as unknown[]);
        return;
      }
    } else if (calls.length === 1) {
      return this.runAlone(calls[0] as Call);
    }
    const combined = this.combined;
    const parameters: unknown[] = [...combined.constants];
    const arity = (calls[0] as Call).args.length;
    for (let a = 0; a < arity; a++) {
      const values = new Array<unknown>(calls.length);
      for (let i = 0; i < calls.length; i++) values[i] = (calls[i] as Call).args[a];
      parameters.push(values);
    }
    let res: RawRows;
    try {
      this.stats.statements++;
      res = await this.runner.run(combined.text, parameters);
    } catch {
      // Perhaps one call's arguments are what the database refused: each call runs again alone, so an
      // error reaches only the calls it belongs to.
      await Promise.all(calls.map((c) => this.runAlone(c)));
      return;
    }
    try {
      // Columns: [snapshot,] ordinal, the query's own.
      const ordAt = combined.snapshot ? 1 : 0;
      const rows = toObjects(res.columns, res.rows, ordAt + 1);
      const out = calls.map(() => [] as Record<string, unknown>[]);
      for (let r = 0; r < rows.length; r++) {
        const ord = (res.rows[r] as readonly unknown[])[ordAt];
        // The snapshot's own row when no call has rows (it is left-joined with the callers' rows).
        if (ord === null && combined.snapshot) continue;
        const mine = out[(ord as number) - 1];
        if (!mine) throw new Error(`batched query: row ${r} has no caller`);
        mine.push(rows[r] as Record<string, unknown>);
      }
      const snapshot = combined.snapshot ? (res.rows[0]?.[0] as string | undefined) : undefined;
      if (kept && keys && typeof snapshot === 'string') {
        for (let i = 0; i < calls.length; i++) kept.keep(keys[i], out[i] as Record<string, unknown>[], snapshot);
      }
      for (let i = 0; i < calls.length; i++) (calls[i] as Call).resolve(out[i] as unknown[]);
    } catch (err) {
      for (const c of calls) c.reject(err);
    }
  }

  /** Asks for the current snapshot: true when it is `readUnder` (nothing committed since the kept results were read). */
  private async stillCurrent(kept: KeptSnapshots<Record<string, unknown>>, readUnder: string): Promise<boolean> {
    let current: unknown;
    try {
      this.stats.checks++;
      current = (await this.runner.run(this.checkText, [])).rows[0]?.[0];
    } catch {
      return false; // the read runs instead, and reports its own error
    }
    return typeof current === 'string' && kept.checked(readUnder, current);
  }

  private async runAlone(call: Call): Promise<void> {
    try {
      this.stats.statements++;
      const res = await this.runner.run(this.compiled.text, parametersFor(this.compiled.slots, call.args));
      call.resolve(toObjects(res.columns, res.rows, 0));
    } catch (err) {
      call.reject(err);
    }
  }
}

/** The statement asking for the current snapshot (registered to run as a named prepared statement). */
function snapshotCheck(expression: string): string {
  const text = `select ${expression} as ${BATCH_SNAP}`;
  registerPrepared('snapshot', text);
  return text;
}

function parametersFor(slots: readonly Slot[], args: readonly unknown[]): unknown[] {
  const parameters = new Array<unknown>(slots.length);
  for (let i = 0; i < slots.length; i++) {
    const s = slots[i] as Slot;
    parameters[i] = 'arg' in s ? args[s.arg] : s.value;
  }
  return parameters;
}

export type ReusableQuery<A extends readonly string[] | readonly (string | number)[], R> = (db: Kysely<any>, ...args: A) => Promise<R[]>;

type Builder = (db: Kysely<any>, ...args: any[]) => Compilable<unknown>;

/** Builds the query once with a marker for each argument, to learn which bound parameter each argument is. */
function compileReusable(name: string, arity: number, build: Builder, db: Kysely<any>): Compiled<unknown> {
  const markers = Array.from({ length: arity }, (_, i) => marker(i));
  const argOf = new Map(markers.map((m, i) => [m, i]));
  const q = build(db, ...markers).compile();
  const used = new Set<number>();
  const slots: Slot[] = q.parameters.map((p) => {
    const arg = typeof p === 'string' ? argOf.get(p) : undefined;
    if (arg === undefined) return { value: p };
    used.add(arg);
    return { arg };
  });
  if (used.size !== arity) throw new Error(`reusable query ${name}: every argument must be a bound parameter`);
  registerPrepared(name, q.sql);
  return { text: q.sql, slots, query: q.query };
}

/** The combined statement of a batchable query: the query once per caller over arrays of their arguments (top of this file). */
function compileCombined(
  name: string,
  build: Builder,
  db: Kysely<any>,
  compiled: Compiled<unknown>,
  types: readonly BatchArgType[],
  snapshotExpression: string | undefined,
): CombinedForm {
  const refs = types.map((_, i) => sql.ref(`${BATCH_REL}.a${i}`));
  const q = build(db, ...refs).compile();
  const constants = compiled.slots.filter((s) => 'value' in s).length;
  if (q.parameters.length !== constants) throw new Error(`reusable query ${name}: an argument is used where a column reference cannot stand`);
  const n = q.parameters.length;
  const arrays = types.map((t, i) => `$${n + i + 1}::${t}[]`).join(', ');
  const columns = types.map((_, i) => `a${i}`).join(', ');
  const callers = `unnest(${arrays}) with ordinality as ${BATCH_REL}(${columns}, ${BATCH_ORD}) cross join lateral (${q.sql}) as ${BATCH_SUB}`;
  // With a snapshot: one row of it, left-joined with the callers' rows (so it comes back when none has rows).
  const text = snapshotExpression
    ? `select ${BATCH_SNAP}_r.${BATCH_SNAP}, ${BATCH_REL}.${BATCH_ORD}, ${BATCH_SUB}.* from (select ${snapshotExpression} as ${BATCH_SNAP}) as ${BATCH_SNAP}_r ` +
      `left join (${callers}) on true`
    : `select ${BATCH_REL}.${BATCH_ORD}, ${BATCH_SUB}.* from ${callers}`;
  registerPrepared(name, text);
  return { text, constants: q.parameters, snapshot: snapshotExpression !== undefined };
}

/**
 * `build(db, ...args)` must return the query with every argument used as a plain value (a bound
 * parameter): it is built once with marker values to learn where each argument goes. Arguments are
 * strings or numbers (never arrays: an `in` list changes the SQL with its length).
 *
 * `batch` (one array element type per argument) makes the query batchable on databases that batch
 * lookups: it is then also built once with each argument replaced by a column reference, so an argument
 * must only be used where an expression may stand for a value. Each caller's rows come in the order the
 * query alone would give them (the lateral subquery runs once per caller).
 */
export function reusableQuery<A extends readonly string[] | readonly (string | number)[], R>(
  name: string,
  arity: A['length'],
  build: (db: Kysely<any>, ...args: A) => Compilable<R>,
  batch?: { readonly [K in keyof A]: BatchArgType },
): ReusableQuery<A, R> {
  // Compiled per dialect (the SQL text differs: `?` vs `$1`); one process may hold both (tests do).
  const byDialect = new Map<unknown, Compiled<unknown>>();
  const batchers = new WeakMap<Kysely<any>, Batcher>();
  // Combined forms by snapshot expression ('' for none); only dialects that batch (PostgreSQL) have them.
  const combinedForms = new Map<string, CombinedForm>();
  const batcherFor = (db: Kysely<any>, compiled: Compiled<unknown>, registered: { runner: BatchRunner; stats: BatchStats }): Batcher => {
    let batcher = batchers.get(db);
    if (!batcher) {
      const expression = registered.runner.snapshotExpression;
      let combined = combinedForms.get(expression ?? '');
      if (!combined) {
        combined = compileCombined(name, build as Builder, db, compiled, batch as readonly BatchArgType[], expression);
        combinedForms.set(expression ?? '', combined);
      }
      batcher = new Batcher(registered.runner, registered.stats, compiled, combined);
      batchers.set(db, batcher);
    }
    return batcher;
  };
  return async (db, ...args) => {
    const dialect = db.getExecutor().adapter.constructor;
    let compiled = byDialect.get(dialect);
    if (!compiled) {
      compiled = compileReusable(name, arity, build as Builder, db);
      byDialect.set(dialect, compiled);
    }
    const registered = batch ? batchRunners.get(db) : undefined;
    if (registered) return (await batcherFor(db, compiled, registered).call(args)) as R[];
    const { text, slots, query } = compiled;
    const parameters = parametersFor(slots, args);
    const direct = directReaders.get(db)?.(text, parameters);
    const rows = direct instanceof Promise ? await direct : direct;
    if (rows) return rows as R[];
    const result = await db.executeQuery<R>({ sql: text, parameters, query: query as CompiledQuery<R>['query'], queryId: createQueryId() });
    return result.rows as R[];
  };
}
