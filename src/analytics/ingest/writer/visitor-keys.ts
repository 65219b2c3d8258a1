// The stored keys of a project's visitors, by ordinal: the bytes of its `analytics_visitor_chunks` rows
// (visitor-key.ts encoding, one key every `width` bytes), so the writer confirms a visitor-index candidate
// (visitor-index.ts: a 32-bit hash match is only a candidate) by comparing bytes here instead of reading the chunk
// row. In memory up to a bound, then in an unlinked file; no database I/O.
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
// would pass it, and every later one, is not held in memory (`full`), so memory holds a prefix of the dictionary's
// chunks.
//
// The key file (issue 16, peak RSS under 1 GB at 20M visitors): given a directory, the chunks past the bound are
// appended to an unlinked file there (through a 1 MiB tail buffer) and a candidate among them is compared after one
// pread of its key: ~2–3 µs (the page cache holds the file; it is not the process's RSS), against a primary-key
// read of its chunk before. Held in memory, a visitor costs 5–6 bytes of index slot and ~19 of key; in the file,
// 10–12.5 of index slot (its entry keeps its hash, visitor-index.ts) and nothing else, so a smaller memory bound
// trades memory for preads (bench/README.md, Decisions, "Visitor key file"). Without a directory, or once the file
// fails (cannot be made, full disk, a failed read), the chunks it does not hold are confirmed by reading their
// chunk rows as before: an answer is never wrong, only slower.
// Invariant: only committed chunks are added (the writer adds its own after the commit, like the index), and a
// stored key never changes, so bytes held here, in memory or in the file, are the stored key of their ordinal for
// good. close() (the project's state dropped) closes the file; its space is freed with it.

import fs from 'node:fs';
import { openUnlinked, writeAllAt } from '../../../lib/scratch-file.ts';
import { decodeVisitorKeyCodesInto } from '../../store/visitor-key.ts';

