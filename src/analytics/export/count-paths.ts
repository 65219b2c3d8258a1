// Counting a window's distinct visitors per path over its day sets (daysets.ts): pure, no I/O.
//
// For each path, the visitors of its pairs on every day are marked in one byte-per-visitor array (bits 0–1: seen on
// this path as human / ai, counted and cleared after the path; bits 2–3: seen anywhere in the window, swept once at
// the end by siteWideCounts). Exact for any window; O(pairs + paths) here, O(pairs + paths × days) in the merge.
//
// Why the pairs are first copied path by path (gatherChunk) rather than read where they lie: a year's 365 day sets
// hold a path's pairs in up to 365 short runs (the 100M-event year: 83.6M pairs in 7.3M (path, day) runs, ~11 each),
// and reading them in place cost a jump to another day's arrays per run, twice per path, plus the merge of the days'
// path lists. Why a large path is marked a block of visitors at a time: its visitors span the whole marks array (20
// MB for 20M visitors), and marking them in day order missed the cache at almost every pair; sorted into blocks of
// 2^blockBits visitors, a block's marks stay in the core's cache while it is marked and counted. Together: the
// count's CPU on bench/range-count.ts's year (83.6M pairs, two threads) fell from ~7.6 to ~4.4 s (bench/README.md,
// Decisions, "The count gathers each path's pairs").
import { type DaySet, densify, lowerBound, MAX_MARKS, MarkBuffer, type PathRows, siteWideCounts, type WindowCounts, windowRange } from './daysets.ts';

/** How countPaths cuts its work (tests make them small to reach every branch with few pairs). */
export interface CountShape {
  /** Pairs gathered at once at most (a run of whole paths); a path of at least this many is counted in place. */
  chunkPairs: number;
  /** A path of at least this many pairs is marked and counted a block of visitors at a time. */
  blockMinPairs: number;
  /** log2 of a block's visitors: 2^18 marks are 256 KiB, within a core's L2 cache (512 KiB–2 MiB). */
  blockBits: number;
  /** Widest span of path ids counted through per-path tables (4 bytes each, three of them); wider: the merge. */
  maxPathSpan: number;
}

/**
 * 512K pairs: the gathered copy and its sorted copy take 2 MiB each per counting thread (the 100M year's export
 * peaks near its 1 GB bound). 64K pairs: a path below that fits its marks in cache anyway more often than not.
 */
export const COUNT_SHAPE: CountShape = { chunkPairs: 1 << 19, blockMinPairs: 1 << 16, blockBits: 18, maxPathSpan: 1 << 20 };

const NONE = 0x1_0000_0000;

/**
 * Exact distinct human / ai / total visitors of each path with an id in [pathFrom, pathTo) over the union of
 * non-empty `sets`, whose visitors lie in [base, base + marks.length). `marks` must be zero where the sets'
 * visitors land, or hold only site-wide bits (2–3): it is left holding the site-wide bits of every visitor of these
 * paths (siteWideCounts counts them; the paths' ranges of several calls, on several marks arrays, may be or-ed).
 * The rows' arrays are new (a count thread moves them).
 */
