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
//
// Held keys (issue 16, peak RSS): an entry whose key the project's key store holds (visitor-keys.ts, a prefix of
// the dictionary, kept for good) needs no stored hash: its candidates are confirmed against those bytes in memory,
// and a growth computes its hash again from them (visitor-key.ts decodeVisitorKeyCodes, no string made). Such
// entries live in a second set of 256 shards (8 bits of lane b: a growth, ~1.7 µs an entry, stays under ~0.1 s at
// 20M), one 32-bit word a slot: the ordinal in the high bits and a tag (`tagBits` bits of lane b below its shard
// bits) in the low ones, 24 tag bits while ordinals are small, fewer as the largest held ordinal needs more bits
// (7 at 20M visitors; the tags are cut in place, no entry moves). 4 bytes a slot instead of 8: 5–6.25 bytes a held
// visitor. Entries whose key is not held (past the key store's bound, or no key store) keep the 8-byte slots above.
// 20M visitors: the index 235 → 128 MiB (bench/README.md, Decisions, "Held-key index slots").
// Invariant: a held entry's key stays in the key store (it never drops a chunk it took), so its hash — and thus
// its slot — can always be computed again; a spurious candidate (same shard, home region and tag: ~4–5 lookups in
// 100 at 20M) costs an in-memory comparison of key bytes, never a read.

const EMPTY = 0;
const MAX_LOAD = 0.8;
const GROWTH = 1.25;
const SHARD_BITS = 6;
const SHARDS = 1 << SHARD_BITS;
const MIN_SLOTS = 16;
/** Held entries' shards: 256 (8 bits of lane b), so that a growth, which hashes each entry's key again, stays short. */
const HELD_SHARD_BITS = 8;
const HELD_SHARDS = 1 << HELD_SHARD_BITS;
/** Bits of lane b below the held shard bits: the most a held entry's tag keeps. */
const TAG_SOURCE_BITS = 32 - HELD_SHARD_BITS;

/** Where the index finds the keys of held entries: the project's key store (visitor-keys.ts VisitorKeyStore). */
export interface HeldKeys {
  /** Whether `ord`'s key is held, for good: keyCodesOf(ord) gives it from now on. */
  holds(ord: number): boolean;
  /** Writes a held ordinal's key as UTF-16 code units to `codes` and returns their count (-1: not held). */
  keyCodesOf(ord: number): number;
  /** Where keyCodesOf writes. */
  readonly codes: Uint16Array;
}

interface Shard {
  /** The key's 32-bit hash (lane a) per slot. */
  h: Uint32Array;
  /** Ordinal per slot; 0 = empty (ordinals start at 1). 32-bit until an ordinal needs more. */
  ords: Uint32Array | Float64Array;
  count: number;
}

interface HeldShard {
  /** Per slot: ordinal × 2^tagBits + tag; 0 = empty. */
  w: Uint32Array;
  count: number;
}

/** The home slot of hash `a` in a table of `slots` slots: its top 24 bits scaled (exact: < 2^24 × 2^27). */
function homeOf(a: number, slots: number): number {
  return Math.floor(((a >>> 8) * slots) / 16_777_216);
}

export class VisitorHashIndex {
  private readonly shards: Shard[] = [];
  private readonly held: HeldShard[] = [];
  private count = 0;
  private wide = false;
  /** Tag bits of a held entry's word (the rest holds its ordinal). */
  private tagBits = TAG_SOURCE_BITS;
  private readonly seed1: number;
  private readonly seed2: number;
  /** Scratch outputs of hash(). */
  private a = 0;
  private b = 0;

