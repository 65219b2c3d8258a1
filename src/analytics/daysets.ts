// Per-day visitor sets: the compact, immutable form of one (project, day) of `analytics_daily_visits`, and
// the exact distinct count over a window of days. Pure: no I/O.
//
// A day set holds the day's distinct (path, visitor) pairs sorted by path, then visitor, with the visitor's
// classes on that path as two flag bits (human, ai). It is built from the day's deduplicated visits, cached
// decoded in memory and persisted encoded (delta + varint, about 2–3 bytes per pair) with the day's data
// version, so a cold process reads one small blob per day instead of every visit row.
//
// Counting a window: the days' path lists are merged (they are sorted), and for each path the visitors of
// its segments are marked in one byte-per-visitor array: bits 0–1 = seen on this path as human / ai (cleared
// after the path), bits 2–3 = seen anywhere in the window as human / ai (site-wide totals). Each pair is
// touched twice (mark, clear), so a window costs O(pairs + paths × days), exactly.

export const FLAG_HUMAN = 1;
export const FLAG_AI = 2;

export interface DaySet {
  day: number;
  /** The (project, day) data version the set was built from. */
  version: number;
  /** Distinct path ids, ascending. */
  pathIds: Uint32Array;
  /** Pairs of pathIds[k] are visitors[starts[k] … starts[k + 1]). Length pathIds.length + 1. */
  starts: Uint32Array;
  /** Visitor ordinals, ascending within each path. */
  visitors: Uint32Array;
  /** FLAG_HUMAN | FLAG_AI per pair. */
  flags: Uint8Array;
  /** Smallest and largest visitor ordinal (0, -1 when empty). */
  minVisitor: number;
  maxVisitor: number;
}

/** Largest id a day set holds (ids are stored as unsigned 32-bit integers). */
export const MAX_ID = 0xffff_ffff;

export class DaySetIdRangeError extends Error {}

/** Approximate bytes a decoded set occupies (for cache bounds). */
export function daySetBytes(s: DaySet): number {
  return 200 + s.pathIds.byteLength + s.starts.byteLength + s.visitors.byteLength + s.flags.byteLength;
}

/**
 * Builds a day set from visit rows sorted by (path, visitor, class) — parallel arrays of path ids, visitor
 * ordinals and class codes (clsHuman / clsAi). Throws DaySetIdRangeError for ids beyond MAX_ID or unsorted input.
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
  const n = paths.length;
  const vis = new Uint32Array(n);
  const flags = new Uint8Array(n);
  const pathIds: number[] = [];
  const starts: number[] = [];
  let m = 0;
  let prevPath = -1;
  let prevVisitor = -1;
  let minV = Number.POSITIVE_INFINITY;
  let maxV = -1;
  for (let i = 0; i < n; i++) {
    const p = paths[i] as number;
    const v = visitors[i] as number;
    const c = classes[i] as number;
    if (!(p >= 0 && p <= MAX_ID && v >= 0 && v <= MAX_ID)) throw new DaySetIdRangeError(`id out of range for a day set: path ${p}, visitor ${v}`);
    const f = c === clsHuman ? FLAG_HUMAN : c === clsAi ? FLAG_AI : 0;
    if (f === 0) throw new Error(`unknown class code ${c}`);
    if (p === prevPath && v === prevVisitor) {
      (flags as Uint8Array)[m - 1] = ((flags[m - 1] as number) | f) as number;
      continue;
    }
    if (p < prevPath || (p === prevPath && v < prevVisitor)) throw new Error('visit rows must be sorted by path, then visitor');
    if (p !== prevPath) {
      pathIds.push(p);
      starts.push(m);
      prevPath = p;
    }
    prevVisitor = v;
    vis[m] = v;
    flags[m] = f;
    m++;
    if (v < minV) minV = v;
    if (v > maxV) maxV = v;
  }
  starts.push(m);
  return {
    day,
    version,
    pathIds: Uint32Array.from(pathIds),
    starts: Uint32Array.from(starts),
    visitors: m === n ? vis : vis.slice(0, m),
    flags: m === n ? flags : flags.slice(0, m),
    minVisitor: m === 0 ? 0 : minV,
    maxVisitor: m === 0 ? -1 : maxV,
  };
}

/**
 * Builds a day set from per-path lists: `pathIds` ascending, and for each a comma-separated list of
 * `visitor × 4 + class code` ascending (as dayset-store's selectDayVisitLists returns them).
 */
