// Access-log import (`inkwell analytics import`): the file read in chunks and split into lines on bytes
// (line-splitter.ts), combined-format lines parsed from their bytes (logparse.ts: parseCombinedBytes; other lines
// decoded and parsed as text; import-lines.ts LineHandler, shared with the import threads), each event prepared as
// it is read by the same ingest service as the API (its import stream: same checks, packed into the batch being
// built), a bounded number of batches in flight (reading waits for the writer).
//
// Idempotency: every line gets a dedup key = its time + sha256(line content + '\n' + occurrence), where occurrence
// counts earlier identical lines in the same file (two identical lines are two requests: same client, same
// path, same second). The store skips an event whose key it already holds (import dedup, docs/architecture.md),
// so importing a file again — or a log that has grown since — adds only lines not stored before. Occurrences
// are counted within a window of recent distinct lines (IMPORT_DEDUP_WINDOW), which bounds memory for huge
// files: identical lines are at most a second apart in a time-ordered log, far inside the window. Keys depend on
// the content only, not on the file name, so a rotated (renamed) log imports as the same lines. A last line
// without a line break is not imported (a log being written may be cut mid-line): the import after it is complete
// adds it.
//
// Files of PARALLEL_MIN_BYTES or more are parsed and prepared in an import thread instead (import-parallel.ts:
// pieces of whole lines, results taken back in file order, the same keys and counts); the rest of this comment
// holds for both paths.
//
// Durability: a batch's counts join the stats (and onProgress) only once the store acknowledged it, which it
// does after its transaction committed; what is reported imported survives a crash.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import type { ImportStream, IngestService } from '../ingest/ingest.ts';
import type { WriteBatch } from '../ingest/write-batch.ts';
import { LineHandler } from './import-lines.ts';
import { importParallel, type ParallelHooks } from './import-parallel.ts';
import { LineSplitter } from './line-splitter.ts';

export { digestDedupKeyAt, lineDedupKey, lineDedupKeyAt } from '../ingest/line-key.ts';

export type LogFormat = 'combined' | 'jsonl';

export interface ImportStats {
  /** Non-empty lines read (a last line without a line break is held back: not counted, named in `samples`). */
  lines: number;
  /** Lines that are not in the format. */
  unparseable: number;
  /** Events that passed validation (including previously imported ones). */
  accepted: number;
  /** Events newly stored. */
  inserted: number;
  /** Parsed events refused by validation (e.g. a path that does not normalise). */
  rejected: number;
  /** First few problems, for the user: line number and reason. */
  samples: { line: number; error: string }[];
}

export interface ImportOptions {
  projectId: string;
  format: LogFormat;
  file: string;
  batchSize?: number;
  /** Called after every batch with bytes read so far and the file size. */
  onProgress?: (bytesRead: number, totalBytes: number, stats: ImportStats) => void;
  /**
   * Import threads that parse and prepare the file's lines (import-parallel.ts); 0: all in this thread, as
   * before. Default: importThreads(the file's size).
   */
  workers?: number;
  /** Test hooks of the parallel import. */
  parallel?: ParallelHooks;
}

/** Files smaller than this import in this thread (starting import threads costs more than they would save). */
export const PARALLEL_MIN_BYTES = 8 << 20;

/**
 * Import threads for a file of `bytes`: none for a small file or a machine with one core; else one. Why one: the
 * thread takes parsing, classifying and preparing off the main thread, which then only reads, orders and hands
 * on, so the import runs as two busy threads (the import thread, the ingest writer) where it ran as two that
 * waited on each other; a second import thread was 12% faster under load (1M lines, one run each side by side, load ~20) but cost
 * 44 MB of RSS, past the import's 300 MB bound (bench:import).
 */
export function importThreads(bytes: number): number {
  if (bytes < PARALLEL_MIN_BYTES || os.availableParallelism() < 2) return 0;
  return 1;
}

export const IMPORT_DEDUP_WINDOW = 200_000;

/**
 * An import's bounded memory (target: peak RSS under 300 MB whatever the file's size; bench:import measures it).
 * The process holds two V8 heaps (this thread, the SQLite writer's worker thread) and SQLite's page cache. V8
 * grows a heap to several times its live data, so what bounds the footprint is small live sets: dictionary caches
 * of IMPORT_DICTIONARY_CACHE entries (a miss costs the writer a lookup, not a wrong id), the writer's dedup hashes
 * bounded in bytes (an import's lines come in time order: the days in the cache are the ones being written), an
 * 8 MiB page cache for the writer's connection (it appends; the dictionaries' indexes stay small) and 16 prepared
 * statements rather than 256 (its `in (…)` lookups of varying length each compile a statement of up to thousands
 * of parameters, outside the V8 heaps: peak RSS of a 1M-line import 361 → 300 MB, one run each), and the writer
 * thread's young generation capped (its garbage is per batch) and old generation limited: a heap at the limit
 * fails the import's pending writes (nothing unacknowledged is reported imported), never the data.
 */
