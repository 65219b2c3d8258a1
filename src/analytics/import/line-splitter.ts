// Splits a byte stream into lines for `inkwell analytics import`, on bytes: no string is made of a line that the
// caller does not ask for (node:readline decodes every chunk into one string and hands out slices of it, which
// keep the whole chunk alive as long as any cache holds a piece of a line: a gigabyte of RSS on a 1M-line log,
// and about a third of the import's main-thread time; bench/import.ts).
//
// Line breaks are those node:readline (with crlfDelay: Infinity) sees, so lines and their numbers are the same
// as before: LF, CRLF, and a lone CR; a CR at the end of one chunk and an LF at the start of the next are one
// CRLF. The last line counts when it is not empty, with or without a final line break.
//
// Memory is bounded: a line longer than `maxLine` bytes is not buffered; it is reported once through `tooLong`
// when its end is reached (or at the end of the input), and its bytes are dropped.

/** Lines longer than this are skipped (reported as too long): real access-log lines are a few KiB at most. */
export const MAX_LINE_BYTES = 1 << 20;

const LF = 10;
const CR = 13;

/** Receives each complete line as a range of a buffer (valid only during the call). */
export type LineSink = (buf: Buffer, start: number, end: number) => void;

export class LineSplitter {
  /** Bytes of the unfinished line from earlier chunks. */
  private carry: Buffer | null = null;
  /** Inside a line longer than maxLine: its bytes are dropped until its end. */
  private skipping = false;
  /** The previous chunk ended with CR: an LF starting the next one belongs to it. */
  private afterCR = false;

  constructor(private readonly maxLine = MAX_LINE_BYTES) {}

  /** Calls `line` for every line completed in `chunk`, `tooLong` once for every line longer than maxLine. */
  push(chunk: Buffer, line: LineSink, tooLong: () => void): void {
    const n = chunk.length;
    let i = 0;
    if (this.afterCR) {
      this.afterCR = false;
      if (n > 0 && chunk[0] === LF) i = 1;
    }
    let start = i;
    // The next CR at or after i (-1: none in this chunk): looked up again only once passed, so a file without CRs
    // costs one search per chunk, and one with CRLFs one memchr per line.
    let cr = chunk.indexOf(CR, i);
    for (;;) {
      if (cr !== -1 && cr < i) cr = chunk.indexOf(CR, i);
      const lf = chunk.indexOf(LF, i);
      let end: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        end = cr;
        if (cr + 1 < n) i = chunk[cr + 1] === LF ? cr + 2 : cr + 1;
        else {
          i = n;
          this.afterCR = true;
        }
      } else if (lf !== -1) {
        end = lf;
        i = lf + 1;
      } else break;
      this.emit(chunk, start, end, line, tooLong);
      start = i;
    }
    if (start >= n) return;
    if (this.skipping) return;
    const pending = (this.carry?.length ?? 0) + (n - start);
    if (pending > this.maxLine) {
      this.skipping = true;
      this.carry = null;
    } else this.carry = this.carry ? Buffer.concat([this.carry, chunk.subarray(start, n)]) : Buffer.from(chunk.subarray(start, n));
  }

  /** The end of the input: the last line, when it had no line break. */
  end(line: LineSink, tooLong: () => void): void {
    if (this.skipping) {
      this.skipping = false;
      tooLong();
    } else if (this.carry && this.carry.length > 0) line(this.carry, 0, this.carry.length);
    this.carry = null;
    this.afterCR = false;
  }

  private emit(chunk: Buffer, start: number, end: number, line: LineSink, tooLong: () => void): void {
    if (this.skipping) {
      this.skipping = false;
      tooLong();
      return;
    }
    const carry = this.carry;
    if (carry === null) {
      if (end - start > this.maxLine) tooLong();
      else line(chunk, start, end);
      return;
    }
    this.carry = null;
    if (carry.length + (end - start) > this.maxLine) tooLong();
    else {
      const whole = Buffer.concat([carry, chunk.subarray(start, end)]);
      line(whole, 0, whole.length);
    }
  }
}
