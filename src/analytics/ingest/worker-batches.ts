// The writes handed to the ingest worker in one message (ingest-worker-client.ts), with every typed array of
// their batches copied into ONE ArrayBuffer that is transferred, not cloned.
//
// Why: structured clone copies each typed array with a backing store of its own, and a small typed array
// (V8 keeps it on the JavaScript heap) must first be moved off the heap to be cloned. A WriteBatch has 5 to 8
// of them; with one event per request (page views) that cost more of the request thread than preparing the
// event (bench:ingest --page-views, profile of the service: postMessage 12.6% of the main thread's busy time).
// Invariant: the views the worker gets are read-only copies; the caller's batches are left untouched (the
// fallback writer may still need them).
import type { IngestSource } from './ingest-writer.ts';
import type { WriteBatch } from './write-batch.ts';

/** One write as sent: its batch's strings and sizes; its arrays are at `at` in the message's buffer. */
export interface PackedWrite {
  id: number;
  projectId: string;
  source: IngestSource;
  n: number;
  /** Length of its `refs`. */
  refs: number;
  strings: string[];
  /** Byte offset of the batch's first array in the buffer. */
  at: number;
  known: boolean;
}

export interface PackedWrites {
  buffer: ArrayBuffer;
  writes: PackedWrite[];
}

const align8 = (x: number) => (x + 7) & ~7;

/** Bytes of one batch's arrays in the buffer (each array starts 8-byte aligned), in the order of `arraysOf`. */
function sizesOf(n: number, strings: number, refs: number, known: boolean): number[] {
  const sizes = [refs * 4, n * 8, n * 4, n * 4, n];
  if (known) sizes.push(strings * 8, strings * 8, strings * 8);
  return sizes;
}

/** Copies the writes' arrays into one buffer (to be transferred). */
export function packWrites(writes: readonly { id: number; projectId: string; source: IngestSource; batch: WriteBatch }[]): PackedWrites {
  let total = 0;
  const out: PackedWrite[] = [];
  for (const w of writes) {
    const b = w.batch;
    const at = total;
    for (const s of sizesOf(b.n, b.strings.length, b.refs.length, b.known !== undefined)) total += align8(s);
    out.push({ id: w.id, projectId: w.projectId, source: w.source, n: b.n, refs: b.refs.length, strings: b.strings, at, known: b.known !== undefined });
  }
  const buffer = new ArrayBuffer(total);
  for (let i = 0; i < writes.length; i++) {
    const b = (writes[i] as { batch: WriteBatch }).batch;
    const views = arraysOf(buffer, out[i] as PackedWrite);
    views.refs.set(b.refs);
    views.ts.set(b.ts);
    views.day.set(b.day);
    views.status.set(b.status);
    views.qualifying.set(b.qualifying);
    if (b.known && views.known) {
      views.known.paths.set(b.known.paths);
      views.known.visitors.set(b.known.visitors);
      views.known.userAgents.set(b.known.userAgents);
    }
  }
  return { buffer, writes: out };
}

function arraysOf(buffer: ArrayBuffer, w: PackedWrite) {
  let at = w.at;
  const next = (bytes: number): number => {
    const here = at;
    at += align8(bytes);
    return here;
  };
  const n = w.n;
  const s = w.strings.length;
  const refs = new Int32Array(buffer, next(w.refs * 4), w.refs);
  const ts = new Float64Array(buffer, next(n * 8), n);
  const day = new Int32Array(buffer, next(n * 4), n);
  const status = new Int32Array(buffer, next(n * 4), n);
  const qualifying = new Uint8Array(buffer, next(n), n);
  const known = w.known
    ? {
        paths: new Float64Array(buffer, next(s * 8), s),
        visitors: new Float64Array(buffer, next(s * 8), s),
        userAgents: new Float64Array(buffer, next(s * 8), s),
      }
    : undefined;
  return { refs, ts, day, status, qualifying, known };
}

/** The batches of a message made by packWrites (views over its buffer). */
export function unpackWrites(p: PackedWrites): { id: number; projectId: string; source: IngestSource; batch: WriteBatch }[] {
  return p.writes.map((w) => {
    const { refs, ts, day, status, qualifying, known } = arraysOf(p.buffer, w);
    const batch: WriteBatch = { n: w.n, strings: w.strings, refs, ts, day, status, qualifying, ...(known ? { known } : {}) };
    return { id: w.id, projectId: w.projectId, source: w.source, batch };
  });
}
