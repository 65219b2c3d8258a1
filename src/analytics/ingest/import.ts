// Access-log import (`inkwell analytics import`): the file read in chunks and split into lines on bytes
// (line-splitter.ts), combined-format lines parsed from their bytes (logparse.ts: parseCombinedBytes; other lines
// decoded and parsed as text), events batched through the same ingest service as the API, a bounded number of
// batches in flight (reading waits for the writer).
//
// Idempotency: every line gets a dedup key = its time + sha256(line content + '\n' + occurrence), where occurrence
// counts earlier identical lines in the same file (two identical lines are two requests: same client, same
// path, same second). The raw-events table has a unique index on (project, dedup key), so importing a file
// again — or a log that has grown since — adds only lines not stored before. Occurrences are counted within
// a window of recent distinct lines (IMPORT_DEDUP_WINDOW), which bounds memory for huge files: identical
// lines are at most a second apart in a time-ordered log, far inside the window. Keys depend on the content
// only, not on the file name, so a rotated (renamed) log imports as the same lines.
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { IngestService } from './ingest.ts';
import { LineSplitter, MAX_LINE_BYTES } from './line-splitter.ts';
import { combinedBytesState, parseCombinedBytes, parseCombinedLine, parseJsonLine, type RawEvent } from './logparse.ts';

export type LogFormat = 'combined' | 'jsonl';

export interface ImportStats {
  /** Non-empty lines read. */
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
}

export const IMPORT_DEDUP_WINDOW = 200_000;
/**
 * Events per ingest call, and calls in flight. Batches of 5,000, two at a time, let the group commit write up to
 * 10,000 events per transaction: the writer thread's CPU per imported line fell from 19 to 15.5 µs against 1,000 ×
 * 4 (200k lines of bench/import.ts's log; the writer thread bounds the import's speed).
 */
const IMPORT_BATCH = 5000;
const IMPORT_IN_FLIGHT = 2;
const MAX_SAMPLES = 10;

/** Counts occurrences of identical lines within a window of recent distinct lines (two generations). */
export class OccurrenceCounter {
  private current = new Map<string, number>();
  private previous = new Map<string, number>();
  constructor(private readonly window = IMPORT_DEDUP_WINDOW) {}

  /** 0 for the first time a line is seen, 1 for the second, … */
  next(lineHash: string): number {
    const seen = this.current.get(lineHash) ?? this.previous.get(lineHash);
    const n = seen === undefined ? 0 : seen + 1;
    this.current.set(lineHash, n);
    if (this.current.size >= this.window) {
      this.previous = this.current;
      this.current = new Map();
    }
    return n;
  }
}

/** sha256 of the line (base64url). */
export function lineHash(line: string): string {
  return crypto.createHash('sha256').update(line).digest('base64url');
}

/**
 * The dedup key of the `occurrence`-th identical copy (0-based) of a line with this hash. Keys start with
 * the event time (base 36 ms, when the line has one) so that a time-ordered log inserts them at the end of
 * the unique index instead of at random places (far fewer pages written per transaction).
 */
export function lineDedupKey(hash: string, occurrence: number, timestamp?: string): string {
  return lineDedupKeyAt(hash, occurrence, timestamp ? Date.parse(timestamp) : Number.NaN);
}

/** lineDedupKey for a time already in epoch ms (NaN: none). */
export function lineDedupKeyAt(hash: string, occurrence: number, ms: number): string {
  const prefix = Number.isFinite(ms) && ms >= 0 ? `${ms.toString(36).padStart(9, '0')}.` : '';
  const h = occurrence === 0 ? hash : crypto.createHash('sha256').update(`${hash}\n${occurrence}`).digest('base64url');
  return prefix + h.slice(0, 32);
}

/** Bytes read from the file at a time. */
const READ_CHUNK = 1 << 20;