  /** `keys`: where held entries' keys are (none: every entry keeps its hash). */
  constructor(
    capacity = 1024,
    seeds?: [number, number],
    private readonly keys?: HeldKeys,
  ) {
    const slots = Math.max(MIN_SLOTS, Math.ceil(capacity / SHARDS / MAX_LOAD));
    for (let s = 0; s < SHARDS; s++)
      this.shards.push({ h: new Uint32Array(keys ? MIN_SLOTS : slots), ords: new Uint32Array(keys ? MIN_SLOTS : slots), count: 0 });
    const heldSlots = Math.max(MIN_SLOTS, Math.ceil(capacity / HELD_SHARDS / MAX_LOAD));
    if (keys) for (let s = 0; s < HELD_SHARDS; s++) this.held.push({ w: new Uint32Array(heldSlots), count: 0 });
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
    for (const s of this.held) n += s.w.byteLength;
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
    this.finish(h1, h2);
  }

  /** The two lanes' final mixing (cyrb53's) into this.a and this.b: hash() and hashCodes() end here. */
  private finish(h1: number, h2: number): void {
    let x = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
    x ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    let y = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
    y ^= Math.imul(x ^ (x >>> 13), 3266489909);
    this.a = x >>> 0;
    this.b = y >>> 0;
  }

