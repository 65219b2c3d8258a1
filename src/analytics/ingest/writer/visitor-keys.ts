// The stored keys of a project's visitors, in memory, by ordinal: the bytes of its `analytics_visitor_chunks` rows
// (visitor-key.ts encoding, one key every `width` bytes), so the writer confirms a visitor-index candidate
// (visitor-index.ts: a 32-bit hash match is only a candidate) by comparing bytes here instead of reading the chunk
// row. Pure: no I/O.
//
// Why (issue 16, ingest at the end of a year no slower than at its start): late in a year most visitors return,
// the 100k-entry exact caches no longer hold them, and every returning visitor's candidate was one primary-key read
// of its chunk: a 10M-event profile put all of the writer's growth over the year in those reads. Held here, a
// visitor costs its key's bytes (17–18 for the two forms the identity module makes) and no object: ~19 bytes a
// visitor with the block slack, 36 MB for the 2M visitors of a 10M-event year, where an exact Map entry is ~128.
//
// Layout: blocks of 1 MiB (a chunk row, at most 1,984 bytes unless one key is longer, never straddles two; a longer
// chunk gets a block of its own), filled in the order chunks are added, and per chunk its first ordinal, key count,
// width, block and offset (parallel arrays, ascending first ordinals). Bounded by `maxBytes`: the first chunk that
// would pass it, and every later one, is not held (`full`), so the store holds a prefix of the dictionary's
// chunks; a candidate it does not hold is confirmed by reading its chunk as before.
// Invariant: only committed chunks are added (the writer adds its own after the commit, like the index), and a
// stored key never changes, so bytes held here are the stored key of their ordinal for good.

import { decodeVisitorKeyCodes } from '../../store/visitor-key.ts';

const BLOCK = 1 << 20;
/** Bytes counted per chunk for its entries in the parallel arrays. */
const CHUNK_OVERHEAD = 40;

export class VisitorKeyStore {
  private readonly blocks: Uint8Array[] = [];
  /** Bytes used in the last block. */
  private used = 0;
  private blockBytes = 0;
  private readonly firsts: number[] = [];
  private readonly counts: number[] = [];
  private readonly widths: number[] = [];
  private readonly blockOf: number[] = [];
  private readonly offsets: number[] = [];
  /** Set once a chunk was refused (over the bound, or out of order): no later chunk is held. */
  full = false;

  constructor(readonly maxBytes: number) {}

  /** Bytes held: the blocks and the per-chunk arrays. */
  get bytes(): number {
    return this.blockBytes + this.firsts.length * CHUNK_OVERHEAD;
  }

  /** Chunks held. */
  get chunks(): number {
    return this.firsts.length;
  }

  /**
   * Holds one chunk's keys (`data`: keys of `width` bytes each, ordinals from `firstOrd`). Chunks come in ascending
   * order of ordinals; returns false (and holds no later chunk) when it would pass the bound or is out of order.
   */
  add(firstOrd: number, width: number, data: Uint8Array): boolean {
    if (this.full) return false;
    const n = this.firsts.length;
    if (width <= 0 || data.length % width !== 0) throw new Error(`visitor keys: ${data.length} bytes are not keys of ${width}`);
    if (data.length === 0) return true;
    if (n > 0 && firstOrd < (this.firsts[n - 1] as number) + (this.counts[n - 1] as number)) {
      this.full = true;
      return false;
    }
    const fresh = this.blocks.length === 0 || this.used + data.length > BLOCK;
    const grow = fresh ? Math.max(BLOCK, data.length) : 0;
    if (this.bytes + grow + CHUNK_OVERHEAD > this.maxBytes) {
      this.full = true;
      return false;
    }
    if (fresh) {
      this.blocks.push(new Uint8Array(grow));
      this.blockBytes += grow;
      this.used = 0;
    }
    const block = this.blocks[this.blocks.length - 1] as Uint8Array;
    block.set(data, this.used);
    this.firsts.push(firstOrd);
    this.counts.push(data.length / width);
    this.widths.push(width);
    this.blockOf.push(this.blocks.length - 1);
    this.offsets.push(this.used);
    this.used += data.length;
    return true;
  }

  /** The chunk holding `ord` (-1: none). */
  private chunkOf(ord: number): number {
    const { firsts } = this;
    let lo = 0;
    let hi = firsts.length - 1;
    if (hi < 0 || ord < (firsts[0] as number) || ord >= (firsts[hi] as number) + (this.counts[hi] as number)) return -1;
    // The last chunk first: the writer asks about the visitors it just added.
    if (ord >= (firsts[hi] as number)) return hi;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((firsts[mid] as number) <= ord) lo = mid;
      else hi = mid - 1;
    }
    return ord - (firsts[lo] as number) < (this.counts[lo] as number) ? lo : -1;
  }

  /** Whether `ord`'s key is held (for good: a chunk taken is never dropped). */
  holds(ord: number): boolean {
    return this.chunkOf(ord) >= 0;
  }

  /** Scratch of keyCodesOf: the UTF-16 code units of the last key asked for. */
  codes = new Uint16Array(64);

  /** Writes `ord`'s key as UTF-16 code units to `codes` (grown as needed) and returns their count; -1 when not held. */
  keyCodesOf(ord: number): number {
    const lo = this.chunkOf(ord);
    if (lo < 0) return -1;
    const width = this.widths[lo] as number;
    const at = (this.offsets[lo] as number) + (ord - (this.firsts[lo] as number)) * width;
    const stored = (this.blocks[this.blockOf[lo] as number] as Uint8Array).subarray(at, at + width);
    let n = decodeVisitorKeyCodes(stored, this.codes);
    if (n < 0) {
      this.codes = new Uint16Array(-n);
      n = decodeVisitorKeyCodes(stored, this.codes);
    }
    return n;
  }

  /** Whether `ord`'s stored key is `encoded` (visitor-key.ts encodeVisitorKey); undefined when not held here. */
  matches(ord: number, encoded: Uint8Array): boolean | undefined {
    const lo = this.chunkOf(ord);
    if (lo < 0) return undefined;
    const i = ord - (this.firsts[lo] as number);
    const width = this.widths[lo] as number;
    if (encoded.length !== width) return false;
    const block = this.blocks[this.blockOf[lo] as number] as Uint8Array;
    const at = (this.offsets[lo] as number) + i * width;
    for (let k = 0; k < width; k++) if (block[at + k] !== encoded[k]) return false;
    return true;
  }
}