export const IMPORT_DICTIONARY_CACHE = 20_000;
export const IMPORT_WRITER = {
  dedupCacheBytes: 8 * 1024 * 1024,
  // No exact cache of visitor keys (GroupWriterOptions.visitorCache): 766,000 of the 825,000 keys bench:import's
  // 1M-line log sends the writer are new, and its lookups and inserts were 13% of the writer thread
  // (bench/README.md, Decisions).
  visitorCache: false,
  sqliteCacheKib: 8 * 1024,
  sqliteStatementCache: 16,
  // The young generation is in fact 24 MiB: the import's process-wide --max-semi-space-size=8 (cli/analytics.ts) wins
  // over a thread's resourceLimits (bench/README.md, Decisions: threads sizing their own heaps, not taken).
  resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 256 },
};
/**
 * Events per ingest call, and calls in flight. Batches of 5,000, two at a time, let the group commit write up to
 * 10,000 events per transaction: the writer thread's CPU per imported line fell from 19 to 15.5 µs against 1,000 ×
 * 4 (200k lines of bench/import.ts's log, measured while the writer thread bounded the import's speed; since the
 * derived tables left the writer, the main thread does: npm run bench:import -- --profile).
 */
const IMPORT_BATCH = 5000;
export const IMPORT_IN_FLIGHT = 2;
export const MAX_SAMPLES = 10;
/** The sample for a last line without a line break (importFile holds it back). */
export const HELD_BACK = 'no line break yet (a line being written?): not imported; import again once it is complete';

/**
 * Counts occurrences of identical lines within a window of recent distinct lines (two generations of `window`
 * distinct lines each): `next` gives 0 the first time a line is seen, 1 the second time, …
 *
 * Lines are told apart by their sha256 digest; the window keeps 96 bits of it (three 32-bit words) in two
 * open-addressing tables of typed arrays. Invariant: exactly the counts of the former Map of base64url digests
 * (same window, same generations), unless two distinct lines in one window agree on 96 bits (with 400k lines
 * in a window, under 10⁻¹⁷ per million lines). Why: the Map of 43-character strings held ~45 MB live for the
 * default window and took a sixteenth of the import's main-thread time; these tables take 2 × 8 MiB and no
 * garbage (bench/import.ts, npm run bench:import).
 *
 * A line's slot comes from its first two words mixed with a seed drawn per process (DigestTable slotOf), not
 * from the digest's bits as they are: the log is the user's input, and lines searched for digests that share their low
 * bits would otherwise fill one run of slots and make every probe walk it (quadratic in such lines).
 */
export class OccurrenceCounter {
  private current: DigestTable;
  private previous: DigestTable;
  constructor(private readonly window = IMPORT_DEDUP_WINDOW) {
    this.current = new DigestTable(window);
    this.previous = new DigestTable(window);
  }

  /** `next` for a line's sha256 digest (32 bytes; only its first 12 are read). */
  nextDigest(digest: Uint8Array): number {
    return this.count(word(digest, 0), word(digest, 4), word(digest, 8));
  }

  /** nextDigest for the digest at `digests[at, at + 32)` (a batch's LineKeys.digests). */
  nextDigestAt(digests: Uint8Array, at: number): number {
    return this.count(word(digests, at), word(digests, at + 4), word(digests, at + 8));
  }

  /**
   * nextDigest for the digest as a latin1 string (crypto.hash's 'latin1' output: one character per byte, so the
   * same words and the same count). Why: a digest as a string is a young-generation string where a Buffer is an
   * ArrayBuffer with its own backing store: hashing a 226-byte line with 'latin1' output took 1.0 µs against 3.2
   * for 'buffer' (best of 8 runs of 200k, loaded 2-core machine), and the line's hash was 2.2 of the main
   * thread's 22.9 µs/line (`npm run bench:import -- --profile`, 1M lines).
   */
  nextDigestText(digest: string): number {
    return this.count(wordOfText(digest, 0), wordOfText(digest, 4), wordOfText(digest, 8));
  }

  /** `next` for a line given by any string standing for its content (e.g. its lineHash). */
  next(lineHash: string): number {
    return this.nextDigest(crypto.hash('sha256', lineHash, 'buffer'));
  }

