// V8 heap sizes of the threads a process starts (node:worker_threads). Node's `resourceLimits` of a worker sizes its
// heap, but V8's --max-semi-space-size, which `inkwell serve` starts with (cli/main.ts) for its serving thread, is one
// setting for the whole process and wins over a worker's `maxYoungGenerationSizeMb`: under `inkwell serve` every
// worker's young generation could grow to 96 MiB (3 × 32), whatever its limits said (heap_size_limit in a worker with
// { maxYoungGenerationSizeMb: 16 }: 4,192 MiB with the setting, 4,120 without it; test/lib/thread-heaps.test.ts).

import v8 from 'node:v8';

/**
 * Heap limits of a background thread of the service (the ingest writer, the segment merger, the window counter, the
 * checkpointer). Their garbage is per task (a batch, a merge, a count), so a small young generation is collected
 * often and cheaply, and the heap each keeps stays small: bench/README.md (Decisions, "young generation capped" and
 * "Background threads' young generations") has the peak RSS before and after.
 */
export const BACKGROUND_THREAD_LIMITS = { maxYoungGenerationSizeMb: 16 } as const;

/**
 * Clears the process-wide --max-semi-space-size once this thread's heap is made, so that threads started after it
 * take the young generation their `resourceLimits` give. Invariant: a thread's heap is sized when it is created,
 * so this thread keeps the size it started with (the setting is read only then); a worker started afterwards
 * without `maxYoungGenerationSizeMb` gets V8's default (up to 192 MiB on Node 24), so every worker the service starts
 * names one.
 */
export function letThreadsSizeTheirHeaps(): void {
  v8.setFlagsFromString('--max-semi-space-size=0');
}
