// Run by thread-heaps.test.ts as `node --max-semi-space-size=32 --import tsx thread-heaps-probe.ts`, as `inkwell
// serve` runs: prints the heap limits (MiB) of this thread and of a worker with BACKGROUND_THREAD_LIMITS and 256 MiB
// of old generation, before and after letThreadsSizeTheirHeaps.
import v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import { BACKGROUND_THREAD_LIMITS, letThreadsSizeTheirHeaps } from '../../src/lib/thread-heaps.ts';

const MIB = 2 ** 20;
const OLD_MB = 256;

function workerLimit(): Promise<number> {
  const source = "require('node:worker_threads').parentPort.postMessage(require('node:v8').getHeapStatistics().heap_size_limit)";
  const w = new Worker(source, { eval: true, resourceLimits: { ...BACKGROUND_THREAD_LIMITS, maxOldGenerationSizeMb: OLD_MB } });
  return new Promise((resolve, reject) => {
    w.once('message', (bytes: number) => resolve(bytes / MIB));
    w.once('error', reject);
  });
}

const main = v8.getHeapStatistics().heap_size_limit / MIB;
const before = await workerLimit();
letThreadsSizeTheirHeaps();
const after = await workerLimit();
const mainAfter = v8.getHeapStatistics().heap_size_limit / MIB;
console.log(JSON.stringify({ oldMb: OLD_MB, main, before, after, mainAfter }));