  /**
   * The count of key (a, b, c) before this call, and one more recorded: one probe of `current` (bump: found, its
   * count made one more; else its free slot kept), `previous` probed only on a miss; the generations turn when
   * `current` holds `window` keys.
   */
  private count(a: number, b: number, c: number): number {
    const cur = this.current;
    let n = cur.bump(a, b, c) + 1;
    if (n === 0) {
      // (previous is another table: its probe leaves current's free slot as it was.)
      n = this.previous.get(a, b, c) + 1;
      cur.put(a, b, c, n);
    }
    if (cur.size >= this.window) {
      const old = this.previous;
      old.clear();
      this.previous = cur;
      this.current = old;
    }
    return n;
  }
}

const word = (d: Uint8Array, i: number): number =>
  (((d[i] as number) << 24) | ((d[i + 1] as number) << 16) | ((d[i + 2] as number) << 8) | (d[i + 3] as number)) >>> 0;

const wordOfText = (d: string, i: number): number =>
  ((d.charCodeAt(i) << 24) | (d.charCodeAt(i + 1) << 16) | (d.charCodeAt(i + 2) << 8) | d.charCodeAt(i + 3)) >>> 0;

/** The seed of every DigestTable's slots in this process (see OccurrenceCounter). */
const SLOT_SEED = crypto.randomBytes(4).readUInt32LE(0);

/** MurmurHash3's 32-bit finaliser: every bit of `h` moves every bit of the result. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * The first slot of key (a, b, …): its first two words mixed under the process's seed. Lines searched for digests
 * that agree on any bits of one word still scatter; to share a slot sequence they would need the same 64 bits.
 */
const slotOf = (a: number, b: number): number => fmix32(a ^ fmix32(b ^ SLOT_SEED));

/**
 * An open-addressing (linear probing) map from 96-bit keys to counts, for up to `capacity` keys. A slot is four
 * consecutive words (the key's three, then count + 1, 0 for empty), so a probe reads one cache line, not one in
 * the keys and one in the counts (each table is 8 MiB: a probe is a cache miss). Why: the counter was 4.7% of the
 * main thread's samples (`npm run bench:import -- --profile`, 1M lines, load 12), two misses per table probed.
 * A key's first slot is slotOf(a, b): keys chosen to share low bits, or their whole first word, do not share slots.
 */
class DigestTable {
  size = 0;
  /** Per slot: key words a, b, c, then count + 1 (0: empty). */
  private readonly slots: Uint32Array;
  private readonly mask: number;
  /** The slot (its first word's index) where the last probe that found nothing stopped: the key's place. */
  private free = 0;
  constructor(capacity: number) {
    let n = 16;
    while (n < capacity * 2) n *= 2;
    this.mask = n - 1;
    this.slots = new Uint32Array(n * 4);
  }

  /** The count of key (a, b, c), -1 when absent (then `put` places it where this probe stopped). */
  get(a: number, b: number, c: number): number {
    const t = this.slots;
    for (let i = slotOf(a, b) & this.mask; ; i = (i + 1) & this.mask) {
      const k = i * 4;
      const n = t[k + 3] as number;
      if (n === 0) {
        this.free = k;
        return -1;
      }
      if (t[k] === a && t[k + 1] === b && t[k + 2] === c) return n - 1;
    }
  }

  /**
   * The count of key (a, b, c) before this call, made one more when present; -1 when absent (then `put` places
   * it where this probe stopped). One probe where get then set took two.
   */
  bump(a: number, b: number, c: number): number {
    const t = this.slots;
    for (let i = slotOf(a, b) & this.mask; ; i = (i + 1) & this.mask) {
      const k = i * 4;
      const n = t[k + 3] as number;
      if (n === 0) {
        this.free = k;
        return -1;
      }
      if (t[k] === a && t[k + 1] === b && t[k + 2] === c) {
        t[k + 3] = n + 1;
        return n - 1;
      }
    }
  }

  /** Puts the absent key (a, b, c) with `count` at the slot where the last get or bump that found nothing stopped. */
  put(a: number, b: number, c: number, count: number): void {
    const t = this.slots;
    const k = this.free;
    t[k] = a;
    t[k + 1] = b;
    t[k + 2] = c;
    t[k + 3] = count + 1;
    this.size++;
  }

  clear(): void {
    if (this.size === 0) return;
    this.slots.fill(0);
    this.size = 0;
  }
}

/** sha256 of the line (base64url). */
export function lineHash(line: string): string {
  return crypto.createHash('sha256').update(line).digest('base64url');
}

/** Bytes read from the file at a time. */
const READ_CHUNK = 1 << 20;

/**
 * An import's batches between its stream and the store: at most IMPORT_IN_FLIGHT handed on at once (`room` waits
 * for a slot), each one's counts added to the stats, and onProgress told, only once the store acknowledged it
 * (after its transaction committed): what is reported imported survives a crash. The first failure is kept and
 * thrown by the next `room`, `check` or `drain`. Both import paths hand on through it (importFile, importParallel).
 */
