// The parallel log import (import.ts importFile with `workers` ≥ 1): the file is read in pieces of whole lines,
// each parsed, classified and prepared into write batches by one of `workers` import threads (import-chunk.ts,
// import-worker.ts), and the results taken back in file order by this thread, which does what depends on the
// lines before a piece: line numbers, occurrences of identical lines (so every line's dedup key is the serial
// import's: re-imports add nothing, whichever path imported before), then hands the batches to the store in
// order, as the serial import does.
//
// Pieces: a read ends at its last line break (LF, or a CR: a CR ending a read ends its line, and an LF starting
// the next read is then its CRLF's, as in line-splitter.ts); the bytes after it start the next read. An
// unfinished line longer than MAX_LINE_BYTES is dropped as it is read (reported once, at its end, as the
// splitter does), and a last line without a line break is held back, as in the serial import.
//
// Bounded memory: at most QUEUED_PER_THREAD pieces per thread are between reading and the store (a piece is
// READ_BYTES plus the unfinished line before it, its result one batch of its lines); reading waits for the oldest
// to be handed on, and handing on waits for IMPORT_IN_FLIGHT batches to be acknowledged.
//
// Durability: as in the serial import, a batch's counts join the stats (and onProgress) only once the store
// acknowledged it; pieces are handed on in order, so what is reported imported is a prefix of the file. A thread
// that fails fails the import (with its pending writes settled first); nothing unacknowledged is reported.
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { IngestService } from '../ingest/ingest.ts';
import { DurableAppends, HELD_BACK, type ImportOptions, type ImportStats, MAX_SAMPLES, OccurrenceCounter } from './import.ts';
import { type ChunkJob, type ChunkResult, type ChunkSetup, emptyResult } from './import-chunk.ts';
import { MAX_LINE_BYTES } from './line-splitter.ts';

const BOOT_URL = new URL('./import-worker-boot.cjs', import.meta.url);

/** Bytes read at a time: one piece (about 4,500 lines of a typical combined log). */
const READ_BYTES = 1 << 20;
/** Room for the unfinished line before a read, in a read's buffer. */
const SPARE_ROOM = 64 << 10;
/** Pieces per thread between reading and the store. */
const QUEUED_PER_THREAD = 2;
/**
 * Per import thread: the preparer's caches of visitor keys and of path information (prepare.ts: 100,000 each in
 * the serial import, whose thread they then are not in) and its V8 heap limits. Why these: an import thread is
 * a V8 heap of its own (about 40 MB with its modules and caches), and the import's peak RSS must stay under 300 MB
 * (bench:import measured 277 MB at 1M lines with one thread, 321–340 MB with two).
 */
// (Its young generation is in fact 24 MiB, not 4: the import's process-wide --max-semi-space-size=8, cli/analytics.ts,
// wins over resourceLimits. Letting threads size their own heaps (lib/thread-heaps.ts), at 24 MiB, was measured and
// not taken: bench/README.md, Decisions.)
const THREAD_CACHE = 20_000;
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 128 };

const LF = 10;
const CR = 13;

type Reply = ChunkResult | { seq: number; error: string };

/** A piece between reading and the store: its result (in order) and where it ends in the file. */
interface Queued {
  result: Promise<ChunkResult>;
  end: number;
}

class ImportThreads {
  private readonly threads: { w: Worker; pending: Map<number, { resolve(r: ChunkResult): void; reject(e: Error): void }> }[] = [];
  private closed = false;
  private failed: Error | null = null;

