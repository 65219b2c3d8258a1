// The one way the ClickHouse analytics store talks to ClickHouse: run a query with named parameters and get its
// rows as JSON objects, run a command, insert rows. Two implementations run the SAME SQL text: the official
// client against a server (http-executor.ts, production) and chdb, ClickHouse embedded in this process
// (chdb-executor.ts, tests and benchmarks). Values only ever travel as query parameters ({name:Type} in the
// SQL text) or as inserted rows, never spliced into SQL.
//
// Both executors make every query see the same types in JSON: 64-bit integers come as strings (callers use
// Number() on counts), and each executor is bound to one database (unqualified table names resolve there).

export type Params = Record<string, unknown>;
/** Query-level ClickHouse settings. */
export type Settings = Record<string, string | number>;

export interface ClickHouseExecutor {
  /** Where it runs, for messages (a URL without credentials, or `chdb`). */
  readonly describe: string;
  /** The database the SQL's unqualified names resolve in. */
  readonly database: string;
  /** Rows of a SELECT, as JSON objects (JSONEachRow). */
  query<T = Record<string, unknown>>(sql: string, params?: Params, settings?: Settings): Promise<T[]>;
  /** A statement without rows (DDL, ALTER, INSERT … SELECT). */
  command(sql: string, params?: Params, settings?: Settings): Promise<void>;
  /** Inserts rows (objects by column name) synchronously: resolves once ClickHouse has written them. */
  insert(table: string, rows: readonly Record<string, unknown>[], settings?: Settings): Promise<void>;
  /** Releases the connection. */
  close(): Promise<void>;
}

/** What both executors set so that their JSON is the same: 64-bit integers quoted. */
export const OUTPUT_SETTINGS: Settings = { output_format_json_quote_64bit_integers: 1 };

/** A database name the executors accept (it is an identifier in DDL, never a parameter). */
export function checkDatabaseName(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name)) throw new Error(`ClickHouse database name must be letters, digits and _ (got ${JSON.stringify(name)})`);
  return name;
}
