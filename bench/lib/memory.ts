// Where a benchmarked service's memory is (bench:scale --memory; memory-log.mjs writes the samples): at the sample
// of the highest resident memory, each thread's V8 heap and ArrayBuffers, and what is left of the anonymous memory
// (native: SQLite's page caches and statements, allocator arenas, thread stacks, V8's own tables).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

export const MEMORY_LOG_PRELOAD = fileURLToPath(new URL('./memory-log.mjs', import.meta.url));

interface Sample {
  t: number;
  thread: number;
  main: boolean;
  heapTotal: number;
  heapUsed: number;
  arrayBuffers: number;
  proc?: { rss: number; anon: number } | null;
}

export interface MemoryAtPeak {
  rssMb: number;
  /** Resident but file-backed (the node binary's code and the like). */
  fileMb: number;
  threads: { thread: number; heapTotalMb: number; heapUsedMb: number; arrayBuffersMb: number }[];
  /** Anonymous memory not in any thread's V8 heap or ArrayBuffers. */
  nativeMb: number;
}

/** The breakdown at the highest-RSS sample of a memory-log.mjs file, or null without samples. */
export function memoryAtPeak(file: string): MemoryAtPeak | null {
  if (!fs.existsSync(file)) return null;
  const samples = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Sample);
  let peak: Sample | undefined;
  for (const s of samples) if (s.proc && (!peak?.proc || s.proc.rss > peak.proc.rss)) peak = s;
  if (!peak?.proc) return null;
  // Each thread's latest sample at or before the peak (threads sample on their own timers).
  const latest = new Map<number, Sample>();
  for (const s of samples) if (s.t <= peak.t + 1000) latest.set(s.thread, s);
  const threads = [...latest.values()]
    .sort((a, b) => a.thread - b.thread)
    .map((s) => ({ thread: s.thread, heapTotalMb: s.heapTotal, heapUsedMb: s.heapUsed, arrayBuffersMb: s.arrayBuffers }));
  const inV8 = threads.reduce((n, x) => n + x.heapTotalMb + x.arrayBuffersMb, 0);
  return { rssMb: peak.proc.rss, fileMb: peak.proc.rss - peak.proc.anon, threads, nativeMb: peak.proc.anon - inV8 };
}

export function describeMemory(m: MemoryAtPeak): string {
  const threads = m.threads.map((x) => `thread ${x.thread} heap ${x.heapTotalMb} (${x.heapUsedMb} used) + buffers ${x.arrayBuffersMb}`).join(', ');
  return `RSS ${m.rssMb} MB at its highest sample: ${threads}; native ${m.nativeMb}; file-backed ${m.fileMb}`;
}