  constructor(n: number, setup: ChunkSetup) {
    for (let i = 0; i < n; i++) {
      const w = new Worker(BOOT_URL, { workerData: setup, resourceLimits: THREAD_LIMITS });
      const t = { w, pending: new Map<number, { resolve(r: ChunkResult): void; reject(e: Error): void }>() };
      const failAll = (err: Error) => {
        const all = [...t.pending.values()];
        t.pending.clear();
        for (const p of all) p.reject(err);
      };
      w.on('message', (r: Reply) => {
        const p = t.pending.get(r.seq);
        if (!p) return;
        t.pending.delete(r.seq);
        if ('error' in r) p.reject(new Error(`import thread failed: ${r.error}`));
        else p.resolve(r);
      });
      // A thread that ended fails its pieces and every later one (a message to it would wait for ever).
      const fail = (err: Error) => {
        this.failed ??= err;
        failAll(err);
      };
      w.on('error', (err) => fail(new Error(`import thread failed: ${err.message}`)));
      w.on('exit', (code) => fail(new Error(`import thread exited (code ${code})`)));
      this.threads.push(t);
    }
  }

  /** Prepares a piece in the thread with the fewest pieces waiting; its bytes are handed over (detached here). */
  run(job: ChunkJob): Promise<ChunkResult> {
    if (this.closed) return Promise.reject(new Error('import threads are closed'));
    if (this.failed) return Promise.reject(this.failed);
    let t = this.threads[0] as (typeof this.threads)[number];
    for (const u of this.threads) if (u.pending.size < t.pending.size) t = u;
    const thread = t;
    return new Promise<ChunkResult>((resolve, reject) => {
      thread.pending.set(job.seq, { resolve, reject });
      thread.w.postMessage(job, [job.bytes.buffer as ArrayBuffer]);
    });
  }

  /** The threads themselves (tests: a thread killed mid-import). */
  get workers(): Worker[] {
    return this.threads.map((t) => t.w);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.threads.map((t) => t.w.terminate()));
  }
}

/** A result that no thread computes (a line too long, the held-back last line). */
function marker(lines: number, error: string): ChunkResult {
  const r = emptyResult(-1, null);
  r.lineCount = 1;
  r.lines = lines;
  r.unparseable = lines;
  r.samples.push({ line: 1, error });
  return r;
}

/** Test hooks of the parallel import. */
export interface ParallelHooks {
  /** Bytes per read (a piece), instead of READ_BYTES. */
  readBytes?: number;
  /** Called once the threads started (tests kill one). */
  onThreads?: (workers: Worker[]) => void;
}

