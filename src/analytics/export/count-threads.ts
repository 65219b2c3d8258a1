// Counting a window's distinct visitors in two threads: the calling thread counts the paths below a split id and a
// worker thread (count-worker.ts) those from it on, over the same day sets in shared memory (daysets.ts
// sharedArrays: decoded and built sets are made so, and any other is copied once into shared memory). The paths'
// counts are the same as one thread's: a path is counted whole by one thread. Each thread marks its visitors in a
// marks array of its own; the site-wide totals are swept over both at once (a visitor is in the window when
// either marked it). The split is where half the window's pairs lie (by path id, from a sample of days), as the
// work is one pass of marking and one of counting per pair. Counts are taken one at a time (the calling thread's
// marks array and the worker's are reused); a window of fewer than `minPairs` pairs, or one whose visitors need
// renumbering first (densify), is counted in the calling thread alone, and so is every window while the worker
// cannot be had (it failed: the next count starts another).
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { BACKGROUND_THREAD_LIMITS } from '../../lib/thread-heaps.ts';
import { countPaths, countWindow } from './count-paths.ts';
import {
  type DaySet,
  isShared,
  lowerBound,
  MAX_MARKS,
  MarkBuffer,
  type PathRows,
  sharedArrays,
  siteWideCounts,
  type WindowCounts,
  windowRange,
} from './daysets.ts';
import type { RangeSpill } from './range-spill.ts';

export interface CountRequest {
  id: number;
  sets: DaySet[];
  base: number;
  /** Visitors of the window's range (marks needed). */
  size: number;
  pathFrom: number;
  pathTo: number;
  /** The next range of paths of the same window: the thread's marks are not cleared (their site-wide bits stay). */
  keep?: boolean;
}

export type CountReply = { id: number; rows: PathRows; marks: Uint8Array } | { id: number; error: string };

/**
 * Windows of fewer pairs are counted in one thread. At 100M events a year the 30-day window holds about 7M pairs
 * and the year 83M; 1M pairs take tens of milliseconds in one thread.
 */
export const THREAD_MIN_PAIRS = 1_000_000;

/** Above this many bytes a marks array is dropped after its count (an unusually wide window should not pin it). */
const KEEP_MARKS = 64 * 1024 * 1024;

const BOOT_URL = new URL('./count-worker-boot.cjs', import.meta.url);

/**
 * The reply when the count thread cannot answer (it failed or could not start): the caller counts in its own thread.
 * A reply promise carries it instead of rejecting, so none is left unhandled while the caller counts its half.
 */
const unavailable = (): CountReply => ({ id: 0, error: 'count thread unavailable' });

export interface WindowCounter {
  /** countWindow's answer (exactly), in two threads when the window is large enough. */
  count(days: readonly DaySet[]): Promise<WindowCounts>;
  /**
   * The same answer over the sets of a RangeSpill, counted one range of paths after the other (only that range's
   * parts in memory), each range in two threads when the window is large enough.
   */
  countRanges(spill: RangeSpill): Promise<WindowCounts>;
  /**
   * Starts the worker thread now if counts may use it (a long window does this before it loads its sets, so the
   * thread boots meanwhile rather than on the first count after a restart).
   */
  prepare(): void;
  /** Ends the worker thread (a later count starts another). */
  close(): Promise<void>;
  /** Counts split between the two threads, and those whose thread failed (finished in the calling thread). */
  readonly stats: { threaded: number; threadFailed: number };
}

/**
 * The first path id of the upper half of paths [from, to): the id below which about half the sets' pairs of that
 * range lie, from every `step`-th set (a year's days are alike enough).
 */
export function splitPath(sets: readonly DaySet[], from = 0, to = 0x1_0000_0000): number {
  let maxId = -1;
  for (const s of sets) {
    const n = lowerBound(s.pathIds, to);
    if (n > 0 && (s.pathIds[n - 1] as number) > maxId) maxId = s.pathIds[n - 1] as number;
  }
  if (maxId < from) return from;
  const span = maxId + 1 - from;
  const buckets = Math.min(span, 1 << 16);
  const scale = buckets / span;
  const w = new Float64Array(buckets);
  const step = Math.max(1, Math.floor(sets.length / 64));
  let sum = 0;
  for (let d = 0; d < sets.length; d += step) {
    const s = sets[d] as DaySet;
    const end = lowerBound(s.pathIds, to);
    for (let k = lowerBound(s.pathIds, from); k < end; k++) {
      const n = (s.starts[k + 1] as number) - (s.starts[k] as number);
      const b = Math.floor(((s.pathIds[k] as number) - from) * scale);
      w[b] = (w[b] as number) + n;
      sum += n;
    }
  }
  let acc = 0;
  for (let b = 0; b < buckets; b++) {
    acc += w[b] as number;
    if (acc * 2 >= sum) return from + Math.min(span, Math.ceil((b + 1) / scale));
  }
  return maxId + 1;
}

/** The set with its arrays in shared memory (a copy, unless they are there already). */
function shared(s: DaySet): DaySet {
  if (isShared(s)) return s;
  const a = sharedArrays(s.pathIds.length, s.pairs.length);
  a.pathIds.set(s.pathIds);
  a.starts.set(s.starts);
  a.pairs.set(s.pairs);
  return { ...s, ...a };
}

