// Small statistics helpers for timings (no I/O).
export function median(xs: number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number;
}

export interface Summary {
  median: number;
  min: number;
  max: number;
  runs: number;
}

export function summarise(xs: number[]): Summary {
  return { median: round(median(xs)), min: round(Math.min(...xs)), max: round(Math.max(...xs)), runs: xs.length };
}

export function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Milliseconds since `t0` (from performance.now()). */
export function since(t0: number): number {
  return performance.now() - t0;
}
