// A long window's day sets held a range of paths at a time (count-threads.ts countRanges), so that counting a large
// window does not hold all its pairs at once. Sets are added as they are decoded (summary-service.ts
// loadVisitorSets); a set also held by a cache ("resident") is kept whole, as it is in memory anyway, and counted
// range by range through countPaths' path bounds. Any other set is cut at the ranges' bounds and its parts written
// to an unlinked temporary file, in sharedArrays' layout (the set itself can then be collected), and read back,
// a range at a time, into one shared buffer reused from range to range, when their range is counted. The file is
// made where the caller says (the service: next to its SQLite file, which is on disk; else the system's temporary
// directory, which may be a tmpfs: then the pages are still memory, only not the process's). A part the file cannot
// take (none could be made, or the disk is full) is held in memory instead: the same answer, without the bound.
// Counting range by range is exact: a path lies in one range, so its visitors over the window are all in memory
// when it is counted; the site-wide bits stay in the marks arrays from one range to the next.
//
// How many ranges: windows whose non-resident sets are expected (1.5 × the first such set's bytes × the days still
// to come) to stay within `budget` bytes are held whole (no file), as before; larger ones are cut into
// ceil(expected / budget) ranges, at path ids where the first set's pairs divide evenly (a year's days are alike),
// so a range's parts are about `budget` bytes.
import fs from 'node:fs';
import os from 'node:os';
import { openUnlinked, writeAllAt } from '../../lib/scratch-file.ts';
import { type DaySet, daySetBytes, daySetLayout, decodeDaySet, LITTLE_ENDIAN, lowerBound, sharedArrays } from './daysets.ts';

/** Bytes of non-resident sets a long window holds at once before it is counted in ranges (at 100M events a year's are ~380 MB). */
export const SPILL_BUDGET = 64 * 1024 * 1024;

/** Days of a window differ (weekends, growth: 2× between a year's quietest and busiest): the plan takes the first as 1.5× its size. */
const DAY_SPREAD = 1.5;

/** At most this many ranges (a window is read back this many times). */
const MAX_RANGES = 64;

const NO_PATH = 0x1_0000_0000;

interface Part {
  /** The cut set's fields but its arrays (holding the set itself would keep its buffer alive). */
  meta: Omit<DaySet, 'pathIds' | 'starts' | 'pairs'>;
  nPaths: number;
  nPairs: number;
  /** Where in the file, or the part itself when the file could not take it (held in memory instead). */
  pos: number;
  held?: DaySet;
}

/** The path ids that cut `s`'s pairs into `k` parts of about as many pairs (k + 1 bounds, 0 first, 2^32 last). */
export function rangeBounds(s: Pick<DaySet, 'pathIds' | 'starts'>, k: number): number[] {
  const bounds = [0];
  const n = s.starts[s.pathIds.length] as number;
  for (let r = 1; r < k; r++) {
    // The path holding the (r / k)-th pair starts range r (unless it starts the previous one).
    const target = Math.floor((n * r) / k);
    let lo = 0;
    let hi = s.pathIds.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((s.starts[mid + 1] as number) <= target) lo = mid + 1;
      else hi = mid;
    }
    const p = lo < s.pathIds.length ? (s.pathIds[lo] as number) : NO_PATH;
    if (p > (bounds[bounds.length - 1] as number) && p < NO_PATH) bounds.push(p);
  }
  bounds.push(NO_PATH);
  return bounds;
}

export class RangeSpill {
  /** Range bounds once known: range r is path ids [bounds[r], bounds[r + 1]). */
  bounds: number[] = [0, NO_PATH];
  /** Sets held whole (resident, or every set while the window is counted in one range). */
  readonly whole: DaySet[] = [];
  /** Per range, its parts in the file. */
  private parts: Part[][] = [];
  /** Where a range's parts are read (reused from one range to the next: no garbage per range). */
  private arena: SharedArrayBuffer | null = null;
  private fd = -1;
  private pos = 0;
  /** The file could not be made or written: parts are held in memory from then on. */
  private failed = false;
  private expected = 0;
  private planned = false;
  /** Visitor range of every set added (the marks' bounds). */
  base = Number.POSITIVE_INFINITY;
  top = -1;
  pairs = 0;
  /** Bytes written to the file (for tests and the benchmark). */
  spilled = 0;

