// The import dedup hashes of recently imported (project, day)s, for the writer's duplicate check: a line is a
// duplicate when its 64-bit hash (src/analytics/segments/dedup.ts) is already in one of its day's segments.
//
// Invariant: an entry holds every dedup hash of its (project, day)'s segments with a seq up to `seq`. It is
// filled from the segments (all of them, then those above `seq`: what other processes appended) inside the
// writer's transaction, after the project's write lock is taken, and the writer's own hashes join only after its
// commit. Segments are never deleted without their events being written again (compaction and
// reclassification rewrite the same events, with the same hashes), so an entry can only lack hashes, never hold
// one that is not stored. Bounded in bytes (least recently used days go first); an evicted day is read again
// from its segments.
//
// Why typed arrays (HashSet64) rather than a Set<bigint>: a Set of 1M bigints held ~60 MB of small objects in the
// writer thread's heap, which V8 grows to several times its live data; these tables take 16–32 bytes per hash
// outside the heap and no garbage (bench:import's peak RSS, bench/README.md).

/** Bytes of hash tables held at most by default (about 1–2M hashes). */
export const DEDUP_CACHE_BYTES = 32 * 1024 * 1024;

const scratch = new DataView(new ArrayBuffer(8));

/** The high and low 32 bits of a 64-bit hash, without allocating. */
export function hashWords(h: bigint): [hi: number, lo: number] {
  scratch.setBigUint64(0, h);
  return [scratch.getUint32(0), scratch.getUint32(4)];
}

/**
 * A set of 64-bit hashes as (high, low) 32-bit words: open addressing with linear probing, at most half full.
 * The hashes are uniform (a sha256 prefix), so the low word places them. The all-zero hash is the empty slot's
 * value and is kept as a flag.
 */
export class HashSet64 {
  size = 0;
  private hi: Uint32Array;
  private lo: Uint32Array;
  private mask: number;
  private zero = false;

  constructor(capacity = 8) {
    let slots = 16;
    while (slots < capacity * 2) slots *= 2;
    this.hi = new Uint32Array(slots);
    this.lo = new Uint32Array(slots);
    this.mask = slots - 1;
  }

  /** Bytes of its tables. */
  get bytes(): number {
    return this.hi.length * 8;
  }

  has(hi: number, lo: number): boolean {
    if (hi === 0 && lo === 0) return this.zero;
    for (let i = lo & this.mask; ; i = (i + 1) & this.mask) {
      const l = this.lo[i] as number;
      const h = this.hi[i] as number;
      if (l === lo && h === hi) return true;
      if (l === 0 && h === 0) return false;
    }
  }

  hasBig(h: bigint): boolean {
    const [hi, lo] = hashWords(h);
    return this.has(hi, lo);
  }

  add(hi: number, lo: number): void {
    if (hi === 0 && lo === 0) {
      if (!this.zero) this.size++;
      this.zero = true;
      return;
    }
    if ((this.size + 1) * 2 > this.hi.length) this.grow();
    this.put(hi, lo);
  }

  addBig(h: bigint): void {
    const [hi, lo] = hashWords(h);
    this.add(hi, lo);
  }

  private put(hi: number, lo: number): void {
    for (let i = lo & this.mask; ; i = (i + 1) & this.mask) {
      const l = this.lo[i] as number;
      const h = this.hi[i] as number;
      if (l === lo && h === hi) return;
      if (l === 0 && h === 0) {
        this.hi[i] = hi;
        this.lo[i] = lo;
        this.size++;
        return;
      }
    }
  }

  private grow(): void {
    const { hi, lo } = this;
    this.hi = new Uint32Array(hi.length * 2);
    this.lo = new Uint32Array(lo.length * 2);
    this.mask = this.hi.length - 1;
    this.size = this.zero ? 1 : 0;
    for (let i = 0; i < hi.length; i++) if (hi[i] !== 0 || lo[i] !== 0) this.put(hi[i] as number, lo[i] as number);
  }
}

export interface DayHashes {
  hashes: HashSet64;
  /** Every segment with a seq up to this one is in `hashes` (-1: none yet). */
  seq: number;
}

export class DedupCache {
  /** In recency order (Map keeps insertion order: a use re-inserts the key at the end). */
  private readonly days = new Map<string, DayHashes>();
  private held = 0;

  constructor(private readonly maxBytes = DEDUP_CACHE_BYTES) {}

  private static key(ord: number, day: number): string {
    return `${ord}:${day}`;
  }

  /** Bytes of hash tables held (the bound applies after each `add`). */
  get bytes(): number {
    return this.held;
  }

  /** The day's entry, created empty when absent. */
  entry(ord: number, day: number): DayHashes {
    const k = DedupCache.key(ord, day);
    let e = this.days.get(k);
    if (e) this.days.delete(k);
    else {
      e = { hashes: new HashSet64(), seq: -1 };
      this.held += e.hashes.bytes;
    }
    this.days.set(k, e);
    return e;
  }

  /**
   * Adds hashes of segments up to `seq` to the day's entry, then (unless `evict` is false) evicts other days past
   * the bound. The writer adds the days of a transaction with `evict` false, then calls `trim`: a day it caught up
   * must stay until its events were checked against it and its new hashes added (evicted in between, it would come
   * back empty, or claim `seq` without the hashes, and let duplicates through). One day larger than the bound is
   * kept whole.
   */
  add(ord: number, day: number, hashes: Iterable<bigint>, seq: number, evict = true): void {
    const e = this.entry(ord, day);
    const before = e.hashes.bytes;
    for (const h of hashes) e.hashes.addBig(h);
    this.held += e.hashes.bytes - before;
    if (seq > e.seq) e.seq = seq;
    if (evict) this.evict(DedupCache.key(ord, day));
  }

  /** Evicts the least recently used days past the bound (the most recent one stays). */
  trim(): void {
    while (this.held > this.maxBytes && this.days.size > 1) {
      const oldest = this.days.keys().next().value as string;
      this.held -= (this.days.get(oldest) as DayHashes).hashes.bytes;
      this.days.delete(oldest);
    }
  }

  private evict(keep: string): void {
    while (this.held > this.maxBytes && this.days.size > 1) {
      const oldest = this.days.keys().next().value as string;
      if (oldest === keep) break;
      const e = this.days.get(oldest) as DayHashes;
      this.held -= e.hashes.bytes;
      this.days.delete(oldest);
    }
  }

  clear(): void {
    this.days.clear();
    this.held = 0;
  }
}
