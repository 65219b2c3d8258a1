// One piece of a log file (whole lines), parsed, classified and prepared into write batches: what an import
// thread (import-worker.ts) does for the parallel import (import-parallel.ts). Line for line the work of the
// serial import's onLine (import.ts): the same splitter, parsers, preparer checks and line digests, so the same
// events, errors and keys. What depends on the lines before a piece is left to the ordered stage in the main
// thread: line numbers (samples carry numbers within the piece) and occurrences of identical lines (every parsed
// line's digest is sent, in order: accepted ones in the batches' LineKeys with occ 0 until then, refused ones in
// `refused`, so the occurrence counter sees the same sequence as the serial import's).
import crypto from 'node:crypto';
import { LineSplitter, MAX_LINE_BYTES } from './line-splitter.ts';
import { combinedBytesState, parseCombinedBytes, parseCombinedLine, parseJsonLine, type RawEvent } from './logparse.ts';
import { createEventPreparer, type PrepareProject } from './prepare.ts';
import { BatchBuilder, type WriteBatch } from './write-batch.ts';

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

export interface ChunkResult {
  seq: number;
  /** The piece's buffer, handed back for the next read (no new buffer per piece for the collector to find). */
  buffer: ArrayBuffer | null;
  /** Line numbers the piece used (every line, blank and too long ones too). */
  lineCount: number;
  lines: number;
  unparseable: number;
  rejected: number;
  /** The piece's first problems (at most `maxSamples`), `line` counted from 1 within the piece. */
  samples: { line: number; error: string }[];
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
  private readonly bytesState = combinedBytesState();
  private readonly splitter = new LineSplitter();
  private readonly parse: (line: string) => RawEvent | null;
  private readonly combined: boolean;

  constructor(private readonly setup: ChunkSetup) {
    this.preparer = createEventPreparer({ visitors: setup.cacheEntries, paths: setup.cacheEntries });
    this.combined = setup.format === 'combined';
    this.parse = this.combined ? parseCombinedLine : parseJsonLine;
  }

  run(job: ChunkJob): ChunkResult {
    const { preparer, bytesState, combined, parse } = this;
    const { project, now } = job;
    const gen = preparer.beginBatch(project);
    const batchSize = this.setup.batchSize;
    const r: ChunkResult = {
      seq: job.seq,
      buffer: job.bytes.buffer as ArrayBuffer,
      lineCount: 0,
      lines: 0,
      unparseable: 0,
      rejected: 0,
      samples: [],
      batches: [],
      refused: new Uint8Array(0),
      refusedAt: new Int32Array(0),
    };
    let builder = new BatchBuilder(Math.min(batchSize, 8192));
    let accepted = 0;
    const refused: Buffer[] = [];
    const refusedAt: number[] = [];
    const sample = (error: string) => {
      if (r.samples.length < MAX_SAMPLES) r.samples.push({ line: r.lineCount, error });
    };
    /** `digest`: 32 bytes, or 32 latin1 characters. */
    const keep = (prepared: ReturnType<typeof preparer.prepare>, digest: Uint8Array | string, keyMs: number) => {
      if (typeof prepared === 'string') {
        r.rejected++;
        sample(prepared);
        refused.push(typeof digest === 'string' ? Buffer.from(digest, 'latin1') : Buffer.from(digest));
        refusedAt.push(accepted);
        return;
      }
      builder.add(prepared, digest, 0, keyMs);
      accepted++;
      if (builder.n >= batchSize) {
        r.batches.push(builder.take() as WriteBatch);
        builder = new BatchBuilder(Math.min(batchSize, 8192));
      }
    };
    const textLine = (line: string) => {
      if (line.trim() === '') return;
      r.lines++;
      const ev = parse(line);
      if (!ev) {
        r.unparseable++;
        sample(`not a ${combined ? 'combined-format' : 'JSON event'} line`);
        return;
      }
      const digest = crypto.hash('sha256', line, 'buffer');
      keep(preparer.prepare(ev, project, gen, now, null), digest, ev.timestamp ? Date.parse(ev.timestamp) : Number.NaN);
    };
    const onLine = (buf: Buffer, start: number, end: number) => {
      r.lineCount++;
      const first = buf[start];
      if (combined && first !== undefined && first > 32 && first < 127) {
        const ev = parseCombinedBytes(buf, start, end, bytesState);
        if (ev !== undefined) {
          r.lines++;
          if (ev === null) {
            r.unparseable++;
            sample('not a combined-format line');
            return;
          }
          const ms = bytesState.ms;
          const digest = crypto.hash('sha256', buf.subarray(start, end), 'binary');
          keep(preparer.prepareParsed(ev, ms, project, gen, now, null), digest, ms);
          return;
        }
      }
      textLine(buf.toString('utf8', start, end));
    };
    const onTooLong = () => {
      r.lineCount++;
      r.lines++;
      r.unparseable++;
      sample(`line longer than ${MAX_LINE_BYTES} bytes`);
    };
    const bytes = Buffer.from(job.bytes.buffer, job.bytes.byteOffset, job.bytes.byteLength);
    this.splitter.push(bytes, onLine, onTooLong);
    let open = false;
    this.splitter.end(() => {
      open = true;
    }, onTooLong);
    if (open) throw new Error('an import piece must end with a line break');
    const last = builder.take();
    if (last !== null) r.batches.push(last);
    if (refused.length > 0) {
      r.refused = new Uint8Array(Buffer.concat(refused));
      r.refusedAt = Int32Array.from(refusedAt);
    }
    return r;
  }
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