const BLOCK = 1 << 20;
/** Bytes counted per chunk for its entries in the parallel arrays. */
const CHUNK_OVERHEAD = 40;
/** Chunks bound for the key file gather here and are written together (a live group adds a few rows at a time). */
const TAIL = 1 << 20;
/** blockOf of a chunk in the key file (its offset is then its position in the file). */
const IN_FILE = -1;

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
  /** Set once a chunk was refused memory (over the bound, or out of order): no later chunk is held in memory. */
  full = false;
  /** Set once no later chunk is held anywhere (out of order; no key file, or it failed). */
  private stopped = false;
  /** The key file: -1 until the first chunk past the bound (or for good once it failed). */
  private fd = -1;
  private fileFailed = false;
  /** Bytes of the key file written to it; chunks at positions from here on are in `tail`. */
  private flushed = 0;
  private tail: Buffer | null = null;
  private tailUsed = 0;
  /** Where a file chunk's key is read to. */
  private scratch = Buffer.allocUnsafe(64);

  /** `fileDir`: where the chunks past `maxBytes` go, in an unlinked file (none: they are not held). */
  constructor(
    readonly maxBytes: number,
    private readonly fileDir?: string,
  ) {}

  /** Bytes held in memory: the blocks, the per-chunk arrays and the key file's tail. */
  get bytes(): number {
    return this.blockBytes + this.firsts.length * CHUNK_OVERHEAD + (this.tail === null ? 0 : TAIL);
  }

  /** Bytes of keys in the key file (with its tail). */
  get fileBytes(): number {
    return this.flushed + this.tailUsed;
  }

  /** Chunks held, in memory or in the file. */
  get chunks(): number {
    return this.firsts.length;
  }

  /**
   * Holds one chunk's keys (`data`: keys of `width` bytes each, ordinals from `firstOrd`). Chunks come in ascending
   * order of ordinals. True when it is held in memory (visitor-index.ts: its entries need no hash); past the bound
   * it goes to the key file, if any; out of order, nothing later is held.
   */
  add(firstOrd: number, width: number, data: Uint8Array): boolean {
    if (width <= 0 || data.length % width !== 0) throw new Error(`visitor keys: ${data.length} bytes are not keys of ${width}`);
    if (this.stopped) return false;
    if (data.length === 0) return true;
    const n = this.firsts.length;
    if (n > 0 && firstOrd < (this.firsts[n - 1] as number) + (this.counts[n - 1] as number)) {
      this.full = true;
      this.stopped = true;
      return false;
    }
    if (!this.full) {
      const fresh = this.blocks.length === 0 || this.used + data.length > BLOCK;
      const grow = fresh ? Math.max(BLOCK, data.length) : 0;
      if (this.bytes + grow + CHUNK_OVERHEAD <= this.maxBytes) {
        if (fresh) {
          this.blocks.push(new Uint8Array(grow));
          this.blockBytes += grow;
          this.used = 0;
        }
        (this.blocks[this.blocks.length - 1] as Uint8Array).set(data, this.used);
        this.push(firstOrd, width, data.length, this.blocks.length - 1, this.used);
        this.used += data.length;
        return true;
      }
      this.full = true;
    }
    const at = this.append(data);
    if (at < 0) this.stopped = true;
    else this.push(firstOrd, width, data.length, IN_FILE, at);
    return false;
  }

  private push(firstOrd: number, width: number, length: number, block: number, offset: number): void {
    this.firsts.push(firstOrd);
    this.counts.push(length / width);
    this.widths.push(width);
    this.blockOf.push(block);
    this.offsets.push(offset);
  }

  /** Appends to the key file (through the tail); its position, or -1 when there is no file. */
  private append(data: Uint8Array): number {
    if (this.fileDir === undefined || this.fileFailed) return -1;
    try {
      if (this.fd < 0) this.fd = openUnlinked(this.fileDir, '.inkwell-visitor-keys');
      const at = this.flushed + this.tailUsed;
      if (this.tailUsed + data.length > TAIL) this.flush();
      if (data.length > TAIL) {
        writeAllAt(this.fd, data, this.flushed);
        this.flushed += data.length;
      } else {
        this.tail ??= Buffer.allocUnsafe(TAIL);
        this.tail.set(data, this.tailUsed);
        this.tailUsed += data.length;
      }
      return at;
    } catch {
      this.fail();
      return -1;
    }
  }

  private flush(): void {
    if (this.tailUsed === 0) return;
    writeAllAt(this.fd, (this.tail as Buffer).subarray(0, this.tailUsed), this.flushed);
    this.flushed += this.tailUsed;
    this.tailUsed = 0;
  }

  /**
   * The key file failed (or is closed): its chunks are no longer held (their candidates are read from their rows),
   * nor is any later one. They are the last chunks: the file takes chunks only once memory took its last.
   */
  private fail(): void {
    this.fileFailed = true;
    this.stopped = true;
    while (this.blockOf.length > 0 && this.blockOf[this.blockOf.length - 1] === IN_FILE) {
      this.firsts.pop();
      this.counts.pop();
      this.widths.pop();
      this.blockOf.pop();
      this.offsets.pop();
    }
    this.tail = null;
    this.tailUsed = 0;
    if (this.fd >= 0) {
      try {
        fs.closeSync(this.fd);
      } catch {
        // Nothing more to do: the file is unlinked, its space goes with the descriptor.
      }
      this.fd = -1;
    }
  }

  /**
   * Closes the key file (its space is freed: it is unlinked); what it held is no longer held, and nothing later is
   * held (a dropped project's store, which a transaction in flight may still add to, never opens a file again).
   */
  close(): void {
    this.fail();
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

  /** Whether `ord`'s key is held in memory (for good: a chunk taken is never dropped). */
  holds(ord: number): boolean {
    const c = this.chunkOf(ord);
    return c >= 0 && this.blockOf[c] !== IN_FILE;
  }

  /** Scratch of keyCodesOf: the UTF-16 code units of the last key asked for. */
  codes = new Uint16Array(64);

  /** Writes `ord`'s key as UTF-16 code units to `codes` (grown as needed) and returns their count; -1 when not held in memory. */
  keyCodesOf(ord: number): number {
    const lo = this.chunkOf(ord);
    if (lo < 0 || this.blockOf[lo] === IN_FILE) return -1;
    const width = this.widths[lo] as number;
    const at = (this.offsets[lo] as number) + (ord - (this.firsts[lo] as number)) * width;
    return decodeVisitorKeyCodesInto((this.blocks[this.blockOf[lo] as number] as Uint8Array).subarray(at, at + width), this);
  }

  /** Whether `ord`'s stored key is `encoded` (visitor-key.ts encodeVisitorKey); undefined when not held here. */
  matches(ord: number, encoded: Uint8Array): boolean | undefined {
    const lo = this.chunkOf(ord);
    if (lo < 0) return undefined;
    const width = this.widths[lo] as number;
    if (encoded.length !== width) return false;
    const at = (this.offsets[lo] as number) + (ord - (this.firsts[lo] as number)) * width;
    const block = this.blockOf[lo] as number;
    if (block !== IN_FILE) return sameBytes(this.blocks[block] as Uint8Array, at, encoded);
    if (at >= this.flushed) return sameBytes(this.tail as Buffer, at - this.flushed, encoded);
    if (this.scratch.length < width) this.scratch = Buffer.allocUnsafe(width);
    try {
      if (fs.readSync(this.fd, this.scratch, 0, width, at) !== width) throw new Error('visitor keys: short read');
    } catch {
      this.fail();
      return undefined;
    }
    return sameBytes(this.scratch, 0, encoded);
  }
}

function sameBytes(bytes: Uint8Array, at: number, encoded: Uint8Array): boolean {
  for (let k = 0; k < encoded.length; k++) if (bytes[at + k] !== encoded[k]) return false;
  return true;
}
