// Byte buffers for the segment codec and the export's blobs (day sets, day summaries): a growing writer and a
// bounds-checked reader. Pure: no I/O.
//
// Varints are unsigned LEB128 of at most 8 bytes (56 bits): enough for every integer the codec stores (all
// are ≤ Number.MAX_SAFE_INTEGER), and arithmetic rather than 32-bit bit operations beyond 28 bits, so values
// up to 2^53 − 1 survive. The reader never reads past its end, never accepts a varint longer than 8 bytes, above
// MAX_SAFE_INTEGER or non-canonical, and reports every violation through its error factory (a SegmentFormatError
// unless the format names its own error class).

/** Bytes that are not a valid segment (corrupt, truncated, hostile or from an unknown format version). */
export class SegmentFormatError extends Error {
  constructor(message: string) {
    super(`invalid analytics segment: ${message}`);
    this.name = 'SegmentFormatError';
  }
}

const MAX_VARINT_BYTES = 8;

export class ByteWriter {
  private buf: Uint8Array;
  length = 0;

  constructor(capacity = 1024) {
    this.buf = new Uint8Array(Math.max(16, capacity));
  }

  private ensure(extra: number): void {
    const need = this.length + extra;
    if (need <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < need) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.length++] = v;
  }

  /** Unsigned LEB128 of a safe non-negative integer. */
  varint(v: number): void {
    this.ensure(MAX_VARINT_BYTES);
    const b = this.buf;
    let o = this.length;
    while (v >= 0x80) {
      b[o++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    b[o++] = v;
    this.length = o;
  }

  /** `width` (0–4) little-endian bytes of an unsigned integer below 2^(8 × width). */
  fixed(v: number, width: number): void {
    this.ensure(width);
    const b = this.buf;
    let o = this.length;
    for (let k = 0; k < width; k++) b[o++] = (v >>> (8 * k)) & 0xff;
    this.length = o;
  }

  /** Zero bytes up to a multiple of `n` (a power of two) of the length. */
  pad(n: number): void {
    const to = (this.length + n - 1) & ~(n - 1);
    this.ensure(to - this.length);
    this.buf.fill(0, this.length, to);
    this.length = to;
  }

  bytes(src: Uint8Array): void {
    this.ensure(src.length);
    this.buf.set(src, this.length);
    this.length += src.length;
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

export class ByteReader {
  pos = 0;

  constructor(
    readonly buf: Uint8Array,
    /** What is being read, for error messages. */
    private what: string,
    private readonly error: (message: string) => Error = (m) => new SegmentFormatError(m),
  ) {}

  /** Names the part being read in later errors. */
  section(what: string): void {
    this.what = what;
  }

  fail(problem: string): never {
    throw this.error(`${this.what}: ${problem}`);
  }

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  need(n: number): void {
    if (n > this.buf.length - this.pos) this.fail(`truncated (needs ${n} more bytes at offset ${this.pos}, ${this.buf.length - this.pos} left)`);
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++] as number;
  }

  varint(): number {
    const b = this.buf;
    let o = this.pos;
    // Fast path: one-byte values (most deltas and counts). Past the end, b[o] is undefined and falls through.
    const first = b[o] as number;
    if (first < 0x80) {
      this.pos = o + 1;
      return first;
    }
    let v = 0;
    let scale = 1;
    for (let k = 0; k < MAX_VARINT_BYTES; k++) {
      if (o >= b.length) this.fail(`truncated varint at offset ${this.pos}`);
      const x = b[o++] as number;
      v += (x & 0x7f) * scale;
      if (x < 0x80) {
        if (v > Number.MAX_SAFE_INTEGER) this.fail(`integer out of range at offset ${this.pos}`);
        if (k > 0 && x === 0) this.fail(`non-canonical varint at offset ${this.pos}`);
        this.pos = o;
        return v;
      }
      scale *= 0x80;
    }
    return this.fail(`varint longer than ${MAX_VARINT_BYTES} bytes at offset ${this.pos}`);
  }

  /** A varint that must be at most `max`. */
  bounded(max: number, name: string): number {
    const v = this.varint();
    if (v > max) this.fail(`${name} ${v} exceeds ${max}`);
    return v;
  }

  take(n: number): Uint8Array {
    this.need(n);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}
