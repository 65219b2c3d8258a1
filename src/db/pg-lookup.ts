// A lean pg query for the reusable lookups that run on their own connections (src/db/index.ts): a
// "submittable" (pg's extension point for custom query objects, as pg-cursor uses) that runs a named
// prepared statement and keeps its rows as arrays of parsed values.
//
// What it leaves out, measured with `node --cpu-prof` on the API benchmark, where pg's own Query was a
// large part of GET job on PostgreSQL: pg describes the portal on every run and rebuilds the result's
// field list and a row template from the description each time (`Result.addFields`, a dictionary object
// per run); it also copies the query config. Here the statement is described on its first run only (per
// database: the result's columns are the statement's, fixed for its text); later runs send
// Bind/Execute/Sync alone and the data rows are parsed with the parsers learned then.
import { createRequire } from 'node:module';
import type pg from 'pg';

// pg's own parameter conversion (arrays become array literals, etc.), so values go out exactly as with pg.Query.
// Loaded on the first lookup, not at import: a process on the embedded database never loads pg.
let prepareValueFn: ((value: unknown) => unknown) | undefined;
const prepareValue = (value: unknown): unknown => {
  prepareValueFn ??= (createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue(value: unknown): unknown }).prepareValue;
  return prepareValueFn(value);
};

type Parser = (value: string) => unknown;

/** The columns of a statement's rows and their parsers. */
export interface RowShape {
  columns: string[];
  parsers: Parser[];
}

interface FieldDescription {
  name: string;
  dataTypeID: number;
  format?: string;
}

/** The parts of pg's Connection a submittable drives (not in pg's type declarations). */
interface Connection {
  stream: { cork?(): void; uncork?(): void };
  parsedStatements: Record<string, string | undefined>;
  submittedNamedStatements: Record<string, string | undefined>;
  parse(q: { name: string; text: string }): void;
  bind(c: { statement: string; values: readonly unknown[]; valueMapper: (v: unknown) => unknown }): void;
  describe(m: { type: 'P'; name: string }): void;
  execute(c: Record<string, never>): void;
  sync(): void;
}

export type LookupCallback = (err: Error | null, result?: { columns: readonly string[]; rows: unknown[][] }) => void;

/**
 * Runs `text` as the named prepared statement `name` with `values`; calls back once with the columns and
 * rows (arrays of parsed values) or the error. `shapes` holds what the first run of each statement learned.
 */
export class LookupQuery {
  private readonly rows: unknown[][] = [];
  private shape: RowShape | undefined;
  private done = false;
  private failed: Error | undefined;

  constructor(
    readonly name: string,
    readonly text: string,
    private readonly values: readonly unknown[],
    private readonly shapes: Map<string, RowShape>,
    private readonly types: { getTypeParser(oid: number, format?: 'text' | 'binary'): Parser },
    private readonly callback: LookupCallback,
  ) {
    this.shape = shapes.get(name);
  }

  /** Called by the client when the connection is free: sends the whole exchange at once. */
  submit(connection: Connection): Error | null {
    connection.stream.cork?.();
    try {
      if (connection.parsedStatements[this.name] === undefined && connection.submittedNamedStatements[this.name] === undefined) {
        connection.parse({ name: this.name, text: this.text });
        connection.submittedNamedStatements[this.name] = this.text;
      }
      connection.bind({ statement: this.name, values: this.values, valueMapper: prepareValue });
      if (!this.shape) connection.describe({ type: 'P', name: '' });
      connection.execute({});
      connection.sync();
    } catch (err) {
      // A value pg cannot send: nothing of Bind went out (pg-protocol clears its buffer); Sync ends the exchange.
      this.failed = err as Error;
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(msg: { fields: FieldDescription[] }): void {
    const shape: RowShape = {
      columns: msg.fields.map((f) => f.name),
      parsers: msg.fields.map((f) => this.types.getTypeParser(f.dataTypeID, (f.format ?? 'text') as 'text' | 'binary')),
    };
    this.shape = shape;
    this.shapes.set(this.name, shape);
  }

  handleDataRow(msg: { fields: (string | null)[] }): void {
    const shape = this.shape;
    if (!shape || this.failed) {
      this.failed ??= new Error(`lookup ${this.name}: a data row came before its description`);
      return;
    }
    const raw = msg.fields;
    const row = new Array<unknown>(raw.length);
    try {
      for (let i = 0; i < raw.length; i++) {
        const v = raw[i];
        row[i] = v === null ? null : (shape.parsers[i] as Parser)(v as string);
      }
    } catch (err) {
      this.failed = err as Error;
      return;
    }
    this.rows.push(row);
  }

  handleCommandComplete(): void {}

  handleEmptyQuery(): void {}

  handlePortalSuspended(): void {}

  handleCopyInResponse(): void {}

  handleCopyData(): void {}

  /** An error response (the exchange ends with ReadyForQuery, which pg no longer routes here) or a dead connection. */
  handleError(err: Error): void {
    // The statement's shape is learned again next time (a schema change may be why it failed).
    this.shapes.delete(this.name);
    this.finish(err);
  }

  handleReadyForQuery(): void {
    this.finish(this.failed ?? null);
  }

  private finish(err: Error | null): void {
    if (this.done) return;
    this.done = true;
    if (err) this.callback(err);
    else if (!this.shape) this.callback(new Error(`lookup ${this.name}: no row description`));
    else this.callback(null, { columns: this.shape.columns, rows: this.rows });
  }
}

/** Runs a lookup on a client of the lookup pool. */
export function runLookup(
  client: pg.PoolClient,
  name: string,
  text: string,
  values: readonly unknown[],
  shapes: Map<string, RowShape>,
  types: { getTypeParser(oid: number, format?: 'text' | 'binary'): Parser },
): Promise<{ columns: readonly string[]; rows: unknown[][] }> {
  return new Promise((resolve, reject) => {
    const q = new LookupQuery(name, text, values, shapes, types, (err, result) => {
      if (err || !result) reject(err);
      else resolve(result);
    });
    (client as unknown as { query(q: LookupQuery): void }).query(q);
  });
}
