// Rows of integers and large binary values read from PostgreSQL in binary form (DialectCaps.selectBinary):
// `COPY (select …) TO STDOUT (FORMAT binary)`, its CopyData messages parsed here.
//
// Why not a select: pg decodes every field of a data row as UTF-8 text, whatever format the result was asked in
// (pg-protocol's parser has no binary mode), so a bytea comes over as text, hex or (encode) base64, which the server
// encodes and this thread decodes; a year of day summaries at 100M events is hundreds of MB of it. CopyData
// messages reach a submittable as raw bytes: the blobs are copied out of them as they are.
//
// COPY takes no bind parameters: the select's parameters (integers only) are written into its text.
import type { CompiledQuery } from 'kysely';

/** What one column of a binary read is: an integer (sent as int8) or bytes (bytea). */
export type BinaryKind = 'int' | 'bytes';
export type BinaryColumns = Readonly<Record<string, BinaryKind>>;
export type BinaryRow<C extends BinaryColumns> = { -readonly [K in keyof C]: C[K] extends 'int' ? number : Uint8Array };

/**
 * The one parameter of a binary COPY's compiled query: it tells the pool's clients (src/db/index.ts) to run the
 * text as a binary COPY (pgBinaryCopy) rather than as a statement, and how to read its columns.
 */
export class BinaryCopyRequest {
  constructor(readonly columns: readonly { name: string; kind: BinaryKind }[]) {}
}

/** The request carried by a compiled query's parameters, if it is a binary COPY. */
export function binaryCopyRequest(values: readonly unknown[] | undefined): BinaryCopyRequest | undefined {
  const v = values?.length === 1 ? values[0] : undefined;
  return v instanceof BinaryCopyRequest ? v : undefined;
}

/**
 * A compiled select as the binary COPY of its named columns: each integer column cast to int8, each bytes column to
 * bytea, its parameters (safe integers only; anything else throws) written into the text.
 */
export function binaryCopyQuery(query: CompiledQuery, columns: BinaryColumns): { sql: string; parameters: readonly unknown[] } {
  const cols = Object.entries(columns).map(([name, kind]) => ({ name, kind }));
  if (cols.length === 0) throw new Error('selectBinary: no columns');
  const params = query.parameters;
  const text = query.sql.replace(/\$(\d+)/g, (_, n: string) => {
    const v = params[Number(n) - 1];
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new Error(`selectBinary: parameter $${n} is not a safe integer`);
    return v < 0 ? `(${v})` : String(v);
  });
  const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
  const list = cols.map((c) => `q.${quote(c.name)}::${c.kind === 'int' ? 'int8' : 'bytea'}`).join(', ');
  return { sql: `copy (select ${list} from (${text}) as q) to stdout (format binary)`, parameters: [new BinaryCopyRequest(cols)] };
}

/** The parts of pg's Connection this submittable drives (not in pg's type declarations). */
interface Connection {
  query(text: string): void;
}

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
/** Signature, flags (int32), header extension length (int32). */
const HEADER_BYTES = 19;

export class CopyFormatError extends Error {}

/**
 * Parses a binary COPY's stream (fed one CopyData message at a time, split anywhere) into rows. The server sends a
 * row per message (the header with the first): then nothing is buffered but the blobs' copies.
 */
export class BinaryCopyParser {
  readonly rows: Record<string, number | Uint8Array>[] = [];
  /** Bytes of an incomplete header or row, waiting for the next message. */
  private pending: Buffer | undefined;
  private headerRead = false;
  private ended = false;

  constructor(private readonly columns: readonly { name: string; kind: BinaryKind }[]) {}

