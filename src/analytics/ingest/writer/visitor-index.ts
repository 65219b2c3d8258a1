// An in-memory index of a project's visitor dictionary: 64-bit hash of the visitor key → ordinal(s). Pure: no I/O.
//
// Why: a unique B-tree index on random visitor keys dirties about one 4 KiB page per NEW visitor once it is
// larger than a commit's worth of inserts — on a 200k-visitor dictionary that was ~70% of all bytes written
// to the WAL by ingest. With this index the embedded database stores visitors append-only (rowid = ordinal)
// and the writer, holding SQLite's single write lock, finds keys here.
//
// The index is a hint, never the authority: a hash match is only a candidate, confirmed by reading the
// candidate row's exact key (or found in the writer's exact-key cache). So a hash collision costs a read,
// never a wrong ordinal. Hashes are seeded per instance, so clients cannot aim visitor ids at collisions.
//
// Layout, for memory (issue 16: the service's peak RSS under 1 GB at 20M visitors): 64 shards, chosen by 6 bits
// of one hash lane (b), each an open-addressing table with linear probing in typed arrays of 8 bytes a slot (a
// 32-bit hash from the other lane (a) and a 32-bit ordinal; ordinals past 2^32 switch the tables to 64-bit
// ones). A shard's size is any number of slots, not a power of two: the home slot is the top bits of `a` scaled
// to it (multiply-shift), it grows by 1.25× when 80% full, so it stays 64–80% full: 10–12.5 bytes a visitor,
// 200–250 MiB at 20M. Before (one power-of-two table, 35–70% full, doubling at once) that was 256 MiB and 384
// while it doubled (the old and the new table both live); now a growth copies one shard, 1/64 of the whole.
// Measured with 20M visitors in one process: 235 MiB, the process's peak 357 MB over its start against 445 with
// the single table (bench/README.md, Decisions, "Visitor index").
// Invariant: an entry's slot depends only on its stored `a` and its shard's size, so a shard can be rebuilt
// from its own arrays. Entries meeting a lookup share its shard (6 bits of b) and home region (the top bits of
// a), so a spurious candidate needs the rest of `a` equal too: about one lookup in 2^(32 − log2(shard slots)) /
// 13 probes at most (1 in ~600 at 20M visitors, 2^19 slots a shard; it was 1 in ~180 in the single table),
// each a key in the writer's confirming read, which runs anyway for the returning visitors. Duplicate hashes
// (distinct keys) are kept as separate entries.

const EMPTY = 0;
const MAX_LOAD = 0.8;
const GROWTH = 1.25;
const SHARD_BITS = 6;
const SHARDS = 1 << SHARD_BITS;
const MIN_SLOTS = 16;

interface Shard {
  /** The key's 32-bit hash (lane a) per slot. */
  h: Uint32Array;
  /** Ordinal per slot; 0 = empty (ordinals start at 1). 32-bit until an ordinal needs more. */
  ords: Uint32Array | Float64Array;
  count: number;
}

/** The home slot of hash `a` in a table of `slots` slots: its top 24 bits scaled (exact: < 2^24 × 2^27). */
function homeOf(a: number, slots: number): number {
  return Math.floor(((a >>> 8) * slots) / 16_777_216);
}

export class VisitorHashIndex {
  private readonly shards: Shard[] = [];
  private count = 0;
  private wide = false;
  private readonly seed1: number;
  private readonly seed2: number;
  /** Scratch outputs of hash(). */
  private a = 0;
  private b = 0;

  constructor(capacity = 1024, seeds?: [number, number]) {
    const slots = Math.max(MIN_SLOTS, Math.ceil(capacity / SHARDS / MAX_LOAD));
    for (let s = 0; s < SHARDS; s++) this.shards.push({ h: new Uint32Array(slots), ords: new Uint32Array(slots), count: 0 });
    this.seed1 = seeds ? seeds[0] >>> 0 : (Math.random() * 2 ** 32) >>> 0;
    this.seed2 = seeds ? seeds[1] >>> 0 : (Math.random() * 2 ** 32) >>> 0;
  }

  /** Entries held. */
  get size(): number {
    return this.count;
  }

  /** Bytes held by the tables. */
  get bytes(): number {
    let n = 0;
    for (const s of this.shards) n += s.h.byteLength + s.ords.byteLength;
    return n;
  }

  /** Two 32-bit hashes of the key (cyrb53-style mixing of two seeded lanes) into this.a and this.b. */
  private hash(key: string): void {
    let h1 = 0xdeadbeef ^ this.seed1;
    let h2 = 0x41c6ce57 ^ this.seed2;
    for (let i = 0; i < key.length; i++) {
      const ch = key.charCodeAt(i);
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
    h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
    h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    this.a = h1 >>> 0;
    this.b = h2 >>> 0;
  }

  /** Candidate ordinals of the key (usually none or one): every entry of its shard with the key's hash. */
  candidates(key: string, out: number[]): void {
    this.hash(key);
    const a = this.a;
    const { h, ords } = this.shards[this.b >>> (32 - SHARD_BITS)] as Shard;
    const slots = ords.length;
    let i = homeOf(a, slots);
    for (;;) {
      const ord = ords[i] as number;
      if (ord === EMPTY) return;
      if (h[i] === a) out.push(ord);
      if (++i === slots) i = 0;
    }
  }

  /** Adds key → ord (the caller knows the pair is new). */
  add(key: string, ord: number): void {
    if (!(ord > 0) || !Number.isSafeInteger(ord)) throw new Error(`visitor index: bad ordinal ${ord}`);
    if (ord > 0xffff_ffff && !this.wide) {
      for (const s of this.shards) s.ords = Float64Array.from(s.ords);
      this.wide = true;
    }
    this.hash(key);
    const s = this.shards[this.b >>> (32 - SHARD_BITS)] as Shard;
    if (s.count + 1 > s.ords.length * MAX_LOAD) this.grow(s);
    put(s, this.a, ord);
    s.count++;
    this.count++;
  }

  private grow(s: Shard): void {
    const { h, ords } = s;
    const slots = Math.ceil(ords.length * GROWTH);
    s.h = new Uint32Array(slots);
    s.ords = this.wide ? new Float64Array(slots) : new Uint32Array(slots);
    for (let i = 0; i < ords.length; i++) {
      const ord = ords[i] as number;
      if (ord !== EMPTY) put(s, h[i] as number, ord);
    }
  }
}

function put(s: Shard, a: number, ord: number): void {
  const { h, ords } = s;
  const slots = ords.length;
  let i = homeOf(a, slots);
  while ((ords[i] as number) !== EMPTY) if (++i === slots) i = 0;
  h[i] = a;
  ords[i] = ord;
}
