// Queries built and compiled once, then run with new parameter values: hot read paths (API key lookup,
// job fetch) skip Kysely's query builder and compiler on every request. The SQL is still Kysely's, written
// in the store that owns it; this only reuses the compiled text with fresh parameters.
//
// On SQLite, outside transactions, the statement runs directly on the handle (see `registerDirectReader`),
// without Kysely's connection mutex and promise chain.
//
// On PostgreSQL the compiled text is also registered as a named prepared statement (see src/db/index.ts):
// each pooled connection parses and plans it once instead of on every request.
import crypto from 'node:crypto';
import { type Compilable, type CompiledQuery, createQueryId, type Kysely } from 'kysely';

/** Marks argument `i` in the query built for compilation; never a real value (contains NUL). */
const marker = (i: number) => `\u0000inkwell-param-${i}\u0000`;

/** Compiled SQL texts to run as named prepared statements where the dialect has them. */
const preparedTexts = new Map<string, string>();

/** The prepared-statement name for a compiled SQL text, or undefined when it is not a reusable query. */
export function preparedName(text: string): string | undefined {
  return preparedTexts.get(text);
}

/** Runs a read statement synchronously on the database's own handle, or returns undefined when it cannot right now. */
export type DirectReader = (text: string, parameters: readonly unknown[]) => unknown[] | undefined;

const directReaders = new WeakMap<Kysely<any>, DirectReader>();

/** Called by openDatabase for an embedded database: reusable reads on `db` (not on its transactions) may run directly. */
export function registerDirectReader(db: Kysely<any>, reader: DirectReader): void {
  directReaders.set(db, reader);
}

type Slot = { arg: number } | { value: unknown };
interface Compiled<R> {
  text: string;
  slots: Slot[];
  query: CompiledQuery<R>['query'];
}

export type ReusableQuery<A extends readonly string[] | readonly (string | number)[], R> = (db: Kysely<any>, ...args: A) => Promise<R[]>;

/**
 * `build(db, ...args)` must return the query with every argument used as a plain value (a bound
 * parameter): it is built once with marker values to learn where each argument goes. Arguments are
 * strings or numbers (never arrays: an `in` list changes the SQL with its length).
 */
export function reusableQuery<A extends readonly string[] | readonly (string | number)[], R>(
  name: string,
  arity: A['length'],
  build: (db: Kysely<any>, ...args: A) => Compilable<R>,
): ReusableQuery<A, R> {
  // Compiled per dialect (the SQL text differs: `?` vs `$1`); one process may hold both (tests do).
  const byDialect = new Map<unknown, Compiled<R>>();
  const compile = (db: Kysely<any>): Compiled<R> => {
    const markers = Array.from({ length: arity }, (_, i) => marker(i));
    const argOf = new Map(markers.map((m, i) => [m, i]));
    const q = build(db, ...(markers as unknown as A)).compile();
    const used = new Set<number>();
    const slots: Slot[] = q.parameters.map((p) => {
      const arg = typeof p === 'string' ? argOf.get(p) : undefined;
      if (arg === undefined) return { value: p };
      used.add(arg);
      return { arg };
    });
    if (used.size !== arity) throw new Error(`reusable query ${name}: every argument must be a bound parameter`);
    // Named by content: the same name never stands for two texts (pg refuses that on a connection).
    preparedTexts.set(q.sql, `inkwell_${name}_${crypto.createHash('sha256').update(q.sql).digest('hex').slice(0, 12)}`);
    return { text: q.sql, slots, query: q.query };
  };
  return async (db, ...args) => {
    const dialect = db.getExecutor().adapter.constructor;
    let compiled = byDialect.get(dialect);
    if (!compiled) {
      compiled = compile(db);
      byDialect.set(dialect, compiled);
    }
    const { text, slots, query } = compiled;
    const parameters = new Array<unknown>(slots.length);
    for (let i = 0; i < slots.length; i++) {
      const s = slots[i] as Slot;
      parameters[i] = 'arg' in s ? args[s.arg] : s.value;
    }
    const direct = directReaders.get(db)?.(text, parameters);
    if (direct) return direct as R[];
    const result = await db.executeQuery<R>({ sql: text, parameters, query, queryId: createQueryId() });
    return result.rows as R[];
  };
}