export function countPaths(sets: readonly DaySet[], marks: Uint8Array, base: number, pathFrom = 0, pathTo = NONE, shape = COUNT_SHAPE): PathRows {
  const nd = sets.length;
  const len = Int32Array.from(sets, (s) => lowerBound(s.pathIds, pathTo));
  const cur = Int32Array.from(sets, (s) => lowerBound(s.pathIds, pathFrom));
  let minP = NONE;
  let maxP = -1;
  let top = 0;
  for (let d = 0; d < nd; d++) {
    const s = sets[d] as DaySet;
    if ((cur[d] as number) >= (len[d] as number)) continue;
    minP = Math.min(minP, s.pathIds[cur[d] as number] as number);
    maxP = Math.max(maxP, s.pathIds[(len[d] as number) - 1] as number);
    top = Math.max(top, s.maxVisitor - base);
  }
  if (maxP < 0) return emptyRows();
  if (maxP - minP >= shape.maxPathSpan) return countPathsMerged(sets, marks, base, cur, len);
  const span = maxP - minP + 1;
  // Per path (id − minP): its pairs in the window, and whether any day has it (a path may have no pairs).
  const cnt = new Uint32Array(span);
  const present = new Uint8Array(span);
  let rows = 0;
  for (let d = 0; d < nd; d++) {
    const { pathIds: P, starts: S } = sets[d] as DaySet;
    const e = len[d] as number;
    for (let c = cur[d] as number; c < e; c++) {
      const q = (P[c] as number) - minP;
      cnt[q] = (cnt[q] as number) + (S[c + 1] as number) - (S[c] as number);
      if (present[q] === 0) {
        present[q] = 1;
        rows++;
      }
    }
  }
  const out: PathRows = { pathIds: new Uint32Array(rows), human: new Uint32Array(rows), ai: new Uint32Array(rows), total: new Uint32Array(rows) };
  const c: Counting = {
    sets,
    marks,
    // Where a day's pair lands in `marks` (its base minus the window's; within int32: marks span at most MAX_MARKS).
    shift: Int32Array.from(sets, (s) => s.base - base),
    cur,
    len,
    shape,
    // The blocks span the sets' visitors; a pair beyond them (a set breaking its own bounds) goes in the last.
    blocks: (top >>> shape.blockBits) + 1,
    out,
    rows: 0,
    acc: new Float64Array(3),
    gathered: buffers.gathered,
    sorted: buffers.sorted,
  };
  const ends = new Uint32Array(span);
  let q = 0;
  while (q < span) {
    if (present[q] === 0) {
      q++;
      continue;
    }
    if ((cnt[q] as number) >= shape.chunkPairs) {
      countInPlace(c, q + minP);
      q++;
      continue;
    }
    // A chunk: the paths [q, q1) with fewer than chunkPairs pairs in all, none of them counted in place.
    let q1 = q;
    let n = 0;
    while (q1 < span && (cnt[q1] as number) < shape.chunkPairs && n + (cnt[q1] as number) <= shape.chunkPairs) {
      n += cnt[q1] as number;
      ends[q1] = n;
      q1++;
    }
    gatherChunk(c, minP, q, q1, ends, n);
    let start = 0;
    for (let k = q; k < q1; k++) {
      if (present[k] === 0) continue;
      const end = ends[k] as number;
      countGathered(c, k + minP, start, end);
      start = end;
    }
    q = q1;
  }
  buffers.gathered = c.gathered;
  buffers.sorted = c.sorted;
  return out;
}

/**
 * The gathered pairs' arrays, kept from one count to the next in this thread (a long window is counted a range of
 * paths at a time, each a call): at most chunkPairs words each, 2 MiB at COUNT_SHAPE. Made anew per call, the
 * ranges' copies waited for the collector: bench/range-count.ts's peak RSS was ~40 MB higher.
 */
const buffers: { gathered: Uint32Array; sorted: Uint32Array } = { gathered: new Uint32Array(0), sorted: new Uint32Array(0) };

/** What countPaths' steps share. */
interface Counting {
  sets: readonly DaySet[];
  marks: Uint8Array;
  shift: Int32Array;
  /** Per day: its next row (path) not yet counted, and the end of its rows in the range. */
  cur: Int32Array;
  len: Int32Array;
  shape: CountShape;
  blocks: number;
  out: PathRows;
  /** Rows written to `out`. */
  rows: number;
  /** The path being counted: its total, human and ai visitors so far (putRow writes them and starts again at 0). */
  acc: Float64Array;
  /** A chunk's pairs path by path, as marks index × 4 + flags; and a large path's sorted by block. */
  gathered: Uint32Array;
  sorted: Uint32Array;
}

/** No rows: four arrays of their own (a count thread moves each one's buffer). */
function emptyRows(): PathRows {
  return { pathIds: new Uint32Array(0), human: new Uint32Array(0), ai: new Uint32Array(0), total: new Uint32Array(0) };
}

/** Appends a path's row from `c.acc` and clears it for the next path. */
function putRow(c: Counting, path: number): void {
  const { acc } = c;
  const r = c.rows++;
  c.out.pathIds[r] = path;
  c.out.total[r] = acc[0] as number;
  c.out.human[r] = acc[1] as number;
  c.out.ai[r] = acc[2] as number;
  acc.fill(0);
}

/**
 * Copies the pairs of the paths [minP + q0, minP + q1) from every day into `c.gathered`, path after path (path q's
 * at [ends[q − 1], ends[q]) once done: `ends` holds each path's end), as marks index × 4 + flags; moves the days'
 * cursors past them.
 */
