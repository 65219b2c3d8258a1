// Writes benchmark results: the full result to bench/results/<name>-latest.json (overwritten by the next run) and
// one summary line per run to bench/results/history.jsonl (see history.ts).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RESULTS_DIR } from './dataset.ts';
import { historyLine } from './history.ts';

export const HISTORY_FILE = 'history.jsonl';

export function environment(): Record<string, unknown> {
  let commit: string | null = null;
  let srcDirty: boolean | null = null;
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: RESULTS_DIR, encoding: 'utf8' }).trim();
    // The service runs the working tree: record whether src/ differed from the commit.
    srcDirty = execFileSync('git', ['status', '--porcelain', '--', '../../src'], { cwd: RESULTS_DIR, encoding: 'utf8' }).trim() !== '';
  } catch {
    commit = null;
  }
  return {
    date: new Date().toISOString(),
    commit,
    srcDirty,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? null,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

/**
 * Overwrites `<name>-latest.json` with the run's full result and appends the run's summary to history.jsonl.
 * `name` must be one history.ts knows how to summarise; that is checked before anything is written.
 */
export function writeResults(name: string, result: Record<string, unknown>, dir: string = RESULTS_DIR): { latest: string; history: string } {
  const line = `${JSON.stringify(historyLine(name, result))}\n`;
  fs.mkdirSync(dir, { recursive: true });
  const latest = path.join(dir, `${name}-latest.json`);
  const history = path.join(dir, HISTORY_FILE);
  fs.writeFileSync(latest, `${JSON.stringify(result, null, 2)}\n`);
  fs.appendFileSync(history, line);
  return { latest, history };
}

/** Peak resident set size (VmHWM) of a process in MB, from /proc; null where /proc is unavailable. */
export function peakRssMb(pid: number = process.pid): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

const CLOCK_TICKS_PER_S = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU time (user + system) a process has used so far, in ms (from /proc/<pid>/stat), or null. */
export function cpuMs(pid: number): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at field 3; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S) * 1000;
  } catch {
    return null;
  }
}

/**
 * CPU (user + system, ms) used so far by each thread of process `pid`, summed by thread name (`/proc/<pid>/task/*`):
 * `main` for the process's first thread, else the kernel's name of the thread (Node's worker threads are all
 * `WorkerThread`, V8's helpers (parallel and concurrent garbage collection, compilation) `V8Worker`, libuv's pool
 * `libuv-worker`). A thread that ends between two readings is missing from the difference. {} when the process is gone.
 */
export function cpuMsByThread(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = tid === String(pid) ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out[name] = (out[name] ?? 0) + ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S) * 1000;
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/**
 * CPU (user + system, ms) used so far by every process named `name` on this machine (e.g. the PostgreSQL
 * server's backends and helpers); processes that exit between two readings are lost from the difference.
 */
export function cpuMsOfProcesses(name: string): number {
  let total = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (comm !== name) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += ((Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S) * 1000;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** Current resident set size (VmRSS) of a process in MB. */
export function rssMb(pid: number = process.pid): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** An error's message with its cause's (fetch's "fetch failed" says why only in its cause: ECONNRESET, …). */
export function errorText(err: unknown): string {
  const e = err as { message?: string; cause?: { message?: string; code?: string } };
  const cause = e?.cause ? `: ${e.cause.code ?? ''} ${e.cause.message ?? String(e.cause)}`.trimEnd() : '';
  return `${e?.message ?? String(err)}${cause}`;
}
