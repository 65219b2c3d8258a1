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
// Open addressing with linear probing in typed arrays: 8 bytes per slot (a 32-bit hash and a 32-bit ordinal;
// ordinals past 2^32 switch the table to 64-bit ones), at most 70% full: 11–23 bytes per visitor, 20M
// visitors (a 100M-event year of bench:scale) 256 MiB instead of the 512 of 16-byte slots, and half as much
// again while the table doubles. The home slot is the hash's low bits, so a key only meets a stored entry of
// the same home slot whose other 32 − log2(slots) bits are equal: a spurious candidate on about one miss in
// 2^(32 − log2(slots)) / 0.7 at most (1 in ~180 at 2^25 slots), each a key in the writer's confirming read, which runs
// anyway for the returning visitors. Duplicate hashes (distinct keys) are kept as separate entries.

const EMPTY = 0;
const MAX_LOAD = 0.7;

export class VisitorHashIndex {
  /** The key's 32-bit hash per slot (its low bits are the home slot). */
  private h: Uint32Array;
  /** Ordinal per slot; 0 = empty (ordinals start at 1). 32-bit until an ordinal needs more. */
  private ords: Uint32Array | Float64Array;
  private mask: number;
  private count = 0;
  private readonly seed1: number;
  private readonly seed2: number;
  /** Scratch output of hash(). */
  private a = 0;

  constructor(capacity = 1024, seeds?: [number, number]) {
    let cap = 16;
    while (cap * MAX_LOAD < capacity) cap *= 2;
    this.h = new Uint32Array(cap);
    this.ords = new Uint32Array(cap);
    this.mask = cap - 1;
    this.seed1 = seeds ? seeds[0] >>> 0 : (Math.random() * 2 ** 32) >>> 0;
    this.seed2 = seeds ? seeds[1] >>> 0 : (Math.random() * 2 ** 32) >>> 0;
  }

  /** Entries held. */
  get size(): number {
    return this.count;
  }

  /** Bytes held by the table. */
  get bytes(): number {
    return this.h.byteLength + this.ords.byteLength;
  }

  /** A 32-bit hash of the key (cyrb53-style mixing of two seeded lanes) into this.a. */
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
    this.a = h1 >>> 0;
  }

  /** Candidate ordinals of the key (usually none or one): every entry with the key's hash. */
  candidates(key: string, out: number[]): void {
    this.hash(key);
    const a = this.a;
    let i = a & this.mask;
    for (;;) {
      const ord = this.ords[i] as number;
      if (ord === EMPTY) return;
      if (this.h[i] === a) out.push(ord);
      i = (i + 1) & this.mask;
    }
  }

  /** Adds key → ord (the caller knows the pair is new). */
  add(key: string, ord: number): void {
    if (!(ord > 0) || !Number.isSafeInteger(ord)) throw new Error(`visitor index: bad ordinal ${ord}`);
    if (ord > 0xffff_ffff && this.ords instanceof Uint32Array) this.ords = Float64Array.from(this.ords);
    if (this.count + 1 > this.ords.length * MAX_LOAD) this.grow();
    this.hash(key);
    this.put(this.a, ord);
    this.count++;
  }

  private put(a: number, ord: number): void {
    let i = a & this.mask;
    while ((this.ords[i] as number) !== EMPTY) i = (i + 1) & this.mask;
    this.h[i] = a;
    this.ords[i] = ord;
  }

  private grow(): void {
    const { h, ords } = this;
    const cap = ords.length * 2;
    this.h = new Uint32Array(cap);
    this.ords = ords instanceof Uint32Array ? new Uint32Array(cap) : new Float64Array(cap);
    this.mask = cap - 1;
    for (let i = 0; i < ords.length; i++) {
      const ord = ords[i] as number;
      if (ord !== EMPTY) this.put(h[i] as number, ord);
    }
  }
}
