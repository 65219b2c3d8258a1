// Serializes work on one path (a mirror, a job's worktree): an in-process queue per path plus a lock file for
// other processes sharing the same data directory. A lock file older than `staleMs` (a crashed holder) is
// taken over; a held lock's file is refreshed every third of that.
import fs from 'node:fs/promises';

const chains = new Map<string, Promise<unknown>>();

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError());
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(abortError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortError(): Error {
  const e = new Error('stopped while waiting for the repository lock');
  e.name = 'AbortError';
  return e;
}

async function acquireFile(lockPath: string, staleMs: number, signal?: AbortSignal): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const fh = await fs.open(lockPath, 'wx');
      await fh.writeFile(`${process.pid}\n`);
      await fh.close();
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const st = await fs.stat(lockPath).catch(() => null);
      if (st && Date.now() - st.mtimeMs > staleMs) {
        await fs.rm(lockPath, { force: true });
        continue;
      }
      await sleep(Math.min(25 * 2 ** Math.min(attempt, 5), 500), signal);
    }
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
    const staleMs = opts.staleMs ?? 10 * 60_000;
    await acquireFile(lockPath, staleMs, opts.signal);
    // A long first fetch must not look stale to other processes: refresh the lock's mtime while held.
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
      await fs.rm(lockPath, { force: true });
    }
  } finally {
    release();
    if (chains.get(key) === chained) chains.delete(key);
  }
}
