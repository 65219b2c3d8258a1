// Access-log import (`inkwell analytics import`): a streaming line reader that batches events through the
// same ingest service as the API.
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
import readline from 'node:readline';
import type { IngestService } from './ingest.ts';
import { parseCombinedLine, parseJsonLine, type RawEvent } from './logparse.ts';

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
const IMPORT_IN_FLIGHT = 4;
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
  const ms = timestamp ? Date.parse(timestamp) : Number.NaN;
  const prefix = Number.isFinite(ms) && ms >= 0 ? `${ms.toString(36).padStart(9, '0')}.` : '';
  const h = occurrence === 0 ? hash : crypto.createHash('sha256').update(`${hash}\n${occurrence}`).digest('base64url');
  return prefix + h.slice(0, 32);
}

export async function importFile(ingest: IngestService, opts: ImportOptions): Promise<ImportStats> {
  const parse: (line: string) => RawEvent | null = opts.format === 'combined' ? parseCombinedLine : parseJsonLine;
  const batchSize = opts.batchSize ?? 1000;
  const totalBytes = fs.statSync(opts.file).size;
  const stream = fs.createReadStream(opts.file, { highWaterMark: 1 << 20 });
  const lines = readline.createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  const stats: ImportStats = { lines: 0, unparseable: 0, accepted: 0, inserted: 0, rejected: 0, samples: [] };
  const occurrences = new OccurrenceCounter();
  let events: RawEvent[] = [];
  let keys: string[] = [];
  let lineNos: number[] = [];
  let lineNo = 0;

  // Up to IMPORT_IN_FLIGHT batches are handed to ingest at once, so the group commit writes several per
  // transaction (one fsync) while the next lines are parsed.
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
        for (const rej of r.rejected)
          if (stats.samples.length < MAX_SAMPLES) stats.samples.push({ line: batch.lineNos[rej.index] as number, error: rej.error });
        opts.onProgress?.(stream.bytesRead, totalBytes, stats);
      })
      .catch((err: unknown) => {
        failure ??= err;
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
    if (inFlight.size >= IMPORT_IN_FLIGHT) await Promise.race(inFlight);
    if (failure) throw failure;
  };

  for await (const raw of lines) {
    lineNo++;
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') continue;
    stats.lines++;
    const ev = parse(line);
    if (!ev) {
      stats.unparseable++;
      if (stats.samples.length < MAX_SAMPLES)
        stats.samples.push({ line: lineNo, error: `not a ${opts.format === 'combined' ? 'combined-format' : 'JSON event'} line` });
      continue;
    }
    const hash = lineHash(line);
    events.push(ev);
    keys.push(lineDedupKey(hash, occurrences.next(hash), ev.timestamp));
    lineNos.push(lineNo);
    if (events.length >= batchSize) await flush();
  }
  await flush();
  await Promise.all(inFlight);
  if (failure) throw failure;
  stats.samples.sort((a, b) => a.line - b.line);
  opts.onProgress?.(totalBytes, totalBytes, stats);
  return stats;
}