function gatherChunk(c: Counting, minP: number, q0: number, q1: number, ends: Uint32Array, n: number): void {
  if (c.gathered.length < n) c.gathered = new Uint32Array(Math.max(n, Math.min(c.shape.chunkPairs, 2 * c.gathered.length)));
  const g = c.gathered;
  // Each path's next free slot: its start (the previous path's end), advanced as the days are copied in.
  const at = new Uint32Array(q1 - q0);
  for (let q = q0 + 1; q < q1; q++) at[q - q0] = ends[q - 1] as number;
  const pHi = minP + q1;
  for (let d = 0; d < c.sets.length; d++) {
    const { pathIds: P, starts: S, pairs: X } = c.sets[d] as DaySet;
    const sh = c.shift[d] as number;
    const e = c.len[d] as number;
    let r = c.cur[d] as number;
    for (; r < e; r++) {
      const p = P[r] as number;
      if (p >= pHi) break;
      const k = p - minP - q0;
      let o = at[k] as number;
      const end = S[r + 1] as number;
      for (let i = S[r] as number; i < end; i++) {
        const x = X[i] as number;
        g[o++] = (((x >>> 2) + sh) << 2) | (x & 3);
      }
      at[k] = o;
    }
    c.cur[d] = r;
  }
}

/** Counts one path from its gathered pairs g[start, end); sorted by block first when it has many. */
function countGathered(c: Counting, path: number, start: number, end: number): void {
  const { marks, shape } = c;
  let src = c.gathered;
  let nb = 1;
  let bounds: Uint32Array | null = null;
  if (end - start >= shape.blockMinPairs && c.blocks > 1) {
    // Counting sort by block (visitor >>> blockBits) into `sorted`.
    nb = c.blocks;
    const sh = shape.blockBits + 2;
    const last = nb - 1;
    const count = new Uint32Array(nb + 1);
    for (let i = start; i < end; i++) {
      const b = Math.min((src[i] as number) >>> sh, last);
      count[b + 1] = (count[b + 1] as number) + 1;
    }
    for (let b = 0; b < nb; b++) count[b + 1] = (count[b + 1] as number) + (count[b] as number);
    bounds = count.slice();
    if (c.sorted.length < end - start) c.sorted = new Uint32Array(Math.max(end - start, Math.min(c.shape.chunkPairs, 2 * c.sorted.length)));
    const s = c.sorted;
    for (let i = start; i < end; i++) {
      const x = src[i] as number;
      const b = Math.min(x >>> sh, last);
      const o = count[b] as number;
      s[o] = x;
      count[b] = o + 1;
    }
    src = s;
  }
  for (let b = 0; b < nb; b++) {
    const s0 = bounds ? (bounds[b] as number) : start;
    const s1 = bounds ? (bounds[b + 1] as number) : end;
    markPairs(marks, src, s0, s1, 0);
    countPairs(marks, src, s0, s1, 0, c.acc);
  }
  putRow(c, path);
}

/** Marks the visitors of xs[from, to) (each pair's visitor + sh): per-path bits (0–1) and site-wide bits (2–3) at once. */
function markPairs(marks: Uint8Array, xs: Uint32Array, from: number, to: number, sh: number): void {
  for (let i = from; i < to; i++) {
    const x = xs[i] as number;
    const v = (x >>> 2) + sh;
    marks[v] = (marks[v] as number) | ((x & 3) * 5);
  }
}

/**
 * Counts into acc (total, human, ai) the visitors of xs[from, to) whose per-path bits are set, and clears those bits:
 * a visitor is counted at its first pair of the path, so each distinct visitor once; the site-wide bits stay.
 */
function countPairs(marks: Uint8Array, xs: Uint32Array, from: number, to: number, sh: number, acc: Float64Array): void {
  let t = 0;
  let h = 0;
  let a = 0;
  for (let i = from; i < to; i++) {
    const v = ((xs[i] as number) >>> 2) + sh;
    const m = marks[v] as number;
    if ((m & 3) !== 0) {
      t++;
      h += m & 1;
      a += (m >>> 1) & 1;
      marks[v] = m & 12;
    }
  }
  acc[0] = (acc[0] as number) + t;
  acc[1] = (acc[1] as number) + h;
  acc[2] = (acc[2] as number) + a;
}

/**
 * Counts one path of at least chunkPairs pairs where its runs lie (one per day that has it), a block of visitors at a
 * time: each run is ascending, so a cursor per run reads the run's pairs of one block after the other.
 */