export class DurableAppends {
  private readonly inFlight = new Set<Promise<void>>();
  private failure: unknown = null;

  constructor(
    private readonly stream: ImportStream,
    private readonly stats: ImportStats,
    private readonly totalBytes: number,
    private readonly onProgress: ImportOptions['onProgress'],
  ) {}

  /** Hands `batch` on to be stored; once durable its counts join the stats, reported with `offset` bytes done. */
  append(batch: WriteBatch, offset: number): void {
    const { stats } = this;
    const p: Promise<void> = this.stream
      .append(batch)
      .then((inserted) => {
        stats.accepted += batch.n;
        stats.inserted += inserted;
        this.onProgress?.(offset, this.totalBytes, stats);
      })
      .catch((err: unknown) => {
        this.failure ??= err;
      })
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  /** Waits until fewer than IMPORT_IN_FLIGHT batches are in flight; throws the first failure. */
  async room(): Promise<void> {
    while (this.inFlight.size >= IMPORT_IN_FLIGHT && this.failure === null) await Promise.race(this.inFlight);
    this.check();
  }

  /** Throws the first failure of a batch handed on, if any. */
  check(): void {
    if (this.failure !== null) throw this.failure;
  }

  /** Waits for every batch handed on; throws the first failure. */
  async drain(): Promise<void> {
    await Promise.all(this.inFlight);
    this.check();
  }

  /** Waits for every batch handed on to settle, failed or not (before the caller may close the store). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }
}

export async function importFile(ingest: IngestService, opts: ImportOptions): Promise<ImportStats> {
  const workers = opts.workers ?? importThreads(fs.statSync(opts.file).size);
  if (workers > 0) return importParallel(ingest, opts, workers, opts.batchSize ?? IMPORT_BATCH, opts.parallel);
  const batchSize = opts.batchSize ?? IMPORT_BATCH;
  const totalBytes = fs.statSync(opts.file).size;
  const occurrences = new OccurrenceCounter();
  const stream = await ingest.importStream(opts.projectId);
  let bytesRead = 0;
  const stats: ImportStats = { lines: 0, unparseable: 0, accepted: 0, inserted: 0, rejected: 0, samples: [] };
  // Up to IMPORT_IN_FLIGHT batches are handed to ingest at once, so the writer writes one while the next lines
  // are parsed (and the group commit may take two in one transaction). Reading waits for a slot: the memory
  // held does not grow with the file.
  const appends = new DurableAppends(stream, stats, totalBytes, opts.onProgress);
  /** Hands the batch built so far on to be stored. */
  const handOn = () => {
    const batch = stream.take();
    if (batch !== null) appends.append(batch, bytesRead);
  };
  // Each parsed line is prepared at once (ingest.ts ImportStream: what a batch holds is packed, no parsed event
  // lives on), its occurrence counted here, in the file's order, refused lines too.
  const lines = new LineHandler(
    opts.format,
    (ev, ms, digest, keyMs) => {
      const occurrence = typeof digest === 'string' ? occurrences.nextDigestText(digest) : occurrences.nextDigest(digest);
      const error = stream.add(ev, ms, digest, occurrence, keyMs);
      if (error === null && stream.size >= batchSize) handOn();
      return error;
    },
    MAX_SAMPLES,
    stats,
  );

  const splitter = new LineSplitter();
  const fh = await fs.promises.open(opts.file, 'r');
  try {
    for (;;) {
      const chunk = Buffer.allocUnsafe(READ_CHUNK);
      const { bytesRead: n } = await fh.read(chunk, 0, READ_CHUNK, null);
      if (n === 0) break;
      bytesRead += n;
      // The lines of a chunk are prepared at once, the batches they fill handed on as they fill; then reading
      // waits for the batches in flight to be IMPORT_IN_FLIGHT at most, so at most one chunk's worth of events is
      // handed on beyond that bound.
      splitter.push(chunk.subarray(0, n), lines.onLine, lines.onTooLong);
      await appends.room();
      await stream.refresh();
    }
    // A last line without a line break is held back: in a log being written it may be cut mid-line, and what is
    // there so far can parse (a combined line cut after its size is a common-format one) as a different line than
    // the whole one, which the next import would then add as well. Not counted in `lines`; named in a sample.
    splitter.end(() => {
      lines.lineNo++;
      lines.sample(HELD_BACK);
    }, lines.onTooLong);
  } finally {
    await fh.close();
  }
  handOn();
  await appends.drain();
  stats.samples.sort((a, b) => a.line - b.line);
  opts.onProgress?.(totalBytes, totalBytes, stats);
  return stats;
}
