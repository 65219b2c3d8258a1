// Per-day visitor sets: the compact, immutable form of one (project, day)'s distinct qualifying (path, visitor,
// class) triples, and the exact distinct count over a window of days. Pure: no I/O.
//
// A day set holds the day's distinct (path, visitor) pairs sorted by path, then visitor, each packed in one
// 32-bit word as (visitor − base) × 4 + flags (the visitor's classes on that path: human, ai). `base` is 0
// while every visitor ordinal fits 30 bits, else the day's smallest visitor (ordinals are dense per project since
// migration 0019; those moved from before it were numbered across all projects and may pass 32 bits; one day's
// span must stay within 30 bits). It is part of a day
// summary (day-summary.ts), built from the day's segments, cached in memory and persisted (format 2 / 3: path
// ids as varints, the pairs as raw little-endian words, so loading is a copy).
//
// Counting a window (count-paths.ts): for each path the visitors of its pairs are marked in one byte-per-visitor
// array: bits 0–1 = seen on this path as human / ai (counted and cleared after the path), bits 2–3 = seen anywhere
// in the window as human / ai (site-wide totals, one sweep at the end: siteWideCounts here), exact.

import { ByteReader, ByteWriter } from '../segments/bytes.ts';

export const FLAG_HUMAN = 1;
export const FLAG_AI = 2;

export interface DaySet {
  day: number;
  /** The (project, day) data version the set was built from. */
  version: number;
  /** Distinct path ids, ascending. */
  pathIds: Uint32Array;
  /** Pairs of pathIds[k] are pairs[starts[k] … starts[k + 1]). Length pathIds.length + 1. */
  starts: Uint32Array;
  /** visitor × 4 + (FLAG_HUMAN | FLAG_AI), ascending within each path. */
  pairs: Uint32Array;
  /** What the pairs' visitors are relative to (see above). */
  base: number;
  /** Smallest and largest visitor ordinal, absolute (0, -1 when empty). */
  minVisitor: number;
  maxVisitor: number;
}

/** Largest path id a day set holds. */
export const MAX_PATH_ID = 0xffff_ffff;
/** Largest visitor ordinal above a day set's base (× 4 + flags must fit 32 bits). */
export const MAX_VISITOR = 2 ** 30 - 1;
/** Largest absolute visitor ordinal (segments hold up to 2^53). */
export const MAX_ABSOLUTE_VISITOR = Number.MAX_SAFE_INTEGER;

export class DaySetIdRangeError extends Error {}

/** Approximate bytes a decoded set occupies (for cache bounds). */
export function daySetBytes(s: DaySet): number {
  return 200 + s.pathIds.byteLength + s.starts.byteLength + s.pairs.byteLength;
}

/**
 * A set's three arrays over one SharedArrayBuffer (path ids, starts, pairs), so that a count thread reads them
 * without a copy (count-threads.ts); decoded and built sets are made so.
 */
export function sharedArrays(nPaths: number, nPairs: number): Pick<DaySet, 'pathIds' | 'starts' | 'pairs'> {
  const buf = new SharedArrayBuffer((2 * nPaths + 1 + nPairs) * 4);
  return {
    pathIds: new Uint32Array(buf, 0, nPaths),
    starts: new Uint32Array(buf, nPaths * 4, nPaths + 1),
    pairs: new Uint32Array(buf, (2 * nPaths + 1) * 4, nPairs),
  };
}

/** Whether a set's arrays are over shared memory (a count thread can read them as they are). */
export const isShared = (s: DaySet): boolean =>
  s.pairs.buffer instanceof SharedArrayBuffer && s.starts.buffer instanceof SharedArrayBuffer && s.pathIds.buffer instanceof SharedArrayBuffer;

/** The visitor of a packed pair (relative to its set's base). */
export const pairVisitor = (x: number): number => x >>> 2;
/** The flags of a packed pair. */
export const pairFlags = (x: number): number => x & 3;

/** Accumulates sorted pairs into a day set (shared by the two builders). */
class Builder {
  pairs: Uint32Array;
  m = 0;
  readonly pathIds: number[] = [];
  readonly starts: number[] = [];
  minV = Number.POSITIVE_INFINITY;
  maxV = -1;
  private path = -1;
  private pathStart = 0;

  constructor(
    capacity: number,
    readonly base: number,
  ) {
    this.pairs = new Uint32Array(Math.max(1, capacity));
  }

