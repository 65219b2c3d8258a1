// Deterministic pseudo-random numbers for the data generator (no I/O).

/** murmur3's 32-bit finaliser: a bijection on uint32, used to scramble ordinals. */
export function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/** sfc32: small, fast, good-quality 32-bit generator; fully determined by the seed. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    this.a = fmix32(seed ^ 0x9e3779b9);
    this.b = fmix32(seed ^ 0x243f6a88);
    this.c = fmix32(seed ^ 0xb7e15162);
    this.d = 1;
    for (let i = 0; i < 15; i++) this.u32();
  }

  u32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
}

/** Discrete Zipf(s) over ranks 0..n-1 by a precomputed CDF and binary search. */
export class Zipf {
  private readonly cdf: Float64Array;

  constructor(n: number, s: number) {
    this.cdf = new Float64Array(n);
    let sum = 0;
    for (let i = 0; i < n; i++) {
      sum += 1 / (i + 1) ** s;
      this.cdf[i] = sum;
    }
    for (let i = 0; i < n; i++) this.cdf[i] = (this.cdf[i] as number) / sum;
  }

  sample(u: number): number {
    const cdf = this.cdf;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((cdf[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** Deterministic UUID-shaped identifier for an ordinal (distinct ordinals give distinct ids). */
export function ordinalUuid(ordinal: number, seed: number): string {
  const w0 = fmix32(ordinal ^ fmix32(seed));
  const w1 = fmix32(w0 ^ 0x68e31da4);
  const w2 = fmix32(w1 ^ 0xb5297a4d);
  const w3 = fmix32(w2 ^ 0x1b56c4e9);
  const hex = [w0, w1, w2, w3].map((x) => x.toString(16).padStart(8, '0')).join('');
  const variant = '89ab'[w3 & 3];
  // Version 4 and RFC 4122 variant nibbles, so every consumer (PostgreSQL uuid, DuckDB UUID) accepts it.
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