  /** hash() of the key whose `n` UTF-16 code units are in `codes` (the same mixing: the same hashes). */
  private hashCodes(codes: Uint16Array, n: number): void {
    let h1 = 0xdeadbeef ^ this.seed1;
    let h2 = 0x41c6ce57 ^ this.seed2;
    for (let i = 0; i < n; i++) {
      const ch = codes[i] as number;
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    this.finish(h1, h2);
  }

  /**
   * Candidate ordinals of the key (usually none or one): every entry of its shard with the key's hash, and every
   * held entry of its shard with the key's tag (its key is held: the caller compares it in memory).
   */
  candidates(key: string, out: number[]): void {
    this.hash(key);
    const a = this.a;
    const hs = this.held[this.b >>> TAG_SOURCE_BITS];
    if (hs !== undefined && hs.count > 0) {
      const { w } = hs;
      const tb = this.tagBits;
      const mask = tb === 0 ? 0 : (1 << tb) - 1;
      const tag = tagOf(this.b, tb);
      const slots = w.length;
      let i = homeOf(a, slots);
      for (;;) {
        const x = w[i] as number;
        if (x === EMPTY) break;
        if ((x & mask) === tag) out.push(x >>> tb);
        if (++i === slots) i = 0;
      }
    }
    const { h, ords, count } = this.shards[this.b >>> (32 - SHARD_BITS)] as Shard;
    if (count === 0) return;
    const slots = ords.length;
    let i = homeOf(a, slots);
    for (;;) {
      const ord = ords[i] as number;
      if (ord === EMPTY) return;
      if (h[i] === a) out.push(ord);
      if (++i === slots) i = 0;
    }
  }

  /**
   * Sizes the held shards of an empty index for `n` held entries, so that loading a whole dictionary does not grow
   * them (each growth hashes their keys again).
   */
  reserveHeld(n: number): void {
    if (this.count > 0 || this.keys === undefined) return;
    // A tenth over each shard's share: at 20M, ~78k ± 280 a shard, none grows while loading.
    const slots = Math.max(MIN_SLOTS, Math.ceil((1.1 * n) / HELD_SHARDS / MAX_LOAD));
    for (const s of this.held) if (s.w.length < slots) s.w = new Uint32Array(slots);
  }

  /** Adds key → ord (the caller knows the pair is new; a held one's key is in the key store already). */
  add(key: string, ord: number): void {
    if (!(ord > 0) || !Number.isSafeInteger(ord)) throw new Error(`visitor index: bad ordinal ${ord}`);
    this.hash(key);
    this.place(ord);
  }

  /** add() of the key whose `n` UTF-16 code units are in `codes` (hashCodes: the same entry, no string made). */
  addCodes(codes: Uint16Array, n: number, ord: number): void {
    if (!(ord > 0) || !Number.isSafeInteger(ord)) throw new Error(`visitor index: bad ordinal ${ord}`);
    this.hashCodes(codes, n);
    this.place(ord);
  }

  /** Puts `ord`, whose key's hash is in this.a and this.b: held where the key store holds its key. */
  private place(ord: number): void {
    if (this.keys !== undefined && ord <= 0xffff_ffff && this.keys.holds(ord)) {
      this.putHeld(ord);
      return;
    }
    if (ord > 0xffff_ffff && !this.wide) {
      for (const s of this.shards) s.ords = Float64Array.from(s.ords);
      this.wide = true;
    }
    const s = this.shards[this.b >>> (32 - SHARD_BITS)] as Shard;
    if (s.count + 1 > s.ords.length * MAX_LOAD) this.grow(s);
    put(s, this.a, ord);
    s.count++;
    this.count++;
  }

  /**
   * Adds an ordinal whose key the key store holds, hashing the stored key's code units (hashCodes: the hash add()
   * computes from the string) — the same entry add(key, ord) makes, with no string made. False, adding nothing,
   * when its key is not held.
   */
  addHeldOrd(ord: number): boolean {
    if (this.keys === undefined || !(ord > 0) || ord > 0xffff_ffff) return false;
    const n = this.keys.keyCodesOf(ord);
    if (n < 0) return false;
    this.hashCodes(this.keys.codes, n);
    this.putHeld(ord);
    return true;
  }

  /** Puts a held entry whose key's hash is in this.a and this.b. */
  private putHeld(ord: number): void {
    const ordBits = 32 - Math.clz32(ord);
    if (ordBits + this.tagBits > 32) this.retag(32 - ordBits);
    const a = this.a;
    const s = this.held[this.b >>> TAG_SOURCE_BITS] as HeldShard;
    const word = ord * 2 ** this.tagBits + tagOf(this.b, this.tagBits);
    if (s.count + 1 > s.w.length * MAX_LOAD) this.growHeld(s);
    putWord(s.w, a, word);
    s.count++;
    this.count++;
  }

  /** Cuts every held entry's tag to `bits` bits (its low ones go), in place: slots depend on lane a alone. */
  private retag(bits: number): void {
    const drop = this.tagBits - bits;
    const old = this.tagBits;
    const mask = (1 << old) - 1;
    for (const { w } of this.held) {
      for (let i = 0; i < w.length; i++) {
        const x = w[i] as number;
        if (x !== EMPTY) w[i] = (x >>> old) * 2 ** bits + ((x & mask) >>> drop);
      }
    }
    this.tagBits = bits;
  }

  /** A held shard 1.25× larger, each entry's slot from its key's hash computed again (its key is held). */
  private growHeld(s: HeldShard): void {
    const old = s.w;
    s.w = new Uint32Array(Math.ceil(old.length * GROWTH));
    const keys = this.keys as HeldKeys;
    const tb = this.tagBits;
    for (let i = 0; i < old.length; i++) {
      const x = old[i] as number;
      if (x === EMPTY) continue;
      const n = keys.keyCodesOf(x >>> tb);
      if (n < 0) throw new Error(`visitor index: held ordinal ${x >>> tb} has no key`);
      this.hashCodes(keys.codes, n);
      putWord(s.w, this.a, x);
    }
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

/** A held entry's tag: the top `bits` of lane b's bits below its shard bits. */
function tagOf(b: number, bits: number): number {
  return (b & ((1 << TAG_SOURCE_BITS) - 1)) >>> (TAG_SOURCE_BITS - bits);
}

function put(s: Shard, a: number, ord: number): void {
  const { h, ords } = s;
  const slots = ords.length;
  let i = homeOf(a, slots);
  while ((ords[i] as number) !== EMPTY) if (++i === slots) i = 0;
  h[i] = a;
  ords[i] = ord;
}

function putWord(w: Uint32Array, a: number, word: number): void {
  const slots = w.length;
  let i = homeOf(a, slots);
  while ((w[i] as number) !== EMPTY) if (++i === slots) i = 0;
  w[i] = word;
}