  startPath(p: number): void {
    if (!(p >= 0 && p <= MAX_PATH_ID)) throw new DaySetIdRangeError(`path id ${p} out of range for a day set`);
    if (p <= this.path) throw new Error('visits must be sorted by path');
    this.path = p;
    this.pathIds.push(p);
    this.starts.push(this.m);
    this.pathStart = this.m;
  }

  /** Adds absolute visitor `abs` with flags `f`. */
  add(abs: number, f: number): void {
    const v = abs - this.base;
    if (!(v >= 0 && v <= MAX_VISITOR)) throw new DaySetIdRangeError(`visitor ${abs} out of range for a day set based at ${this.base}`);
    if (f === 0) throw new Error('unknown class code');
    const m = this.m;
    if (m > this.pathStart) {
      const last = (this.pairs[m - 1] as number) >>> 2;
      if (last === v) {
        this.pairs[m - 1] = (this.pairs[m - 1] as number) | f;
        return;
      }
      if (last > v) throw new Error('visits must be sorted by visitor within a path');
    }
    if (m >= this.pairs.length) {
      const next = new Uint32Array(this.pairs.length * 2);
      next.set(this.pairs);
      this.pairs = next;
    }
    this.pairs[m] = v * 4 + f;
    this.m = m + 1;
    if (abs < this.minV) this.minV = abs;
    if (abs > this.maxV) this.maxV = abs;
  }

  finish(day: number, version: number): DaySet {
    this.starts.push(this.m);
    const arrays = sharedArrays(this.pathIds.length, this.m);
    arrays.pathIds.set(this.pathIds);
    arrays.starts.set(this.starts);
    arrays.pairs.set(this.pairs.subarray(0, this.m));
    return {
      day,
      version,
      base: this.base,
      ...arrays,
      minVisitor: this.m === 0 ? 0 : this.minV,
      maxVisitor: this.m === 0 ? -1 : this.maxV,
    };
  }
}

const flagOf = (code: number, clsHuman: number, clsAi: number): number => (code === clsHuman ? FLAG_HUMAN : code === clsAi ? FLAG_AI : 0);

/** The base for a set of visitors from `min` to `max`: 0 while they fit MAX_VISITOR (the common case), else `min`. */
export const baseFor = (min: number, max: number): number => (max <= MAX_VISITOR ? 0 : min);

/**
 * Builds a day set from visit rows sorted by (path, visitor, class) — parallel arrays of path ids, visitor
 * ordinals and class codes (clsHuman / clsAi). Throws DaySetIdRangeError for ids beyond a day set's range.
 */