  constructor(
    private readonly budget: number = SPILL_BUDGET,
    private readonly dir: string = os.tmpdir(),
  ) {}

  /** The number of non-resident sets still to come (loadVisitorSets knows it before it reads them). */
  expect(days: number): void {
    this.expected = days;
  }

  get ranges(): number {
    return this.bounds.length - 1;
  }

  add(s: DaySet, resident: boolean): void {
    if (s.pairs.length === 0) return;
    this.note(s.minVisitor, s.maxVisitor, s.pairs.length);
    if (!resident) this.plan(s, daySetBytes(s));
    if (resident || this.ranges === 1) {
      this.whole.push(s);
      return;
    }
    this.cut(s, s, (from, to) => s.pairs.subarray(from, to));
  }

  /**
   * Adds a non-resident day set from its blob (daysets.ts encodeDaySet): formats 2 and 3 are cut from the blob's
   * bytes as they are (no decoded copy of the set); a window held whole, and format 1, are decoded.
   */
  addEncoded(day: number, version: number, data: Uint8Array): void {
    const l = this.ranges === 1 && this.planned ? null : daySetLayout(data);
    if (!l || !LITTLE_ENDIAN) {
      this.add(decodeDaySet(day, version, data), false);
      return;
    }
    if (l.nPairs === 0) return;
    this.plan(l, 200 + (2 * l.pathIds.length + 1 + l.nPairs) * 4);
    if (this.ranges === 1) {
      this.add(decodeDaySet(day, version, data), false);
      return;
    }
    this.note(l.minVisitor, l.maxVisitor, l.nPairs);
    const meta = { day, version, base: l.base, minVisitor: l.minVisitor, maxVisitor: l.maxVisitor };
    this.cut(meta, l, (from, to) => data.subarray(l.pairsAt + from * 4, l.pairsAt + to * 4));
  }

  private note(minVisitor: number, maxVisitor: number, pairs: number): void {
    if (minVisitor < this.base) this.base = minVisitor;
    if (maxVisitor > this.top) this.top = maxVisitor;
    this.pairs += pairs;
  }

  /** At the first non-resident set: how many ranges, and their bounds. */
  private plan(s: Pick<DaySet, 'pathIds' | 'starts'>, bytes: number): void {
    if (this.planned) return;
    this.planned = true;
    const k = Math.min(MAX_RANGES, Math.ceil((DAY_SPREAD * bytes * Math.max(1, this.expected)) / this.budget));
    if (k > 1) {
      this.bounds = rangeBounds(s, k);
      this.parts = this.bounds.slice(1).map(() => []);
    }
  }

  /** Writes each range's part of a set (`pairs(from, to)`: its pairs from … to − 1, as words or their bytes). */
  private cut(meta: Part['meta'], s: Pick<DaySet, 'pathIds' | 'starts'>, pairs: (from: number, to: number) => ArrayBufferView): void {
    // A copy: `meta` may be the set itself, whose arrays must not stay reachable.
    const meta0 = { day: meta.day, version: meta.version, base: meta.base, minVisitor: meta.minVisitor, maxVisitor: meta.maxVisitor };
    const b = this.bounds;
    let k0 = 0;
    for (let r = 0; r < b.length - 1; r++) {
      const k1 = lowerBound(s.pathIds, b[r + 1] as number);
      if (k1 > k0) this.write(r, meta0, s, k0, k1, pairs);
      k0 = k1;
    }
  }