  push(chunk: Buffer): void {
    let b = chunk;
    if (this.pending) {
      b = Buffer.concat([this.pending, chunk]);
      this.pending = undefined;
    }
    let o = 0;
    if (!this.headerRead) {
      if (b.length < HEADER_BYTES) {
        this.pending = Buffer.from(b);
        return;
      }
      if (!b.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new CopyFormatError('not a binary COPY stream');
      const extension = b.readUInt32BE(15);
      if (b.length < HEADER_BYTES + extension) {
        this.pending = Buffer.from(b);
        return;
      }
      o = HEADER_BYTES + extension;
      this.headerRead = true;
    }
    while (o < b.length) {
      if (this.ended) throw new CopyFormatError('data after the binary COPY trailer');
      const end = this.row(b, o);
      if (end < 0) break;
      o = end;
    }
    // A copy: `chunk` lies in pg's read buffer, which later reads may overwrite.
    if (o < b.length) this.pending = Buffer.from(b.subarray(o));
  }

  /** Reads the row (or trailer) at `o`: the offset after it, or -1 when `b` does not hold all of it. */
  private row(b: Buffer, o: number): number {
    if (o + 2 > b.length) return -1;
    const n = b.readInt16BE(o);
    if (n === -1) {
      this.ended = true;
      return o + 2;
    }
    if (n !== this.columns.length) throw new CopyFormatError(`a row of ${n} columns, ${this.columns.length} expected`);
    // The whole row first: nothing is taken from a partial one.
    let p = o + 2;
    for (let i = 0; i < n; i++) {
      if (p + 4 > b.length) return -1;
      const len = b.readInt32BE(p);
      p += 4 + Math.max(0, len);
      if (p > b.length) return -1;
    }
    const row: Record<string, number | Uint8Array> = {};
    p = o + 2;
    for (const c of this.columns) {
      const len = b.readInt32BE(p);
      p += 4;
      if (len < 0) throw new CopyFormatError(`a null in column ${c.name}`);
      if (c.kind === 'int') {
        if (len !== 8) throw new CopyFormatError(`an int8 of ${len} bytes`);
        row[c.name] = Number(b.readBigInt64BE(p));
      } else row[c.name] = Uint8Array.prototype.slice.call(b, p, p + len);
      p += Math.max(0, len);
    }
    this.rows.push(row);
    return p;
  }

  /** Checks the stream ended with its trailer and nothing was left over. */
  finish(): void {
    if (!this.headerRead || !this.ended || this.pending) throw new CopyFormatError('binary COPY stream cut short');
  }
}

type Callback = (err: Error | null, rows?: Record<string, number | Uint8Array>[]) => void;

/** The submittable: sends the COPY as a simple query and takes its CopyData messages (pg routes them here). */
class BinaryCopy {
  private readonly parser: BinaryCopyParser;
  private failed: Error | undefined;
  private done = false;

  constructor(
    readonly text: string,
    request: BinaryCopyRequest,
    private readonly callback: Callback,
  ) {
    this.parser = new BinaryCopyParser(request.columns);
  }

  submit(connection: Connection): Error | null {
    connection.query(this.text);
    return null;
  }

  handleCopyData(msg: { chunk: Buffer }): void {
    if (this.failed) return;
    try {
      this.parser.push(msg.chunk);
    } catch (err) {
      this.failed = err as Error;
    }
  }

  handleRowDescription(): void {
    this.failed ??= new Error('binary COPY: a row description (not a COPY statement?)');
  }

  handleDataRow(): void {}

  handleCommandComplete(): void {}

  handleEmptyQuery(): void {}

  handlePortalSuspended(): void {}

  handleCopyInResponse(): void {
    this.failed ??= new Error('binary COPY: the server asked for data');
  }

  /** An error response (ReadyForQuery follows, which pg does not route here) or a dead connection. */
  handleError(err: Error): void {
    this.finish(err);
  }

  handleReadyForQuery(): void {
    if (!this.failed) {
      try {
        this.parser.finish();
      } catch (err) {
        this.failed = err as Error;
      }
    }
    this.finish(this.failed ?? null);
  }

  private finish(err: Error | null): void {
    if (this.done) return;
    this.done = true;
    if (err) this.callback(err);
    else this.callback(null, this.parser.rows);
  }
}

/** Runs a binary COPY (binaryCopyQuery's text) on a pg client: its rows, in pg.query's result shape. */
export function runBinaryCopy(
  client: { query(q: unknown): unknown },
  text: string,
  request: BinaryCopyRequest,
): Promise<{ command: string; rowCount: number; rows: Record<string, number | Uint8Array>[] }> {
  return new Promise((resolve, reject) => {
    client.query(
      new BinaryCopy(text, request, (err, rows) => {
        if (err || !rows) reject(err);
        else resolve({ command: 'COPY', rowCount: rows.length, rows });
      }),
    );
  });
}