export function buildDaySetFromLists(
  day: number,
  version: number,
  pathIds: readonly number[],
  lists: readonly string[],
  clsHuman: number,
  clsAi: number,
): DaySet {
  let cap = 0;
  for (const l of lists) cap += l.length >>> 1;
  let vis = new Uint32Array(cap + 1);
  let flags = new Uint8Array(cap + 1);
  const starts = new Uint32Array(pathIds.length + 1);
  const paths = new Uint32Array(pathIds.length);
  let m = 0;
  let minV = Number.POSITIVE_INFINITY;
  let maxV = -1;
  let prevPath = -1;
  for (let k = 0; k < pathIds.length; k++) {
    const p = pathIds[k] as number;
    if (!(p >= 0 && p <= MAX_ID)) throw new DaySetIdRangeError(`path id ${p} out of range for a day set`);
    if (p <= prevPath) throw new Error('path lists must be sorted by path id');
    prevPath = p;
    paths[k] = p;
    starts[k] = m;
    const s = lists[k] as string;
    const pathStart = m;
    let x = 0;
    let digits = 0;
    for (let i = 0; i <= s.length; i++) {
      const c = i < s.length ? s.charCodeAt(i) : 44;
      if (c !== 44) {
        const d = c - 48;
        if (d < 0 || d > 9) throw new Error(`bad visit list character ${JSON.stringify(s[i])}`);
        x = x * 10 + d;
        digits++;
        continue;
      }
      if (digits === 0) throw new Error('empty entry in a visit list');
      const code = x % 4;
      const v = (x - code) / 4;
      const f = code === clsHuman ? FLAG_HUMAN : code === clsAi ? FLAG_AI : 0;
      if (f === 0) throw new Error(`unknown class code ${code}`);
      if (v > MAX_ID) throw new DaySetIdRangeError(`visitor ${v} out of range for a day set`);
      x = 0;
      digits = 0;
      if (m > pathStart && vis[m - 1] === v) {
        flags[m - 1] = (flags[m - 1] as number) | f;
        continue;
      }
      if (m > pathStart && (vis[m - 1] as number) > v) throw new Error('visit lists must be sorted by visitor');
      if (m >= vis.length) {
        const nv = new Uint32Array(vis.length * 2);
        nv.set(vis);
        vis = nv;
        const nf = new Uint8Array(flags.length * 2);
        nf.set(flags);
        flags = nf;
      }
      vis[m] = v;
      flags[m] = f;
      m++;
      if (v < minV) minV = v;
      if (v > maxV) maxV = v;
    }
  }
  starts[pathIds.length] = m;
  return {
    day,
    version,
    pathIds: paths,
    starts,
    visitors: vis.slice(0, m),
    flags: flags.slice(0, m),
    minVisitor: m === 0 ? 0 : minV,
    maxVisitor: m === 0 ? -1 : maxV,
  };
}

// ---- encoding ----------------------------------------------------------------------------------------
//
// Format 1: [1] varint(pathCount) varint(pairCount)
//           pathCount × (varint(pathId − previous pathId) varint(pairs of the path))
//           pairCount × varint((visitor − previous visitor of the path) × 4 + flags)   (previous = 0 at a path start)
// Varints are little-endian base-128 of non-negative integers below 2^53.

const FORMAT = 1;