  private write(
    r: number,
    meta: Part['meta'],
    s: Pick<DaySet, 'pathIds' | 'starts'>,
    k0: number,
    k1: number,
    pairs: (from: number, to: number) => ArrayBufferView,
  ): void {
    const from = s.starts[k0] as number;
    const to = s.starts[k1] as number;
    const starts = new Uint32Array(k1 - k0 + 1);
    for (let k = k0; k <= k1; k++) starts[k - k0] = (s.starts[k] as number) - from;
    const pieces: ArrayBufferView[] = [s.pathIds.subarray(k0, k1), starts, pairs(from, to)];
    const part: Part = { meta, nPaths: k1 - k0, nPairs: to - from, pos: this.pos };
    try {
      if (this.fd < 0 && !this.failed) this.fd = openUnlinked(this.dir, '.inkwell-spill');
      if (this.failed) throw new Error('spill file unavailable');
      let at = this.pos;
      for (const a of pieces) {
        const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
        writeAllAt(this.fd, bytes, at);
        at += bytes.length;
      }
      this.spilled += at - this.pos;
      this.pos = at;
    } catch {
      // No file (none could be made, or it is full): this part and the later ones are held in memory, as a window
      // within the budget is. The answer is the same; only the memory bound is lost.
      this.failed = true;
      const a = sharedArrays(part.nPaths, part.nPairs);
      a.pathIds.set(pieces[0] as Uint32Array);
      a.starts.set(starts);
      new Uint8Array(a.pairs.buffer, a.pairs.byteOffset, a.pairs.byteLength).set(
        new Uint8Array((pieces[2] as ArrayBufferView).buffer, (pieces[2] as ArrayBufferView).byteOffset, a.pairs.byteLength),
      );
      part.held = { ...meta, ...a };
    }
    (this.parts[r] as Part[]).push(part);
  }

  /**
   * The sets to count for range r: the whole ones (countPaths bounds them) and the range's parts, read into an
   * arena that the next read(…) overwrites (`fresh`: into buffers of their own instead).
   */
  read(r: number, fresh = false): DaySet[] {
    const out: DaySet[] = [...this.whole];
    const parts = this.parts[r] ?? [];
    const size = (p: Part) => (p.held ? 0 : (2 * p.nPaths + 1 + p.nPairs) * 4);
    if (!fresh) {
      let need = 0;
      for (const p of parts) need += size(p);
      if (!this.arena || this.arena.byteLength < need) {
        // Sized for the largest range at once.
        let most = need;
        for (const ps of this.parts)
          most = Math.max(
            most,
            ps.reduce((a, p) => a + size(p), 0),
          );
        this.arena = new SharedArrayBuffer(most);
      }
    }
    let at = 0;
    for (const p of parts) {
      if (p.held) {
        out.push(p.held);
        continue;
      }
      const buf = fresh ? new SharedArrayBuffer(size(p)) : (this.arena as SharedArrayBuffer);
      const off = fresh ? 0 : at;
      const bytes = new Uint8Array(buf, off, size(p));
      let done = 0;
      while (done < bytes.length) {
        const n = fs.readSync(this.fd, bytes, done, bytes.length - done, p.pos + done);
        if (n === 0) throw new Error('spilled day set truncated');
        done += n;
      }
      out.push({
        ...p.meta,
        pathIds: new Uint32Array(buf, off, p.nPaths),
        starts: new Uint32Array(buf, off + p.nPaths * 4, p.nPaths + 1),
        pairs: new Uint32Array(buf, off + (2 * p.nPaths + 1) * 4, p.nPairs),
      });
      at += size(p);
    }
    return out;
  }

  /** Every set in memory at once (each part in a buffer of its own). */
  readAll(): DaySet[] {
    const out = this.read(0, true);
    for (let r = 1; r < this.ranges; r++) out.push(...this.read(r, true).slice(this.whole.length));
    return out;
  }

  /** Closes the file (its space is freed: it is unlinked). */
  close(): void {
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
    this.parts = [];
    this.arena = null;
  }
}
