// One piece of a log file (whole lines), parsed, classified and prepared into write batches: what an import
// thread (import-worker.ts) does for the parallel import (import-parallel.ts). Its lines are handled by the
// serial import's line handler (import-lines.ts LineHandler: the same splitter, parsers, counts and line digests)
// and prepared with the same preparer checks, so the same events, errors and keys. What depends on the lines before a piece is left to the ordered stage in the main
// thread: line numbers (samples carry numbers within the piece) and occurrences of identical lines (every parsed
// line's digest is sent, in order: accepted ones in the batches' LineKeys with occ 0 until then, refused ones in
// `refused`, so the occurrence counter sees the same sequence as the serial import's).

import { createEventPreparer, type PrepareProject } from '../ingest/prepare.ts';
import { BatchBuilder, joinStrings, type WriteBatch, type WriteEvent } from '../ingest/write-batch.ts';
import { type KeepLine, type LineCounts, LineHandler } from './import-lines.ts';
import { LineSplitter } from './line-splitter.ts';

/** What an import thread is started with. */
export interface ChunkSetup {
  format: 'combined' | 'jsonl';
  /** Events per batch (a piece's events go in one batch, or several of this many). */
  batchSize: number;
  /** The preparer's visitor-key and path caches (prepare.ts) per thread. */
  cacheEntries: number;
}

/** One piece: whole lines (it ends with a line break), with the settings the main thread's stream prepares with. */
export interface ChunkJob {
  seq: number;
  bytes: Uint8Array;
  project: PrepareProject;
  now: number;
}

/** The piece's counts (LineCounts: its first problems' `line` counted from 1 within the piece), batches and refused lines. */
export interface ChunkResult extends LineCounts {
  seq: number;
  /** The piece's buffer, handed back for the next read (no new buffer per piece for the collector to find). */
  buffer: ArrayBuffer | null;
  /** Line numbers the piece used (every line, blank and too long ones too). */
  lineCount: number;
  /** Every event has a line key; its occurrence (LineKeys.occ) is 0 until the ordered stage sets it. */
  batches: WriteBatch[];
  /** Digests (32 bytes each) of parsed lines that validation refused, in order. */
  refused: Uint8Array;
  /** Per refused digest: how many of the piece's accepted events came before its line. */
  refusedAt: Int32Array;
}

/** The first problems kept per piece (the import keeps 10 in all). */
const MAX_SAMPLES = 10;

export class ChunkImporter {
  private readonly preparer;
  private readonly splitter = new LineSplitter();
  /** The lines of the piece being run; `keep` is set per piece (its project, batches and refused lines). */
  private readonly lines: LineHandler;
  private keep: KeepLine = () => null;

  constructor(private readonly setup: ChunkSetup) {
    this.preparer = createEventPreparer({ visitors: setup.cacheEntries, paths: setup.cacheEntries });
    this.lines = new LineHandler(setup.format, (ev, ms, digest, keyMs) => this.keep(ev, ms, digest, keyMs), MAX_SAMPLES, emptyResult(-1, null));
  }

  run(job: ChunkJob): ChunkResult {
    const { preparer, lines } = this;
    const { project, now } = job;
    const gen = preparer.beginBatch(project);
    const batchSize = this.setup.batchSize;
    const r = emptyResult(job.seq, job.bytes.buffer as ArrayBuffer);
    let builder = new BatchBuilder(Math.min(batchSize, 8192));
    let accepted = 0;
    const refused: Buffer[] = [];
    const refusedAt: number[] = [];
    // A line's occurrence is the ordered stage's (LineKeys.occ 0 until then); a refused line's digest is sent in
    // `refused`, so that stage counts it too.
    this.keep = (ev, ms, digest, keyMs) => {
      let error: string | null;
      if (Number.isNaN(ms)) {
        const prepared = preparer.prepare(ev, project, gen, now, null);
        error = typeof prepared === 'string' ? prepared : null;
        if (error === null) builder.add(prepared as WriteEvent, digest, 0, keyMs);
      } else error = preparer.prepareParsedInto(builder, ev, ms, project, gen, now, digest, 0, keyMs);
      if (error !== null) {
        refused.push(typeof digest === 'string' ? Buffer.from(digest, 'latin1') : Buffer.from(digest));
        refusedAt.push(accepted);
        return error;
      }
      accepted++;
      if (builder.n >= batchSize) {
        r.batches.push(builder.take() as WriteBatch);
        builder = new BatchBuilder(Math.min(batchSize, 8192));
      }
      return null;
    };
    lines.counts = r;
    lines.lineNo = 0;
    const bytes = Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength);
    this.splitter.push(bytes, lines.onLine, lines.onTooLong);
    let open = false;
    this.splitter.end(() => {
      open = true;
    }, lines.onTooLong);
    if (open) throw new Error('an import piece must end with a line break');
    r.lineCount = lines.lineNo;
    const last = builder.take();
    if (last !== null) r.batches.push(last);
    // Their strings cross to the writer as one string each (the main thread only numbers their lines).
    for (const b of r.batches) joinStrings(b);
    if (refused.length > 0) {
      r.refused = new Uint8Array(Buffer.concat(refused));
      r.refusedAt = Int32Array.from(refusedAt);
    }
    return r;
  }
}

/** A result with nothing counted yet. */
export function emptyResult(seq: number, buffer: ArrayBuffer | null): ChunkResult {
  return {
    seq,
    buffer,
    lineCount: 0,
    lines: 0,
    unparseable: 0,
    rejected: 0,
    samples: [],
    batches: [],
    refused: new Uint8Array(0),
    refusedAt: new Int32Array(0),
  };
}

/** The buffers a result can hand over rather than copy (its typed arrays'). */
export function transferList(r: ChunkResult): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  const add = (a: ArrayBufferView) => {
    if (a.buffer instanceof ArrayBuffer && a.byteLength > 0) out.add(a.buffer);
  };
  for (const b of r.batches) {
    add(b.refs);
    add(b.ts);
    add(b.day);
    add(b.status);
    add(b.qualifying);
    if (b.lineKeys) {
      add(b.lineKeys.digests);
      add(b.lineKeys.occ);
      add(b.lineKeys.ms);
    }
  }
  add(r.refused);
  add(r.refusedAt);
  if (r.buffer !== null) out.add(r.buffer);
  return [...out];
}
