// Preloaded into a benchmarked service (`node --import`; Node runs it in the worker threads started from files too) when
// bench:scale runs with --memory: every 2 s each thread appends its V8 heap and ArrayBuffers (process.memoryUsage
// is per thread for those), and the main thread the process's resident memory from /proc (anonymous and file-backed),
// to the JSON-lines file BENCH_MEMORY_LOG names. memory.ts reads it back. Plain JavaScript: loaded before any loader.
import fs from 'node:fs';
import { isMainThread, threadId } from 'node:worker_threads';

const file = process.env.BENCH_MEMORY_LOG;
const mb = (b) => Math.round(b / 2 ** 20);

// /proc/self/status, not smaps_rollup: the kernel's counters, where smaps_rollup walks every mapping's pages (40 ms
// at a 548 MB service under load, 0.02 ms for status), blocking the serving thread it samples from every 2 s.
function proc() {
  try {
    const t = fs.readFileSync('/proc/self/status', 'utf8');
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(t)?.[1] ?? 0);
    return { rss: Math.round(kb('VmRSS') / 1024), anon: Math.round(kb('RssAnon') / 1024) };
  } catch {
    return null;
  }
}

if (file) {
  setInterval(() => {
    const m = process.memoryUsage();
    const line = {
      t: Date.now(),
      thread: threadId,
      main: isMainThread,
      heapTotal: mb(m.heapTotal),
      heapUsed: mb(m.heapUsed),
      arrayBuffers: mb(m.arrayBuffers),
    };
    if (isMainThread) line.proc = proc();
    fs.appendFileSync(file, `${JSON.stringify(line)}\n`);
  }, 2000).unref();
}