export async function importParallel(
  ingest: IngestService,
  opts: ImportOptions,
  workers: number,
  batchSize: number,
  hooks: ParallelHooks = {},
): Promise<ImportStats> {
  const readBytes = hooks.readBytes ?? READ_BYTES;
  const totalBytes = fs.statSync(opts.file).size;
  const stats: ImportStats = { lines: 0, unparseable: 0, accepted: 0, inserted: 0, rejected: 0, samples: [] };
  const occurrences = new OccurrenceCounter();
  const stream = await ingest.importStream(opts.projectId);
  const threads = new ImportThreads(workers, { format: opts.format, batchSize, cacheEntries: THREAD_CACHE });
  hooks.onThreads?.(threads.workers);
  const queue: Queued[] = [];
  const appends = new DurableAppends(stream, stats, totalBytes, opts.onProgress);
  /** Line numbers used by the pieces handed on so far. */
  let lineBase = 0;
  let seq = 0;
  /** Buffers of pieces handed back by the threads, for the next reads. */
  const spares: ArrayBuffer[] = [];

  const enqueue = (result: Promise<ChunkResult>, end: number) => {
    // Awaited in order later; a failure before then must not count as unhandled.
    result.catch(() => {});
    queue.push({ result, end });
  };

  /** The oldest piece: its counts and samples, its lines' occurrences, then its batches to the store. */
  const handOnOldest = async () => {
    const q = queue.shift() as Queued;
    const r = await q.result;
    if (r.buffer !== null && spares.length < 2) spares.push(r.buffer);
    stats.lines += r.lines;
    stats.unparseable += r.unparseable;
    stats.rejected += r.rejected;
    for (const s of r.samples) if (stats.samples.length < MAX_SAMPLES) stats.samples.push({ line: lineBase + s.line, error: s.error });
    lineBase += r.lineCount;
    // Occurrences in the lines' order: refused lines count too, as in the serial import.
    let events = 0;
    let k = 0;
    for (const b of r.batches) {
      const lk = b.lineKeys;
      if (lk === undefined) throw new Error('an import batch without line keys');
      for (let i = 0; i < b.n; i++, events++) {
        while (k < r.refusedAt.length && r.refusedAt[k] === events) occurrences.nextDigestAt(r.refused, 32 * k++);
        lk.occ[i] = occurrences.nextDigestAt(lk.digests, 32 * i);
      }
    }
    for (; k < r.refusedAt.length; k++) occurrences.nextDigestAt(r.refused, 32 * k);
    for (const batch of r.batches) {
      await appends.room();
      appends.append(batch, q.end);
    }
  };

  const fh = await fs.promises.open(opts.file, 'r');
  try {
    let carry = null as Buffer | null;
    /** Inside a line longer than MAX_LINE_BYTES: its bytes are dropped until its end. */
    let skipping = false;
    /** The last read ended with a CR that ended a line: an LF starting the next read is its CRLF's. */
    let afterCR = false;
    let offset = 0;
    for (;;) {
      const c: number = carry === null ? 0 : carry.length;
      // Its own ArrayBuffer (never the Buffer pool's): the piece's memory is handed to the thread, and back.
      const spare = spares.pop();
      const buf = spare !== undefined && spare.byteLength >= c + readBytes ? Buffer.from(spare) : Buffer.allocUnsafeSlow(c + readBytes + SPARE_ROOM);
      if (carry !== null) carry.copy(buf, 0);
      const { bytesRead: n } = await fh.read(buf, c, readBytes, null);
      if (n === 0) break;
      carry = null;
      offset += n;
      const len: number = c + n;
      const data = buf.subarray(0, len);
      let from = 0;
      if (afterCR) {
        afterCR = false;
        if (data[0] === LF) from = 1;
      }
      if (skipping) {
        const lf = data.indexOf(LF, from);
        const cr = data.indexOf(CR, from);
        const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
        if (end === -1) continue;
        skipping = false;
        enqueue(Promise.resolve(marker(1, `line longer than ${MAX_LINE_BYTES} bytes`)), offset - len + end);
        from = end + 1;
        if (data[end] === CR) {
          if (from === len) afterCR = true;
          else if (data[from] === LF) from++;
        }
      }
      const brk = Math.max(data.lastIndexOf(LF), data.lastIndexOf(CR));
      let cut: number = from;
      if (brk >= from) {
        cut = brk + 1;
        if (data[brk] === CR && cut === len) afterCR = true;
        await stream.refresh();
        const job: ChunkJob = { seq: seq++, bytes: new Uint8Array(buf.buffer, from, cut - from), project: stream.project, now: stream.now };
        const rest: Buffer | null = cut < len ? Buffer.from(data.subarray(cut)) : null;
        enqueue(threads.run(job), offset - (len - cut));
        carry = rest;
      } else carry = from < len ? Buffer.from(data.subarray(from)) : null;
      if (carry !== null && carry.length > MAX_LINE_BYTES) {
        carry = null;
        skipping = true;
      }
      while (queue.length >= workers * QUEUED_PER_THREAD) await handOnOldest();
      appends.check();
    }
    if (skipping) enqueue(Promise.resolve(marker(1, `line longer than ${MAX_LINE_BYTES} bytes`)), totalBytes);
    // A last line without a line break is held back (see importFile): not counted in `lines`, named in a sample.
    else if (carry !== null && carry.length > 0) enqueue(Promise.resolve(marker(0, HELD_BACK)), totalBytes);
    while (queue.length > 0) await handOnOldest();
    await appends.drain();
  } catch (err) {
    // The writes handed on settle first: the caller may close the store next.
    await appends.settle();
    throw err;
  } finally {
    await fh.close();
    await threads.close();
  }
  stats.samples.sort((a, b) => a.line - b.line);
  opts.onProgress?.(totalBytes, totalBytes, stats);
  return stats;
}
