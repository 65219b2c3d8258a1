// A small least-recently-used map (Map keeps insertion order: a hit re-inserts the key at the end).
export class Lru<K, V> {
  private readonly map = new Map<K, V>();
  constructor(readonly max: number) {}

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  /** Like get, without refreshing the entry's recency. */
  peek(key: K): V | undefined {
    return this.map.get(key);
  }

  set(key: K, value: V): void {
    if (this.map.has(key)) this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.max) {
      const oldest = this.map.keys().next().value as K;
      this.map.delete(oldest);
    }
  }

  delete(key: K): void {
    this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }
}

/**
 * A bounded cache with approximate LRU eviction at the cost of one Map lookup per hit: entries live in a
 * current and a previous generation of at most `max / 2` entries each. When the current one is full it
 * becomes the previous one (the old previous is dropped); a hit in the previous generation moves the entry
 * to the current one. So an entry used at least once per `max / 2` insertions is kept; one not used for
 * `max` insertions is gone. For hot ingest caches where Lru's delete + re-insert per hit shows in profiles.
 */
export class GenerationCache<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();
  private readonly half: number;
  constructor(readonly max: number) {
    this.half = Math.max(1, Math.floor(max / 2));
  }

  /** Entries held (an entry present in both generations counts twice). */
  get size(): number {
    return this.current.size + this.previous.size;
  }

  get(key: K): V | undefined {
    const v = this.current.get(key);
    if (v !== undefined) return v;
    const old = this.previous.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  set(key: K, value: V): void {
    this.current.set(key, value);
    if (this.current.size >= this.half) {
      this.previous = this.current;
      this.current = new Map();
    }
  }

  delete(key: K): void {
    this.current.delete(key);
    this.previous.delete(key);
  }

  clear(): void {
    this.current.clear();
    this.previous.clear();
  }
}

/** A map bounded by the summed sizes of its entries, least recently used first out (ByteLru, SizedLru). */
abstract class WeighedLru<K, V> {
  protected readonly map = new Map<K, { value: V; bytes: number }>();
  protected total = 0;
  /** `dispose`: told of every value that leaves (evicted, deleted, replaced or cleared), e.g. to close its file. */
  constructor(
    readonly maxBytes: number,
    private readonly dispose?: (value: V) => void,
  ) {}

  /** Entries held. */
  get size(): number {
    return this.map.size;
  }

  /** The summed sizes (as last measured). */
  get bytes(): number {
    return this.total;
  }

  get(key: K): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  delete(key: K): void {
    const e = this.map.get(key);
    if (e) {
      this.map.delete(key);
      this.total -= e.bytes;
      this.dispose?.(e.value);
    }
  }

  clear(): void {
    const values = this.dispose ? [...this.map.values()] : [];
    this.map.clear();
    this.total = 0;
    for (const e of values) this.dispose?.(e.value);
  }

  /** Evicts least recently used entries but `keep` until the sum is within the bound. */
  protected trim(keep?: K): void {
    for (const [k, e] of this.map) {
      if (this.total <= this.maxBytes) break;
      if (k === keep) continue;
      this.map.delete(k);
      this.total -= e.bytes;
      this.dispose?.(e.value);
    }
  }
}

/** A map bounded by the summed size of its values, given when set; a value larger than the bound is not kept. */
export class ByteLru<V> extends WeighedLru<string, V> {
  set(key: string, value: V, bytes: number): void {
    this.delete(key);
    if (bytes > this.maxBytes) return;
    this.map.set(key, { value, bytes });
    this.total += bytes;
    this.trim(key);
  }
}

/**
 * A least-recently-used map bounded by the summed sizes of entries that grow while cached (per-project state:
 * visitor indexes and dictionary caches). An entry's size is measured by `sizeOf` when it is set and when its
 * owner calls `resize` after growing it; least recently used entries go until the sum is within `maxBytes`,
 * never the entry being resized (so one entry larger than the bound stays, alone). O(1) a call but the evictions.
 */
export class SizedLru<K, V> extends WeighedLru<K, V> {
  constructor(
    maxBytes: number,
    private readonly sizeOf: (value: V) => number,
    dispose?: (value: V) => void,
  ) {
    super(maxBytes, dispose);
  }

  set(key: K, value: V): void {
    const e = this.map.get(key);
    if (e !== undefined && e.value === value) {
      // The same value again: most recently used, not disposed.
      this.map.delete(key);
      this.map.set(key, e);
    } else {
      this.delete(key);
      this.map.set(key, { value, bytes: 0 });
    }
    this.resize(key);
  }

  /** Measures `key`'s entry again (if held) and evicts others, least recently used first, down to the bound. */
  resize(key: K): void {
    const e = this.map.get(key);
    if (e) {
      const bytes = this.sizeOf(e.value);
      this.total += bytes - e.bytes;
      e.bytes = bytes;
    }
    this.trim(key);
  }
}
