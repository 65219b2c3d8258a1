// The line handling of a log import, written once for both paths: the serial import (import.ts importFile) and
// an import thread's pieces (import-chunk.ts). A line is parsed (combined lines that start with a visible ASCII
// character from their bytes, logparse.ts parseCombinedBytes; the rest decoded and parsed as text), counted
// (lines, unparseable, rejected, the first problems with their line numbers) and digested (sha256 of its
// content), and handed with its digest to the path's own `keep`, which prepares and keeps it (the serial import:
// its occurrence counted and added to the stream's batch; an import thread: added to its piece's batch, its
// occurrence left to the ordered stage). Why one: the dedup keys of the two paths are equal only while their
// lines are parsed, digested and counted alike (test/analytics/import-parallel.test.ts compares them).
import crypto from 'node:crypto';
import { MAX_LINE_BYTES } from './line-splitter.ts';
import { combinedBytesState, parseCombinedBytes, parseCombinedLine, parseJsonLine, type RawEvent } from './logparse.ts';

/**
 * What a path does with a parsed line: prepare it and keep it, returning null, or the reason validation refused
 * it. `ms`: the event's time as the byte parser read it (prepare.ts prepareParsed), NaN for a line parsed as
 * text (prepare.ts prepare); `digest`: the line's sha256, 32 bytes or (byte-parsed lines) 32 latin1 characters;
 * `keyMs`: the time its line key carries (NaN: none).
 */
export type KeepLine = (ev: RawEvent, ms: number, digest: Uint8Array | string, keyMs: number) => string | null;

/** What a LineHandler counts into (ImportStats, an import thread's ChunkResult). */
export interface LineCounts {
  /** Non-empty lines. */
  lines: number;
  unparseable: number;
  rejected: number;
  /** The first problems, `line` counted from 1 since lineNo was last set to 0. */
  samples: { line: number; error: string }[];
}

export class LineHandler {
  /** The last line's number (every line counts: blank and too long ones too). */
  lineNo = 0;
  /** For LineSplitter.push: one line of a buffer. */
  readonly onLine: (buf: Buffer, start: number, end: number) => void;
  /** For LineSplitter.push and end: a line longer than MAX_LINE_BYTES. */
  readonly onTooLong: () => void;
  /** Records a problem at the current line number (the last line handed in), while under `maxSamples`. */
  readonly sample: (error: string) => void;

  /** `counts`: where the lines are counted (may be replaced between lines: an import thread's next piece). */
  constructor(
    format: 'combined' | 'jsonl',
    keep: KeepLine,
    maxSamples: number,
    public counts: LineCounts,
  ) {
    const combined = format === 'combined';
    const parse: (line: string) => RawEvent | null = combined ? parseCombinedLine : parseJsonLine;
    // Events without their ISO timestamp: `keep` gets their time as `ms` (prepare.ts makes the text when it needs it).
    const bytesState = combinedBytesState(false);
    const notInFormat = `not a ${combined ? 'combined-format' : 'JSON event'} line`;
    const sample = (error: string) => {
      const { samples } = this.counts;
      if (samples.length < maxSamples) samples.push({ line: this.lineNo, error });
    };
    this.sample = sample;
    const kept = (error: string | null) => {
      if (error !== null) {
        this.counts.rejected++;
        sample(error);
      }
    };
    /** A line as text (node:readline's decoding), parsed and keyed as it always was. */
    const textLine = (line: string) => {
      if (line.trim() === '') return;
      this.counts.lines++;
      const ev = parse(line);
      if (!ev) {
        this.counts.unparseable++;
        sample(notInFormat);
        return;
      }
      kept(keep(ev, Number.NaN, crypto.hash('sha256', line, 'buffer'), ev.timestamp ? Date.parse(ev.timestamp) : Number.NaN));
    };
    this.onLine = (buf: Buffer, start: number, end: number) => {
      this.lineNo++;
      const first = buf[start];
      // Combined lines that start with a visible ASCII character go through the byte parser; it sends back the
      // rest (non-ASCII, escapes) as undefined. For its lines the text is their bytes, so the hash of the bytes
      // is the hash of the text: keys do not change.
      if (combined && first !== undefined && first > 32 && first < 127) {
        const ev = parseCombinedBytes(buf, start, end, bytesState);
        if (ev !== undefined) {
          this.counts.lines++;
          if (ev === null) {
            this.counts.unparseable++;
            sample('not a combined-format line');
            return;
          }
          const ms = bytesState.ms;
          // As a latin1 ('binary') string (import.ts OccurrenceCounter nextDigestText): the same 32 bytes.
          kept(keep(ev, ms, crypto.hash('sha256', buf.subarray(start, end), 'binary'), ms));
          return;
        }
      }
      textLine(buf.toString('utf8', start, end));
    };
    this.onTooLong = () => {
      this.lineNo++;
      this.counts.lines++;
      this.counts.unparseable++;
      sample(`line longer than ${MAX_LINE_BYTES} bytes`);
    };
  }
}