export function buildDaySet(
  day: number,
  version: number,
  paths: ArrayLike<number>,
  visitors: ArrayLike<number>,
  classes: ArrayLike<number>,
  clsHuman: number,
  clsAi: number,
): DaySet {
  let lo = Number.POSITIVE_INFINITY;
  let hi = -1;
  for (let i = 0; i < visitors.length; i++) {
    const v = visitors[i] as number;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  const b = new Builder(paths.length, baseFor(lo, hi));
  let prev = -1;
  for (let i = 0; i < paths.length; i++) {
    const p = paths[i] as number;
    if (p !== prev) {
      b.startPath(p);
      prev = p;
    }
    const c = classes[i] as number;
    const f = flagOf(c, clsHuman, clsAi);
    if (f === 0) throw new Error(`unknown class code ${c}`);
    b.add(visitors[i] as number, f);
  }
  return b.finish(day, version);
}

/**
 * Builds a day set from per-path word lists: `pathIds` ascending, and for each the path's `(visitor − base) × 4 +
 * flags` words, in any order, repeats allowed (the flags of one visitor are or-ed). Sorts the lists in place.
 */
export function buildDaySetFromWords(day: number, version: number, base: number, pathIds: readonly number[], lists: readonly Uint32Array[]): DaySet {
  let cap = 0;
  for (const l of lists) cap += l.length;
  const b = new Builder(cap, base);
  for (let k = 0; k < pathIds.length; k++) {
    b.startPath(pathIds[k] as number);
    const xs = (lists[k] as Uint32Array).sort();
    for (let i = 0; i < xs.length; i++) {
      const x = xs[i] as number;
      b.add((x >>> 2) + base, x & 3);
    }
  }
  return b.finish(day, version);
}

// ---- encoding ----------------------------------------------------------------------------------------
//
// Format 3 (written when base > 0): [3] varint(base), then format 2 from its path count on.
// Format 2 (written when base = 0): [2] varint(pathCount) varint(pairCount)
//           pathCount × (varint(pathId − previous pathId) varint(pairs of the path))
//           zero bytes up to a multiple of 4, then pairCount × uint32 little-endian (visitor × 4 + flags).
// Format 1 (still read): the same header with [1], then pairCount × varint((visitor − previous visitor of the
//           path) × 4 + flags) (previous = 0 at a path start).
// Varints are canonical little-endian base-128 of non-negative integers below 2^53 (segments/bytes.ts).

export const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

export function encodeDaySet(s: DaySet): Uint8Array {
  const n = s.pairs.length;
  const w = new ByteWriter(16 + s.pathIds.length * 5 + n * 4);
  if (s.base > 0) {
    w.varint(3);
    w.varint(s.base);
  } else w.varint(2);
  w.varint(s.pathIds.length);
  w.varint(n);
  let prev = 0;
  for (let k = 0; k < s.pathIds.length; k++) {
    const p = s.pathIds[k] as number;
    w.varint(p - prev);
    prev = p;
    w.varint((s.starts[k + 1] as number) - (s.starts[k] as number));
  }
  w.pad(4);
  if (LITTLE_ENDIAN) w.bytes(new Uint8Array(s.pairs.buffer, s.pairs.byteOffset, n * 4));
  else {
    const le = new Uint8Array(n * 4);
    const dv = new DataView(le.buffer);
    for (let i = 0; i < n; i++) dv.setUint32(i * 4, s.pairs[i] as number, true);
    w.bytes(le);
  }
  return w.finish();
}

export class DaySetFormatError extends Error {}

/**
 * A day set blob of format 2 or 3 read up to its pairs, which stay where they are: `data`'s bytes from `pairsAt`,
 * `nPairs` little-endian words (range-spill.ts writes them out from there without decoding them). Format 1
 * (varints) gives null. Validated as decodeDaySet validates.
 */
export interface DaySetLayout {
  base: number;
  pathIds: Uint32Array;
  starts: Uint32Array;
  pairsAt: number;
  nPairs: number;
  minVisitor: number;
  maxVisitor: number;
}

/** The header of a day set blob: its format, base and path entries (in `arrays`' pathIds and starts), validated. */
function readHeader(
  data: Uint8Array,
  arrays: (nPaths: number, nPairs: number) => Pick<DaySet, 'pathIds' | 'starts'>,
): { r: ByteReader; format: number; base: number; nPaths: number; nPairs: number; pathIds: Uint32Array; starts: Uint32Array } {
  const len = data.length;
  const r = new ByteReader(data, 'day set', (m) => new DaySetFormatError(m));
  const read = (): number => r.varint();
  const format = read();
  if (format !== 1 && format !== 2 && format !== 3) throw new DaySetFormatError(`unknown day set format ${format}`);
  const base = format === 3 ? read() : 0;
  if (base > MAX_ABSOLUTE_VISITOR - MAX_VISITOR) throw new DaySetFormatError('day set base out of range');
  const nPaths = read();
  const nPairs = read();
  if (nPaths > len || nPairs > len) throw new DaySetFormatError('day set counts exceed the blob');
  const { pathIds, starts } = arrays(nPaths, nPairs);
  let prev = 0;
  let at = 0;
  for (let k = 0; k < nPaths; k++) {
    prev += read();
    if (prev > MAX_PATH_ID) throw new DaySetFormatError('day set path id out of range');
    pathIds[k] = prev;
    starts[k] = at;
    at += read();
  }
  starts[nPaths] = at;
  if (at !== nPairs) throw new DaySetFormatError('day set path counts do not add up');
  if (format !== 1) {
    const pos = (r.pos + 3) & ~3;
    if (pos + nPairs * 4 !== len) throw new DaySetFormatError('day set blob has the wrong length');
    r.pos = pos;
  }
  return { r, format, base, nPaths, nPairs, pathIds, starts };
}

/** Smallest and largest visitor (relative to the base) of pairs whose path k's first and last are at(starts[k]) and at(starts[k + 1] − 1). */
function extremes(starts: Uint32Array, nPaths: number, at: (i: number) => number): { lo: number; hi: number } {
  // Visitors ascend within a path: its first and last pairs hold its extremes.
  let lo = Number.POSITIVE_INFINITY;
  let hi = -1;
  for (let k = 0; k < nPaths; k++) {
    const b = starts[k] as number;
    const e = starts[k + 1] as number;
    if (e === b) continue;
    const first = at(b) >>> 2;
    const last = at(e - 1) >>> 2;
    if (first < lo) lo = first;
    if (last > hi) hi = last;
  }
  return { lo, hi };
}

export function daySetLayout(data: Uint8Array): DaySetLayout | null {
  const h = readHeader(data, (n) => ({ pathIds: new Uint32Array(n), starts: new Uint32Array(n + 1) }));
  if (h.format === 1) return null;
  const pairsAt = h.r.pos;
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const { lo, hi } = extremes(h.starts, h.nPaths, (i) => dv.getUint32(pairsAt + i * 4, true));
  const empty = h.nPairs === 0;
  return {
    base: h.base,
    pathIds: h.pathIds,
    starts: h.starts,
    pairsAt,
    nPairs: h.nPairs,
    minVisitor: empty ? 0 : h.base + lo,
    maxVisitor: empty ? -1 : h.base + hi,
  };
}

export function decodeDaySet(day: number, version: number, data: Uint8Array): DaySet {
  const len = data.length;
  let pairs: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  const { r, format, base, nPaths, nPairs, pathIds, starts } = readHeader(data, (nP, nX) => {
    const a = sharedArrays(nP, nX);
    pairs = a.pairs;
    return a;
  });
  if (format !== 1) {
    const pos = r.pos;
    if (LITTLE_ENDIAN) new Uint8Array(pairs.buffer, pairs.byteOffset, nPairs * 4).set(data.subarray(pos, len));
    else {
      const dv = new DataView(data.buffer, data.byteOffset);
      for (let i = 0; i < nPairs; i++) pairs[i] = dv.getUint32(pos + i * 4, true);
    }
  } else {
    const read = (): number => r.varint();
    for (let k = 0; k < nPaths; k++) {
      let pv = 0;
      const end = starts[k + 1] as number;
      for (let i = starts[k] as number; i < end; i++) {
        const x = read();
        const f = x % 4;
        pv += (x - f) / 4;
        if (pv > MAX_VISITOR) throw new DaySetFormatError('day set visitor out of range');
        pairs[i] = pv * 4 + f;
      }
    }
    if (r.pos !== len) throw new DaySetFormatError('day set blob has trailing bytes');
  }
  const { lo, hi } = extremes(starts, nPaths, (i) => pairs[i] as number);
  return { day, version, base, pathIds, starts, pairs, minVisitor: nPairs === 0 ? 0 : base + lo, maxVisitor: nPairs === 0 ? -1 : base + hi };
}

// ---- counting a window -----------------------------------------------------------------------------

export interface WindowCounts {
  totals: { human: number; ai: number; total: number };
  /** Paths with at least one visitor, ascending by id, with their counts (same index). */
  pathIds: Uint32Array;
  human: Uint32Array;
  ai: Uint32Array;
  total: Uint32Array;
}

/** Widest visitor-ordinal range one window may span (one byte each); wider ones are renumbered densely first (densify). */
export const MAX_MARKS = 128 * 1024 * 1024;

/** A reusable marks buffer (one byte per visitor ordinal in the window's range). */
export class MarkBuffer {
  private buf: Uint8Array<ArrayBufferLike> = new Uint8Array(0);
  /** `shared`: over a SharedArrayBuffer (a count thread's, read by the thread that asked: count-threads.ts). */
  constructor(private readonly shared = false) {}
  take(size: number): Uint8Array {
    if (this.buf.length < size) {
      const n = Math.max(size, Math.ceil(this.buf.length * 1.25));
      this.buf = this.shared ? new Uint8Array(new SharedArrayBuffer(n)) : new Uint8Array(n);
    } else this.buf.fill(0, 0, size);
    return this.buf;
  }
  /**
   * The buffer as it is, not cleared (a count continuing over the next range of paths of the same window: its
   * site-wide bits stay). Throws when it is smaller than `size` (it was not taken for this window).
   */
  keep(size: number): Uint8Array {
    if (this.buf.length < size) throw new Error('marks buffer lost between ranges');
    return this.buf;
  }
  /** Drops the buffer (e.g. after an unusually wide range). */
  release(): void {
    this.buf = new Uint8Array(0);
  }
  get size(): number {
    return this.buf.length;
  }
}

/**
 * Site-wide counts over the site-wide bits (2–3) of one or two marks arrays (a count thread's beside the caller's)
 * in [0, size): every visitor marked anywhere in the window. The per-path bits (0–1) must be clear, as countPaths
 * leaves them. Four marks a step as 32-bit words: a zero word (most of a 30-day window's range at 100M: a quarter of
 * its 20M visitors is marked) is skipped at once, and a word's bits are counted without a branch per byte (each byte
 * holds bit 2 and bit 3 at most once; the multiply sums the four bytes' bits into the top byte). The 100M year's marks:
 * 30 days 135–186 → 31–69 ms, 365 days 87 → 16 ms (bench/README.md, Decisions, "Site-wide counts a word at a time").
 */
export function siteWideCounts(a: Uint8Array, b: Uint8Array | null, size: number): WindowCounts['totals'] {
  let human = 0;
  let ai = 0;
  let total = 0;
  let v = 0;
  if ((a.byteOffset & 3) === 0 && (b === null || (b.byteOffset & 3) === 0)) {
    const n = size >>> 2;
    const A = new Uint32Array(a.buffer, a.byteOffset, n);
    const B = b === null ? A : new Uint32Array(b.buffer, b.byteOffset, n);
    for (let i = 0; i < n; i++) {
      const w = ((A[i] as number) | (B[i] as number)) & 0x0c0c0c0c;
      if (w === 0) continue;
      const h = (w >>> 2) & 0x01010101;
      const x = (w >>> 3) & 0x01010101;
      human += Math.imul(h, 0x01010101) >>> 24;
      ai += Math.imul(x, 0x01010101) >>> 24;
      total += Math.imul(h | x, 0x01010101) >>> 24;
    }
    v = n << 2;
  }
  for (; v < size; v++) {
    const m = ((a[v] as number) | (b === null ? 0 : (b[v] as number))) & 12;
    if (m !== 0) {
      total++;
      human += (m >>> 2) & 1;
      ai += (m >>> 3) & 1;
    }
  }
  return { human, ai, total };
}

/** The rows of a range of paths: their ids ascending and counts at the same index. */
export interface PathRows {
  pathIds: Uint32Array;
  human: Uint32Array;
  ai: Uint32Array;
  total: Uint32Array;
}

/** The non-empty sets of `days` and the visitor range they span (top −1 when none). */
export function windowRange(days: readonly DaySet[]): { sets: DaySet[]; base: number; top: number } {
  const sets = days.filter((d) => d.pairs.length > 0);
  let base = Number.POSITIVE_INFINITY;
  let top = -1;
  for (const s of sets) {
    if (s.minVisitor < base) base = s.minVisitor;
    if (s.maxVisitor > top) top = s.maxVisitor;
  }
  return { sets, base: sets.length === 0 ? 0 : base, top };
}

/** Index of the first element of sorted `xs` that is >= `x`. */
export function lowerBound(xs: Uint32Array, x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((xs[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The same sets with their visitors renumbered 0 … distinct − 1 in ascending order (so counts are unchanged):
 * for windows whose ordinals spread wider than a marks array should (ordinals moved from before migration 0019
 * were numbered across projects).
 * O(pairs × log pairs) in typed arrays (8 bytes per pair while it runs): a Set or Map of the distinct visitors
 * would stop at V8's 2^24 entries, which a year of a large site passes.
 */
export function densify(sets: readonly DaySet[]): DaySet[] {
  let n = 0;
  for (const s of sets) n += s.pairs.length;
  const all = new Float64Array(n);
  let k = 0;
  for (const s of sets) for (const x of s.pairs) all[k++] = (x >>> 2) + s.base;
  all.sort();
  let u = 0;
  for (let i = 0; i < n; i++) if (u === 0 || all[i] !== all[u - 1]) all[u++] = all[i] as number;
  const sorted = all.subarray(0, u);
  const rank = (v: number): number => {
    let lo = 0;
    let hi = u - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((sorted[mid] as number) < v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return sets.map((s) => {
    const pairs = new Uint32Array(s.pairs.length);
    // Pairs ascend by visitor within a path: start each search from the previous rank when it can.
    let last = -1;
    let lastRank = 0;
    for (let i = 0; i < pairs.length; i++) {
      const x = s.pairs[i] as number;
      const v = (x >>> 2) + s.base;
      if (v !== last) {
        lastRank = rank(v);
        last = v;
      }
      pairs[i] = lastRank * 4 + (x & 3);
    }
    const m = pairs.length;
    return {
      ...s,
      base: 0,
      pairs,
      minVisitor: m === 0 ? 0 : rank(s.minVisitor),
      maxVisitor: m === 0 ? -1 : rank(s.maxVisitor),
    };
  });
}