function concat(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** `threads`: 2 counts large windows in two threads, 1 in the calling thread only (default: 2 with 2 or more CPUs). */
export function createWindowCounter(opts: { threads?: number; minPairs?: number } = {}): WindowCounter {
  const threads = opts.threads ?? (os.availableParallelism() >= 2 ? 2 : 1);
  const minPairs = opts.minPairs ?? THREAD_MIN_PAIRS;
  const marks = new MarkBuffer();
  let worker: Worker | null = null;
  let nextId = 1;
  let pending: { id: number; resolve(r: CountReply): void; reject(e: Error): void } | null = null;
  /** Counts run one after the other (queued: they reuse both marks arrays). */
  let queue: Promise<unknown> = Promise.resolve();
  const stats = { threaded: 0, threadFailed: 0 };

  function start(): Worker {
    const w = new Worker(BOOT_URL, { resourceLimits: BACKGROUND_THREAD_LIMITS });
    w.on('message', (r: CountReply) => {
      const p = pending;
      if (!p || p.id !== r.id) return;
      pending = null;
      w.unref();
      p.resolve(r);
    });
    const fail = (err: Error) => {
      if (worker === w) worker = null;
      const p = pending;
      pending = null;
      p?.reject(err);
    };
    w.on('error', (err) => fail(new Error(`count thread failed: ${err.message}`)));
    w.on('exit', (code) => fail(new Error(`count thread exited (code ${code})`)));
    w.unref();
    return w;
  }

  function ask(req: CountRequest): Promise<CountReply> {
    worker ??= start();
    const w = worker;
    return new Promise<CountReply>((resolve, reject) => {
      pending = { id: req.id, resolve, reject };
      w.ref();
      w.postMessage(req);
    });
  }

  async function countNow(days: readonly DaySet[]): Promise<WindowCounts> {
    const { sets, base, top } = windowRange(days);
    let pairs = 0;
    for (const s of sets) pairs += s.pairs.length;
    const size = top - base + 1;
    if (threads < 2 || pairs < minPairs || size > MAX_MARKS) return countWindow(sets, marks);
    const split = splitPath(sets);
    let reply: Promise<CountReply>;
    try {
      reply = ask({ id: nextId++, sets: sets.map(shared), base, size, pathFrom: split, pathTo: 0x1_0000_0000 }).catch(unavailable);
    } catch {
      return countWindow(sets, marks);
    }
    const own = marks.take(size);
    const low = countPaths(sets, own, base, 0, split);
    const r = await reply;
    if ('error' in r) {
      // The upper paths in this thread: its marks already hold the lower ones' site-wide bits.
      stats.threadFailed++;
      const high = countPaths(sets, own, base, split);
      return { totals: siteWideCounts(own, null, size), ...join(low, high) };
    }
    stats.threaded++;
    return { totals: siteWideCounts(own, r.marks, size), ...join(low, r.rows) };
  }

  async function countRangesNow(spill: RangeSpill): Promise<WindowCounts> {
    const { base, top } = spill;
    const size = top - base + 1;
    if (top < 0 || spill.ranges === 1 || size > MAX_MARKS) return countNow(spill.readAll());
    const split = threads >= 2 && spill.pairs >= minPairs;
    const own = marks.take(size);
    const parts: PathRows[] = [];
    let theirs: Uint8Array | null = null;
    for (let r = 0; r < spill.ranges; r++) {
      const from = spill.bounds[r] as number;
      const to = spill.bounds[r + 1] as number;
      const sets = spill.read(r).filter((s) => s.pairs.length > 0);
      if (!split) {
        parts.push(countPaths(sets, own, base, from, to));
        continue;
      }
      const mid = splitPath(sets, from, to);
      let reply: Promise<CountReply>;
      try {
        reply = ask({ id: nextId++, sets: sets.map(shared), base, size, pathFrom: mid, pathTo: to, keep: r > 0 }).catch(unavailable);
      } catch {
        reply = Promise.resolve(unavailable());
      }
      parts.push(countPaths(sets, own, base, from, mid));
      const got = await reply;
      if ('error' in got) {
        // The thread's marks of the earlier ranges are lost with it: the whole window again, in this thread.
        stats.threadFailed++;
        return countWindow(spill.readAll(), marks);
      }
      parts.push(got.rows);
      theirs = got.marks;
    }
    if (theirs) stats.threaded++;
    let rows = parts[0] as PathRows;
    for (let i = 1; i < parts.length; i++) rows = join(rows, parts[i] as PathRows);
    return { totals: siteWideCounts(own, theirs, size), ...rows };
  }

  /** Runs counts one after the other (they reuse both marks arrays). */
  function queued(f: () => Promise<WindowCounts>): Promise<WindowCounts> {
    const run = queue.then(f);
    queue = run.catch(() => {});
    return run.finally(() => {
      if (marks.size > KEEP_MARKS) marks.release();
    });
  }

  return {
    countRanges: (spill) => queued(() => countRangesNow(spill)),
    count: (days) => queued(() => countNow(days)),
    stats,
    prepare() {
      if (threads >= 2) worker ??= start();
    },
    async close() {
      const w = worker;
      worker = null;
      if (w) await w.terminate();
    },
  };
}

function join(a: PathRows, b: PathRows): PathRows {
  return { pathIds: concat(a.pathIds, b.pathIds), human: concat(a.human, b.human), ai: concat(a.ai, b.ai), total: concat(a.total, b.total) };
}