export async function importFile(ingest: IngestService, opts: ImportOptions): Promise<ImportStats> {
  const combined = opts.format === 'combined';
  const parse: (line: string) => RawEvent | null = combined ? parseCombinedLine : parseJsonLine;
  const batchSize = opts.batchSize ?? IMPORT_BATCH;
  const totalBytes = fs.statSync(opts.file).size;
  const stats: ImportStats = { lines: 0, unparseable: 0, accepted: 0, inserted: 0, rejected: 0, samples: [] };
  const occurrences = new OccurrenceCounter();
  const bytesState = combinedBytesState();
  let events: RawEvent[] = [];
  let keys: string[] = [];
  let lineNos: number[] = [];
  let lineNo = 0;
  let bytesRead = 0;

  const sample = (line: number, error: string) => {
    if (stats.samples.length < MAX_SAMPLES) stats.samples.push({ line, error });
  };

  // Up to IMPORT_IN_FLIGHT batches are handed to ingest at once, so the writer writes one while the next lines
  // are parsed (and the group commit may take two in one transaction). Reading waits for a slot: the memory
  // held does not grow with the file.
  const inFlight = new Set<Promise<void>>();
  let failure: unknown = null;
  const flush = async () => {
    if (events.length === 0) return;
    const batch = { events, keys, lineNos };
    events = [];
    keys = [];
    lineNos = [];
    const p: Promise<void> = ingest
      .ingest(opts.projectId, batch.events, { source: 'import', dedupKeys: batch.keys })
      .then((r) => {
        stats.accepted += r.accepted;
        stats.inserted += r.inserted;
        stats.rejected += r.rejected.length;
        for (const rej of r.rejected) sample(batch.lineNos[rej.index] as number, rej.error);
        opts.onProgress?.(bytesRead, totalBytes, stats);
      })
      .catch((err: unknown) => {
        failure ??= err;
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size >= IMPORT_IN_FLIGHT) await Promise.race(inFlight);
    if (failure) throw failure;
  };

  const add = (ev: RawEvent, key: string) => {
    events.push(ev);
    keys.push(key);
    lineNos.push(lineNo);
  };

  /** A line as text (node:readline's decoding), parsed and keyed as it always was. */
  const textLine = (line: string) => {
    if (line.trim() === '') return;
    stats.lines++;
    const ev = parse(line);
    if (!ev) {
      stats.unparseable++;
      sample(lineNo, `not a ${combined ? 'combined-format' : 'JSON event'} line`);
      return;
    }
    const hash = lineHash(line);
    add(ev, lineDedupKey(hash, occurrences.next(hash), ev.timestamp));
  };

  const onLine = (buf: Buffer, start: number, end: number) => {
    lineNo++;
    const first = buf[start];
    // Combined lines that start with a visible ASCII character go through the byte parser; it sends back the rest
    // (non-ASCII, escapes) as undefined. For its lines the text is their bytes, so the hash of the bytes is the
    // hash of the text: keys do not change.
    if (combined && first !== undefined && first > 32 && first < 127) {
      const ev = parseCombinedBytes(buf, start, end, bytesState);
      if (ev !== undefined) {
        stats.lines++;
        if (ev === null) {
          stats.unparseable++;
          sample(lineNo, 'not a combined-format line');
          return;
        }
        const hash = crypto.hash('sha256', buf.subarray(start, end), 'base64url');
        add(ev, lineDedupKeyAt(hash, occurrences.next(hash), bytesState.ms));
        return;
      }
    }
    textLine(buf.toString('utf8', start, end));
  };

  const onTooLong = () => {
    lineNo++;
    stats.lines++;
    stats.unparseable++;
    sample(lineNo, `line longer than ${MAX_LINE_BYTES} bytes`);
  };

  const splitter = new LineSplitter();
  const fh = await fs.promises.open(opts.file, 'r');
  try {
    for (;;) {
      const chunk = Buffer.allocUnsafe(READ_CHUNK);
      const { bytesRead: n } = await fh.read(chunk, 0, READ_CHUNK, null);
      if (n === 0) break;
      bytesRead += n;
      // The lines of a chunk are parsed at once; the batches they fill are handed on after (flush waits for a
      // slot), so at most one chunk's worth of events is added beyond the in-flight bound.
      splitter.push(chunk.subarray(0, n), onLine, onTooLong);
      while (events.length >= batchSize) await flushSome(batchSize);
    }
    splitter.end(onLine, onTooLong);
  } finally {
    await fh.close();
  }
  while (events.length > 0) await flushSome(batchSize);
  await Promise.all(inFlight);
  if (failure) throw failure;
  stats.samples.sort((a, b) => a.line - b.line);
  opts.onProgress?.(totalBytes, totalBytes, stats);
  return stats;

  /** Hands the first `n` collected events on as one batch. */
  async function flushSome(n: number): Promise<void> {
    if (events.length <= n) return flush();
    const restEvents = events.slice(n);
    const restKeys = keys.slice(n);
    const restLines = lineNos.slice(n);
    events.length = n;
    keys.length = n;
    lineNos.length = n;
    await flush();
    events = restEvents;
    keys = restKeys;
    lineNos = restLines;
  }
}
