// The per-thread CPU split of the rounds (bench/lib/rounds.ts, results.ts cpuMsByThread): read from /proc, then
// turned into µs per request and medians over rounds.
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { cpuMsByThread } from '../../bench/lib/results.ts';
import { medianThreadSplit, showThreadSplit, threadSplit } from '../../bench/lib/rounds.ts';

const sumOthers = (t: Record<string, number>) =>
  Object.entries(t)
    .filter(([name]) => name !== 'main')
    .reduce((s, [, ms]) => s + ms, 0);

describe('cpuMsByThread', () => {
  it('splits a process by thread: main, and a worker thread its own CPU', async () => {
    const before = cpuMsByThread(process.pid);
    expect(before.main).toBeGreaterThanOrEqual(0);
    // The worker spins until the kernel has charged its own thread 5 clock ticks (/proc/thread-self), whatever the
    // machine's speed, and stays alive until it is read.
    const w = new Worker(
      `const { parentPort } = require('node:worker_threads');
       const fs = require('node:fs');
       const ticks = () => { const s = fs.readFileSync('/proc/thread-self/stat', 'utf8'); const f = s.slice(s.lastIndexOf(')') + 2).split(' '); return Number(f[11]) + Number(f[12]); };
       const t0 = ticks();
       while (ticks() - t0 < 5) {}
       parentPort.postMessage('spun');
       parentPort.once('message', () => process.exit(0));`,
      { eval: true },
    );
    await new Promise((resolve) => w.once('message', resolve));
    const during = cpuMsByThread(process.pid);
    w.postMessage('stop');
    await new Promise((resolve) => w.once('exit', resolve));
    // 5 ticks of 10 ms (USER_HZ 100) charged to a thread that did not exist before.
    expect(sumOthers(during) - sumOthers(before)).toBeGreaterThanOrEqual(50);
  });

  it('is empty for a process that does not exist', () => {
    expect(cpuMsByThread(2 ** 22 + 1)).toEqual({});
  });
});

describe('threadSplit and medianThreadSplit', () => {
  const perRequest = (us: number) => us / 1000;
  it('gives each thread name present in both readings its CPU per request, leaving out ones that ended or started', () => {
    expect(threadSplit({ main: 100, V8Worker: 10, gone: 5 }, { main: 300, V8Worker: 30, late: 7 }, perRequest)).toEqual({ main: 200, V8Worker: 20 });
    // A name whose sum went down lost a thread between the readings: no figure.
    expect(threadSplit({ main: 100, WorkerThread: 50 }, { main: 120, WorkerThread: 20 }, perRequest)).toEqual({ main: 20 });
  });

  it('takes the median of each name over rounds, busiest first, a round without the name not counted', () => {
    const m = medianThreadSplit([{ main: 200, WorkerThread: 80 }, { main: 220, WorkerThread: 90, V8Worker: 40 }, { main: 180, V8Worker: 50 }, {}]);
    expect(m).toEqual({ main: 200, WorkerThread: 85, V8Worker: 45 });
    expect(Object.keys(m)).toEqual(['main', 'WorkerThread', 'V8Worker']);
    expect(showThreadSplit({ V8Worker: 44.6, main: 190.2, 'libuv-worker': 0.4 })).toBe('main 190, V8Worker 45');
  });
});