function countInPlace(c: Counting, path: number): void {
  const { sets, marks, shift, cur, len } = c;
  const nd = sets.length;
  const runDay = new Int32Array(nd);
  const runPos = new Uint32Array(nd);
  const runMark = new Uint32Array(nd);
  const runEnd = new Uint32Array(nd);
  let runs = 0;
  for (let d = 0; d < nd; d++) {
    const r = cur[d] as number;
    const s = sets[d] as DaySet;
    if (r >= (len[d] as number) || s.pathIds[r] !== path) continue;
    cur[d] = r + 1;
    runDay[runs] = d;
    runPos[runs] = s.starts[r] as number;
    runMark[runs] = s.starts[r] as number;
    runEnd[runs] = s.starts[r + 1] as number;
    runs++;
  }
  for (let b = 0; b < c.blocks; b++) {
    // The last block takes whatever is left (a pair beyond the sets' stated bounds, or out of order).
    const hi = b === c.blocks - 1 ? Number.POSITIVE_INFINITY : (b + 1) << c.shape.blockBits;
    for (let k = 0; k < runs; k++) {
      const d = runDay[k] as number;
      const X = (sets[d] as DaySet).pairs;
      const sh = shift[d] as number;
      const end = runEnd[k] as number;
      let i = runMark[k] as number;
      for (; i < end; i++) {
        const x = X[i] as number;
        const v = (x >>> 2) + sh;
        if (v >= hi) break;
        marks[v] = (marks[v] as number) | ((x & 3) * 5);
      }
      runMark[k] = i;
    }
    for (let k = 0; k < runs; k++) {
      const d = runDay[k] as number;
      countPairs(marks, (sets[d] as DaySet).pairs, runPos[k] as number, runMark[k] as number, shift[d] as number, c.acc);
      runPos[k] = runMark[k] as number;
    }
  }
  putRow(c, path);
}

/**
 * The same counts as countPaths by merging the days' path lists and reading each path's pairs where they lie
 * (`cur`, `len`: each day's rows in the range). For path ids spread wider than countPaths' tables allow.
 */
export function countPathsMerged(sets: readonly DaySet[], marks: Uint8Array, base: number, cur: Int32Array, len: Int32Array): PathRows {
  const nd = sets.length;
  // Hoisted per-day arrays (monomorphic typed-array reads in the hot loops).
  const P = sets.map((s) => s.pathIds);
  const S = sets.map((s) => s.starts);
  const X = sets.map((s) => s.pairs);
  let maxRows = 0;
  for (let d = 0; d < nd; d++) maxRows += (len[d] as number) - (cur[d] as number);
  // Per day, what its pair's visitor adds to land in the marks array (its base minus the window's).
  const shift = Float64Array.from(sets, (s) => s.base - base);
  const segStart = new Uint32Array(nd);
  const segEnd = new Uint32Array(nd);
  const segDay = new Int32Array(nd);
  const outPath = new Uint32Array(maxRows);
  const outH = new Uint32Array(maxRows);
  const outA = new Uint32Array(maxRows);
  const outT = new Uint32Array(maxRows);
  const acc = new Float64Array(3);
  let rows = 0;
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
    for (let d = 0; d < nd; d++) {
      const c = cur[d] as number;
      if (c >= (len[d] as number) || (P[d] as Uint32Array)[c] !== p) continue;
      cur[d] = c + 1;
      const st = S[d] as Uint32Array;
      segStart[nseg] = st[c] as number;
      segEnd[nseg] = st[c + 1] as number;
      segDay[nseg] = d;
      nseg++;
      markPairs(marks, X[d] as Uint32Array, st[c] as number, st[c + 1] as number, shift[d] as number);
    }
    acc.fill(0);
    for (let k = 0; k < nseg; k++) {
      const d = segDay[k] as number;
      countPairs(marks, X[d] as Uint32Array, segStart[k] as number, segEnd[k] as number, shift[d] as number, acc);
    }
    outPath[rows] = p;
    outT[rows] = acc[0] as number;
    outH[rows] = acc[1] as number;
    outA[rows] = acc[2] as number;
    rows++;
  }
  return { pathIds: outPath.slice(0, rows), human: outH.slice(0, rows), ai: outA.slice(0, rows), total: outT.slice(0, rows) };
}

/**
 * Exact distinct human / ai / total visitors per path and site-wide over the union of `days` (in this thread;
 * count-threads.ts splits the paths between two).
 */
export function countWindow(days: readonly DaySet[], marksBuffer: MarkBuffer = new MarkBuffer(), shape = COUNT_SHAPE): WindowCounts {
  const { sets, base, top } = windowRange(days);
  if (sets.length === 0) {
    const empty = new Uint32Array(0);
    return { totals: { human: 0, ai: 0, total: 0 }, pathIds: empty, human: empty, ai: empty, total: empty };
  }
  if (top - base + 1 > MAX_MARKS) return countWindow(densify(sets), marksBuffer, shape);
  const marks = marksBuffer.take(top - base + 1);
  const rows = countPaths(sets, marks, base, 0, NONE, shape);
  return { totals: siteWideCounts(marks, null, top - base + 1), ...rows };
}