class Writer {
  buf: Uint8Array;
  pos = 0;
  constructor(size: number) {
    this.buf = new Uint8Array(Math.max(16, size));
  }
  varint(v: number): void {
    if (this.pos + 8 > this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    const b = this.buf;
    let p = this.pos;
    while (v >= 0x80) {
      b[p++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    b[p++] = v;
    this.pos = p;
  }
}

export function encodeDaySet(s: DaySet): Uint8Array {
  const w = new Writer(8 + s.pathIds.length * 4 + s.visitors.length * 3);
  w.varint(FORMAT);
  w.varint(s.pathIds.length);
  w.varint(s.visitors.length);
  let prev = 0;
  for (let k = 0; k < s.pathIds.length; k++) {
    const p = s.pathIds[k] as number;
    w.varint(p - prev);
    prev = p;
    w.varint((s.starts[k + 1] as number) - (s.starts[k] as number));
  }
  for (let k = 0; k < s.pathIds.length; k++) {
    let pv = 0;
    const end = s.starts[k + 1] as number;
    for (let i = s.starts[k] as number; i < end; i++) {
      const v = s.visitors[i] as number;
      w.varint((v - pv) * 4 + (s.flags[i] as number));
      pv = v;
    }
  }
  return w.buf.slice(0, w.pos);
}

export class DaySetFormatError extends Error {}

export function decodeDaySet(day: number, version: number, data: Uint8Array): DaySet {
  let pos = 0;
  const len = data.length;
  const read = (): number => {
    let v = 0;
    let mul = 1;
    for (;;) {
      if (pos >= len) throw new DaySetFormatError('day set blob is truncated');
      const b = data[pos++] as number;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 0x80;
      if (mul > 2 ** 56) throw new DaySetFormatError('day set varint too long');
    }
  };
  const format = read();
  if (format !== FORMAT) throw new DaySetFormatError(`unknown day set format ${format}`);
  const nPaths = read();
  const nPairs = read();
  if (nPaths > len || nPairs > len) throw new DaySetFormatError('day set counts exceed the blob');
  const pathIds = new Uint32Array(nPaths);
  const starts = new Uint32Array(nPaths + 1);
  let prev = 0;
  let at = 0;
  for (let k = 0; k < nPaths; k++) {
    prev += read();
    pathIds[k] = prev;
    starts[k] = at;
    at += read();
  }
  starts[nPaths] = at;
  if (at !== nPairs) throw new DaySetFormatError('day set path counts do not add up');
  const visitors = new Uint32Array(nPairs);
  const flags = new Uint8Array(nPairs);
  let minV = Number.POSITIVE_INFINITY;
  let maxV = -1;
  for (let k = 0; k < nPaths; k++) {
    let pv = 0;
    const begin = starts[k] as number;
    const end = starts[k + 1] as number;
    for (let i = begin; i < end; i++) {
      let x: number;
      // Fast paths: one, two or three bytes (nearly every pair); values below 2^21 stay in int32 arithmetic.
      const b0 = pos < len ? (data[pos] as number) : 0x80;
      if (b0 < 0x80) {
        x = b0;
        pos++;
      } else if (pos + 1 < len && (data[pos + 1] as number) < 0x80) {
        x = (b0 & 0x7f) | ((data[pos + 1] as number) << 7);
        pos += 2;
      } else if (pos + 2 < len && (data[pos + 1] as number) >= 0x80 && (data[pos + 2] as number) < 0x80) {
        x = (b0 & 0x7f) | (((data[pos + 1] as number) & 0x7f) << 7) | ((data[pos + 2] as number) << 14);
        pos += 3;
      } else x = read();
      const f = x % 4;
      pv += (x - f) / 4;
      visitors[i] = pv;
      flags[i] = f;
    }
    // Visitors ascend within a path: its first and last are its extremes.
    if (end > begin) {
      if ((visitors[begin] as number) < minV) minV = visitors[begin] as number;
      if (pv > maxV) maxV = pv;
    }
  }
  if (pos !== len) throw new DaySetFormatError('day set blob has trailing bytes');
  return { day, version, pathIds, starts, visitors, flags, minVisitor: nPairs === 0 ? 0 : minV, maxVisitor: nPairs === 0 ? -1 : maxV };
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

/** Widest visitor-ordinal range one window may span (one byte each); wider ones are counted in SQL. */
export const MAX_MARKS = 128 * 1024 * 1024;

/** A reusable marks buffer (one byte per visitor ordinal in the window's range). */
export class MarkBuffer {
  private buf = new Uint8Array(0);
  take(size: number): Uint8Array {
    if (this.buf.length < size) this.buf = new Uint8Array(Math.max(size, Math.ceil(this.buf.length * 1.25)));
    else this.buf.fill(0, 0, size);
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

/** Exact distinct human / ai / total visitors per path and site-wide over the union of `days`. */
export function countWindow(days: readonly DaySet[], marksBuffer: MarkBuffer = new MarkBuffer()): WindowCounts {
  const sets = days.filter((d) => d.visitors.length > 0);
  const nd = sets.length;
  let base = Number.POSITIVE_INFINITY;
  let top = -1;
  let maxRows = 0;
  for (const s of sets) {
    if (s.minVisitor < base) base = s.minVisitor;
    if (s.maxVisitor > top) top = s.maxVisitor;
    maxRows += s.pathIds.length;
  }
  if (nd === 0) {
    const empty = new Uint32Array(0);
    return { totals: { human: 0, ai: 0, total: 0 }, pathIds: empty, human: empty, ai: empty, total: empty };
  }
  if (top - base + 1 > MAX_MARKS) throw new DaySetIdRangeError(`visitor ordinals span ${top - base + 1} values (more than ${MAX_MARKS})`);
  const marks = marksBuffer.take(top - base + 1);
  // Hoisted per-day arrays (monomorphic typed-array reads in the hot loops).
  const P = sets.map((s) => s.pathIds);
  const S = sets.map((s) => s.starts);
  const V = sets.map((s) => s.visitors);
  const F = sets.map((s) => s.flags);
  const len = Int32Array.from(sets, (s) => s.pathIds.length);
  const cur = new Int32Array(nd);
  const segStart = new Uint32Array(nd);
  const segEnd = new Uint32Array(nd);
  const segDay = new Int32Array(nd);
  const outPath = new Uint32Array(maxRows);
  const outH = new Uint32Array(maxRows);
  const outA = new Uint32Array(maxRows);
  const outT = new Uint32Array(maxRows);
  const NONE = 0x1_0000_0000;
  let rows = 0;
  let H = 0;
  let A = 0;
  let T = 0;
  for (;;) {
    // The next path: the smallest id under any day's cursor.
    let p = NONE;
    for (let d = 0; d < nd; d++) {
      const c = cur[d] as number;
      if (c < (len[d] as number)) {
        const x = (P[d] as Uint32Array)[c] as number;
        if (x < p) p = x;
      }
    }
    if (p === NONE) break;
    let nseg = 0;
    let h = 0;
    let a = 0;
    let t = 0;
    for (let d = 0; d < nd; d++) {
      const c = cur[d] as number;
      if (c >= (len[d] as number) || (P[d] as Uint32Array)[c] !== p) continue;
      cur[d] = c + 1;
      const st = S[d] as Uint32Array;
      const start = st[c] as number;
      const end = st[c + 1] as number;
      segStart[nseg] = start;
      segEnd[nseg] = end;
      segDay[nseg] = d;
      nseg++;
      const vis = V[d] as Uint32Array;
      const fl = F[d] as Uint8Array;
      // Mark: per-path bits (0–1) and site-wide bits (2–3) at once.
      for (let i = start; i < end; i++) {
        const v = (vis[i] as number) - base;
        marks[v] = (marks[v] as number) | ((fl[i] as number) * 5);
      }
    }
    // Count and clear: a visitor's per-path bits are counted at its first pair and cleared there, so each
    // distinct visitor of the path counts once; the site-wide bits stay for the final sweep.
    for (let k = 0; k < nseg; k++) {
      const vis = V[segDay[k] as number] as Uint32Array;
      const end = segEnd[k] as number;
      for (let i = segStart[k] as number; i < end; i++) {
        const v = (vis[i] as number) - base;
        const m = marks[v] as number;
        if ((m & 3) !== 0) {
          t++;
          h += m & 1;
          a += (m >>> 1) & 1;
          marks[v] = m & 12;
        }
      }
    }
    outPath[rows] = p;
    outH[rows] = h;
    outA[rows] = a;
    outT[rows] = t;
    rows++;
  }
  // Site-wide: every visitor marked anywhere in the window.
  const size = top - base + 1;
  for (let v = 0; v < size; v++) {
    const m = marks[v] as number;
    if (m !== 0) {
      T++;
      H += (m >>> 2) & 1;
      A += (m >>> 3) & 1;
    }
  }
  return {
    totals: { human: H, ai: A, total: T },
    pathIds: outPath.slice(0, rows),
    human: outH.slice(0, rows),
    ai: outA.slice(0, rows),
    total: outT.slice(0, rows),
  };
}
