// The import dedup hashes of recently imported (project, day)s, for the writer's duplicate check: a line is a
// duplicate when its 64-bit hash (src/analytics/segments/dedup.ts) is already in one of its day's segments.
//
// Invariant: an entry holds every dedup hash of its (project, day)'s segments with a seq up to `seq`. It is
// filled from the segments (all of them, then those above `seq`: what other processes appended) inside the
// writer's transaction, after the project's write lock is taken, and the writer's own hashes join only after its
// commit. Segments are never deleted without their events being written again (compaction and
// reclassification rewrite the same events, with the same hashes), so an entry can only lack hashes, never hold
// one that is not stored. Bounded by hashes held (least recently used days go first); an evicted day is read
// again from its segments.
export interface DayHashes {
  hashes: Set<bigint>;
  /** Every segment with a seq up to this one is in `hashes` (-1: none yet). */
  seq: number;
}

/** Hashes held at most (about 60 bytes each in a Set<bigint>: ~60 MB). */
export const DEDUP_CACHE_HASHES = 1_000_000;

export class DedupCache {
  /** In recency order (Map keeps insertion order: a use re-inserts the key at the end). */
  private readonly days = new Map<string, DayHashes>();
  private held = 0;

  constructor(private readonly maxHashes = DEDUP_CACHE_HASHES) {}

  private static key(ord: number, day: number): string {
    return `${ord}:${day}`;
  }

  /** The day's entry, created empty when absent. */
  entry(ord: number, day: number): DayHashes {
    const k = DedupCache.key(ord, day);
    let e = this.days.get(k);
    if (e) this.days.delete(k);
    else e = { hashes: new Set(), seq: -1 };
    this.days.set(k, e);
    return e;
  }

  /** Adds hashes of segments up to `seq` to the day's entry, then evicts other days past the bound. */
  add(ord: number, day: number, hashes: Iterable<bigint>, seq: number): void {
    const e = this.entry(ord, day);
    const before = e.hashes.size;
    for (const h of hashes) e.hashes.add(h);
    this.held += e.hashes.size - before;
    if (seq > e.seq) e.seq = seq;
    this.evict(DedupCache.key(ord, day));
  }

  private evict(keep: string): void {
    while (this.held > this.maxHashes && this.days.size > 1) {
      const oldest = this.days.keys().next().value as string;
      if (oldest === keep) break;
      const e = this.days.get(oldest) as DayHashes;
      this.held -= e.hashes.size;
      this.days.delete(oldest);
    }
  }

  clear(): void {
    this.days.clear();
    this.held = 0;
  }
}
