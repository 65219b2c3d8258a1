// Serializes work on one path (a mirror, a job's worktree): an in-process queue per path plus a lock file for
// other processes sharing the same data directory.
//
// A lock file names its holder (pid, host, boot, pid namespace, process start time). A holder on this machine
// is checked for liveness directly, so the lock of a killed process (kill -9, OOM, a reboot) is taken over at
// once; a holder on another host is presumed dead when its heartbeat (the file's mtime, refreshed every third
// of `staleMs`) stops for `staleMs`. Taking a lock over happens under a short-lived takeover file and only if
// the lock still holds what was judged dead, so two waiters never remove each other's fresh lock.
import crypto from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import { sleep } from '../lib/wait.ts';

const chains = new Map<string, Promise<unknown>>();

/** How long a holder on another host may go without a heartbeat before its lock is taken over. */
export const DEFAULT_STALE_MS = 20_000;
/** A takeover file older than this was left by a crashed taker. */
const TAKEOVER_STALE_MS = 10_000;

export interface LockHolder {
  pid: number;
  host: string;
  /** The kernel's boot id: a pid from before a reboot names no process. */
  boot: string;
  /** The pid namespace: pids of another container mean nothing here. */
  pidns: string;
  /** Start time of the process (clock ticks since boot): a reused pid is another process. */
  start: string;
  token: string;
}

function readOr(file: string, fallback: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return fallback;
  }
}

/** Field 22 (starttime) of /proc/<pid>/stat, or '' where /proc is missing. */
export function processStart(pid: number | 'self'): string {
  const stat = readOr(`/proc/${pid}/stat`, '');
  // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? '';
}

function pidNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return '';
  }
}

let self: Omit<LockHolder, 'token'> | undefined;

function me(): Omit<LockHolder, 'token'> {
  self ??= {
    pid: process.pid,
    host: os.hostname(),
    boot: readOr('/proc/sys/kernel/random/boot_id', ''),
    pidns: pidNamespace(),
    start: processStart('self'),
  };
  return self;
}

/** A lock file's holder, or null for a file in another format (an older Inkwell: judged by its age only). */
export function parseHolder(text: string): LockHolder | null {
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    if (typeof h.pid !== 'number' || typeof h.host !== 'string' || typeof h.token !== 'string') return null;
    return { pid: h.pid, host: h.host, boot: String(h.boot ?? ''), pidns: String(h.pidns ?? ''), start: String(h.start ?? ''), token: h.token };
  } catch {
    return null;
  }
}

/**
 * Whether a holder is certainly dead, judged on this machine: 'unknown' when it is not on this machine (same
 * host, boot and pid namespace), so only its heartbeat can tell.
 */
export function holderState(h: LockHolder): 'alive' | 'dead' | 'unknown' {
  const here = me();
  if (h.host !== here.host || !here.boot || h.pidns !== here.pidns) return 'unknown';
  if (h.boot !== here.boot) return 'dead';
  try {
    process.kill(h.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return 'dead';
  }
  const start = processStart(h.pid);
  if (h.start && start && start !== h.start) return 'dead';
  return 'alive';
}

/** Waits between attempts; a stop ends the wait with this module's AbortError. */
async function pause(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await sleep(ms, signal);
  } catch (err) {
    throw signal?.aborted ? abortError() : err;
  }
}

function abortError(): Error {
  const e = new Error('stopped while waiting for the repository lock');
  e.name = 'AbortError';
  return e;
}

const isCode = (err: unknown, code: string) => (err as NodeJS.ErrnoException)?.code === code;

/** Removes the lock file if it still holds `seen` (the content judged dead), under the takeover file. */
async function takeOver(lockPath: string, seen: string): Promise<void> {
  const takeoverPath = `${lockPath}.takeover`;
  let fh: fs.FileHandle;
  try {
    fh = await fs.open(takeoverPath, 'wx');
  } catch (err) {
    if (!isCode(err, 'EEXIST')) throw err;
    const st = await fs.stat(takeoverPath).catch(() => null);
    if (st && Date.now() - st.mtimeMs > TAKEOVER_STALE_MS) await fs.rm(takeoverPath, { force: true });
    return; // someone else is taking over: look again
  }
  try {
    const now = await fs.readFile(lockPath, 'utf8').catch(() => null);
    if (now === seen) await fs.rm(lockPath, { force: true });
  } finally {
    await fh.close();
    await fs.rm(takeoverPath, { force: true });
  }
}

async function acquireFile(lockPath: string, token: string, staleMs: number, signal?: AbortSignal): Promise<void> {
  const content = JSON.stringify({ ...me(), token } satisfies LockHolder);
  for (let attempt = 0; ; attempt++) {
    try {
      const fh = await fs.open(lockPath, 'wx');
      try {
        await fh.writeFile(content);
      } catch (err) {
        // A lock file without its holder (the disk is full, say) would hold everyone off until it went
        // stale: it is not ours to keep.
        await fh.close().catch(() => undefined);
        await fs.rm(lockPath, { force: true });
        throw err;
      }
      await fh.close();
      return;
    } catch (err) {
      if (!isCode(err, 'EEXIST')) throw err;
    }
    const [seen, st] = await Promise.all([fs.readFile(lockPath, 'utf8').catch(() => null), fs.stat(lockPath).catch(() => null)]);
    if (seen !== null && st) {
      const holder = parseHolder(seen);
      // A holder still writing its file (empty for a moment) is judged by the heartbeat only.
      const state = holder ? holderState(holder) : 'unknown';
      if (state === 'dead' || (state === 'unknown' && Date.now() - st.mtimeMs > staleMs)) {
        await takeOver(lockPath, seen);
        continue;
      }
    }
    await pause(Math.min(25 * 2 ** Math.min(attempt, 5), 500), signal);
  }
}

/** Runs `fn` while holding the lock for `key` (a path); the lock file is `${key}.lock`. */
export async function withLock<T>(key: string, fn: () => Promise<T>, opts: { signal?: AbortSignal; staleMs?: number } = {}): Promise<T> {
  const prev = chains.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((r) => {
    release = r;
  });
  const chained = prev.then(() => mine);
  chains.set(key, chained);
  try {
    await prev;
    const lockPath = `${key}.lock`;
    const staleMs = opts.staleMs ?? DEFAULT_STALE_MS;
    const token = crypto.randomBytes(8).toString('hex');
    await acquireFile(lockPath, token, staleMs, opts.signal);
    // A long first fetch must not look stale to other hosts: refresh the lock's mtime while held.
    const heartbeat = setInterval(
      () => {
        const t = new Date();
        fs.utimes(lockPath, t, t).catch(() => undefined);
      },
      Math.max(1000, Math.floor(staleMs / 3)),
    );
    heartbeat.unref();
    try {
      return await fn();
    } finally {
      clearInterval(heartbeat);
      // Only our own lock: if it was (wrongly) taken over meanwhile, the new holder's file stays.
      const now = await fs.readFile(lockPath, 'utf8').catch(() => null);
      if (now !== null && parseHolder(now)?.token === token) await fs.rm(lockPath, { force: true });
    }
  } finally {
    release();
    if (chains.get(key) === chained) chains.delete(key);
  }
}
