// The SQLite ingest writer in a worker thread (see ingest-worker.ts): the same IngestWriter interface as the
// in-thread group writer, with every write sent to the worker and acknowledged after its commit.
//
// The worker starts on the first write, holds the process open only while writes are outstanding (so a CLI
// command or a test can exit without closing it), and is started again on the next write if it died; the
// writes outstanding when it died are rejected (nothing was acknowledged that was not committed).
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { BACKGROUND_THREAD_LIMITS } from '../../../lib/thread-heaps.ts';
import type { SwapOutcome, SwapPlan } from '../../store/segment-days.ts';
import type { SummaryRow } from '../../store/summary-store.ts';
import { type Learned, toWire, type WireBatch, type WriteBatch } from '../write-batch.ts';
import type { GroupWriterOptions, IngestSource, IngestWriter } from './ingest-writer.ts';
import { addWriterStats, type IngestWriterStats, newWriterStats } from './writer-stats.ts';

export interface WorkerSetup {
  sqlitePath: string;
  cacheEntries: number;
  /** Bound of the writer's per-project state (GroupWriterOptions.projectStateBytes). */
  projectStateBytes?: number;
  /** A project's visitor keys in memory at most (GroupWriterOptions.visitorKeyBytes); the others in a file beside the database. */
  visitorKeyBytes?: number;
  /** The writer's bound of import dedup hashes in memory (GroupWriterOptions.dedupCacheBytes). */
  dedupCacheBytes?: number;
  /** Whether the writer keeps an exact cache of visitor keys (GroupWriterOptions.visitorCache). */
  visitorCache?: boolean;
  /** The writer connection's SQLite page cache (OpenOptions.sqliteCacheKib). */
  sqliteCacheKib?: number;
  /** The writer connection's prepared statements kept (OpenOptions.sqliteStatementCache). */
  sqliteStatementCache?: number;
  /** V8 heap limits of the worker thread (Node's Worker resourceLimits), e.g. for a bounded-memory import. */
  resourceLimits?: { maxYoungGenerationSizeMb?: number; maxOldGenerationSizeMb?: number };
}

/**
 * The group writer's options that a WorkerSetup sets: the worker thread (ingest-worker.ts) and the serving thread's
 * writer (sql-analytics-store.ts createWriter: the fallback, and where there is no worker) both build their writer
 * from this, so an option set once (an import's IMPORT_WRITER) reaches whichever of them writes. Where the visitor
 * key file goes and what only the worker has (its deferred WAL sync, its learned ids) the caller adds.
 */
export function groupWriterOptions(setup: Omit<WorkerSetup, 'sqlitePath'>): GroupWriterOptions {
  return {
    cacheEntries: setup.cacheEntries,
    ...(setup.projectStateBytes !== undefined ? { projectStateBytes: setup.projectStateBytes } : {}),
    ...(setup.visitorKeyBytes !== undefined ? { visitorKeyBytes: setup.visitorKeyBytes } : {}),
    ...(setup.dedupCacheBytes !== undefined ? { dedupCacheBytes: setup.dedupCacheBytes } : {}),
    ...(setup.visitorCache !== undefined ? { visitorCache: setup.visitorCache } : {}),
  };
}

/** A background write the worker runs as a transaction of its writer between groups. */
export type WriterTask = { kind: 'swap'; plan: SwapPlan; merged: Uint8Array[] } | { kind: 'summaries'; rows: SummaryRow[] };

/** One write: a batch to store, acknowledged by its id. */
export interface WorkerWrite {
  id: number;
  projectId: string;
  source: IngestSource;
  /** Small batches in their wire form (write-batch.ts, toWire). */
  batch: WriteBatch | WireBatch;
}

/**
 * `writes`: the writes handed over in one event-loop turn, in order, as one message (see createWorkerWriter);
 * `replies` likewise from the worker. One event per request (page views) would otherwise cost a message each
 * way per request, and a message's fixed cost (wake-up, dispatch) is most of what a one-event batch costs to send.
 */
export type WorkerRequest =
  | { t: 'writes'; writes: WorkerWrite[] }
  /** Background writes (IngestWriter.swapCompaction, persistSummaries), answered by `taskDone` or `fail` with their id. */
  | { t: 'task'; id: number; task: WriterTask }
  | { t: 'clear' }
  | { t: 'close' };

export type WorkerReply =
  | { t: 'ready' }
  | { t: 'learned'; projectId: string; learned: Learned }
  | { t: 'done'; id: number; inserted: number }
  | { t: 'taskDone'; id: number; result: unknown }
  | { t: 'fail'; id: number; message: string; code: string | null }
  /** Replies settled together, with the writer's counts (writer-stats.ts) as of them. */
  | { t: 'replies'; replies: WorkerReply[]; stats: IngestWriterStats }
  | { t: 'closed' };

/** An error of the ingest worker, carrying the original error's code (e.g. SQLITE_BUSY) when it had one. */
export class IngestWorkerError extends Error {
  constructor(
    message: string,
    readonly code: string | null,
  ) {
    super(message);
  }
}

const BOOT_URL = new URL('./ingest-worker-boot.cjs', import.meta.url);

/** Writes waiting to be sent to a busy worker go at once when they add up to this many events (see `outbox`). */
const EAGER_EVENTS = 100;

/** How often the checkpointer copies committed WAL frames into the database file. */
export const CHECKPOINT_INTERVAL_MS = 200;

/**
 * The checkpointer: a small thread with its own connection that runs PASSIVE checkpoints (which neither wait
 * for nor block readers and writers), so the WAL frames the ingest writer commits reach the database file in
 * the background. Without it, every commit that finds the WAL past its threshold does that copy (random
 * writes into the database file plus an fsync) synchronously: the writer's, or a small one on the thread that
 * serves requests. Plain JavaScript (no TypeScript loader needed), the driver passed in by path.
 */
const CHECKPOINTER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 0');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy (another checkpoint is running) or the file went away: try again next time.
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

interface Checkpointer {
  worker: Worker;
  /** Settles when the thread has ended, also when it ended before anyone waited (e.g. it failed to open the file). */
  exited: Promise<void>;
}

function startCheckpointer(file: string): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const w = new Worker(CHECKPOINTER_SOURCE, {
    eval: true,
    workerData: { driver, file, intervalMs: CHECKPOINT_INTERVAL_MS },
    resourceLimits: BACKGROUND_THREAD_LIMITS,
  });
  w.on('error', () => {
    // Checkpoints are an optimisation: without them the writers' automatic checkpoints still run.
  });
  const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
  w.unref();
  return { worker: w, exited };
}

export interface WorkerWriterOptions {
  /**
   * The writer to use instead when the worker cannot start at all (it fails before it is ready): writes
   * handed to it meanwhile — none of which it ran — go there too. Without one they are rejected.
   */
  fallback?: () => IngestWriter;
  /** Told why the worker could not start (for the log). */
  onFallback?: (err: Error) => void;
  /** Told the dictionary ids the worker resolved for strings a batch had no `known` id for (dictionary-mirror.ts). */
  onLearned?: (projectId: string, learned: Learned) => void;
}

interface Pending {
  projectId: string;
  source: IngestSource;
  batch: WriteBatch;
  /** Posted to the worker (its events count in `atWorker` until it settles). */
  sent: boolean;
  resolve(n: number): void;
  reject(e: unknown): void;
}

/** The writer in a worker thread. A factory, long only as a module is: the worker's state (pending writes, readiness, fallback) and the short functions over it. */
export function createWorkerWriter(setup: WorkerSetup, opts: WorkerWriterOptions = {}): IngestWriter {
  let worker: Worker | null = null;
  let checkpointer: Checkpointer | null = null;
  let nextId = 1;
  const pending = new Map<number, Pending>();
  /** Background writes sent to the worker and not yet answered (ids from the same sequence as the writes'). */
  const tasks = new Map<number, { resolve(o: unknown): void; reject(e: unknown): void }>();
  let closing: Promise<void> | null = null;
  let onClosed: (() => void) | null = null;
  /** Once a worker said it is ready: later deaths are failures to report, not a reason to fall back. */
  let everReady = false;
  let fallback: IngestWriter | null = null;
  /** The worker's counts as of its last replies; a worker started again counts from zero, so earlier ones are added. */
  let reported = newWriterStats();
  let before = newWriterStats();

  function failAll(err: unknown): void {
    const all = [...pending.values()];
    pending.clear();
    atWorker = 0;
    for (const p of all) p.reject(err);
    failTasks(err);
  }

  function failTasks(err: unknown): void {
    const all = [...tasks.values()];
    tasks.clear();
    for (const s of all) s.reject(err);
  }

  /** Whether the worker has nothing outstanding (then it does not hold the process open). */
  const idle = () => pending.size === 0 && tasks.size === 0;

  /** The worker could not start: from now on (and for the writes it was handed) the fallback writes. */
  function fallBack(err: Error): boolean {
    if (everReady || !opts.fallback) return false;
    fallback ??= opts.fallback();
    opts.onFallback?.(err);
    const all = [...pending.values()];
    pending.clear();
    atWorker = 0;
    for (const p of all) fallback.write(p.projectId, p.source, p.batch).then(p.resolve, p.reject);
    // Not worth redoing: compaction reads the day again at its next step, the sealer finds the day still stale.
    failTasks(err);
    checkpointer?.worker.postMessage('stop');
    checkpointer = null;
    return true;
  }

  let readyWaiters: (() => void)[] = [];

  /**
   * Writes not yet sent, and the worker they go to. They are in `pending` already, so a worker that dies or
   * never starts meanwhile fails or falls back on them like on the rest.
   *
   * When they are sent (flow control): at the end of the turn that wrote them (setImmediate runs after the poll
   * phase that read this turn's requests), as one message, when the worker is idle (none of its writes
   * unsettled) or the outbox holds EAGER_EVENTS or more (large batches: the worker queues them for its next
   * group at once, as before). Small writes to a busy worker wait for its next replies (after its commit) and go
   * as soon as they arrive (see settled), all that gathered meanwhile in one message: the worker could not have
   * started them sooner (its transaction was running). With one event per request a turn holds a few writes, and a message per turn cost
   * both threads a cross-thread wake-up per few requests and made groups smaller (`npm run bench:ingest --
   * --page-views`, bench/README.md); now a group commit costs one message each way. Invariant: whenever the
   * outbox holds writes, either a flush is scheduled or the worker holds unsettled writes, whose replies
   * schedule one (or whose failure rejects everything pending).
   */
  let outbox: WorkerWrite[] = [];
  let outboxEvents = 0;
  let outboxWorker: Worker | null = null;
  let flushScheduled = false;
  /** Events posted to the worker and not yet settled. */
  let atWorker = 0;
  function flush(): void {
    flushScheduled = false;
    const writes = outbox;
    const w = outboxWorker;
    outbox = [];
    outboxEvents = 0;
    outboxWorker = null;
    // Only writes still pending go (a failed or fallen-back worker settled the others already).
    const live = writes.filter((x) => pending.has(x.id));
    if (!w || live.length === 0 || worker !== w) return;
    for (const x of live) {
      (pending.get(x.id) as Pending).sent = true;
      atWorker += x.batch.n;
    }
    w.postMessage({ t: 'writes', writes: live } satisfies WorkerRequest);
  }
  /**
   * A write settled by the worker (it committed, or failed): what waited in the outbox goes now, at once, not at
   * the end of the turn. The settled writes' requests are answered after this (their promises resolve into
   * microtasks: Fastify's serialisation and the socket writes of a whole group), and the worker, idle since its
   * commit, starts the next group meanwhile instead of after them.
   */
  function settled(p: Pending): void {
    if (p.sent) atWorker -= p.batch.n;
    if (outbox.length > 0) flush();
  }

  function start(): Worker {
    checkpointer ??= startCheckpointer(setup.sqlitePath);
    const w = new Worker(BOOT_URL, {
      workerData: setup satisfies WorkerSetup,
      ...(setup.resourceLimits ? { resourceLimits: setup.resourceLimits } : {}),
    });
    const onReply = (msg: WorkerReply): void => {
      if (msg.t === 'replies') {
        reported = msg.stats;
        for (const r of msg.replies) onReply(r);
      } else if (msg.t === 'ready') {
        everReady = true;
        const waiters = readyWaiters;
        readyWaiters = [];
        for (const f of waiters) f();
      } else if (msg.t === 'learned') {
        opts.onLearned?.(msg.projectId, msg.learned);
      } else if (msg.t === 'taskDone' || (msg.t === 'fail' && tasks.has(msg.id))) {
        const s = tasks.get(msg.id);
        if (!s) return;
        tasks.delete(msg.id);
        if (idle()) w.unref();
        if (msg.t === 'taskDone') s.resolve(msg.result);
        else s.reject(new IngestWorkerError(msg.message, msg.code));
      } else if (msg.t === 'done' || msg.t === 'fail') {
        const p = pending.get(msg.id);
        if (!p) return;
        pending.delete(msg.id);
        settled(p);
        if (idle()) w.unref();
        if (msg.t === 'done') p.resolve(msg.inserted);
        else p.reject(new IngestWorkerError(msg.message, msg.code));
      } else if (msg.t === 'closed') {
        onClosed?.();
      }
    };
    w.on('message', onReply);
    w.on('error', (err) => {
      if (worker === w) worker = null;
      if (!fallBack(err)) failAll(new IngestWorkerError(`ingest worker failed: ${err.message}`, null));
    });
    w.on('exit', (code) => {
      if (worker === w) worker = null;
      before = addWriterStats(before, reported);
      reported = newWriterStats();
      onClosed?.();
      const waiters = readyWaiters;
      readyWaiters = [];
      for (const f of waiters) f();
      if (!idle() && !fallBack(new Error(`ingest worker exited (code ${code}) before it was ready`))) {
        failAll(new IngestWorkerError(`ingest worker exited (code ${code})`, null));
      }
    });
    w.unref();
    return w;
  }

  /** Sends a background write to the worker (started if need be); settles with its answer. */
  function runTask(task: WriterTask): Promise<unknown> {
    if (closing) return Promise.reject(new IngestWorkerError('ingest writer is closed', null));
    worker ??= start();
    const w = worker;
    const id = nextId++;
    return new Promise<unknown>((resolve, reject) => {
      if (idle()) w.ref();
      tasks.set(id, { resolve, reject });
      w.postMessage({ t: 'task', id, task } satisfies WorkerRequest);
    });
  }

  return {
    get mode() {
      return fallback ? 'thread' : 'worker';
    },

    write(projectId, source, batch) {
      if (batch.n === 0) return Promise.resolve(0);
      if (closing) return Promise.reject(new IngestWorkerError('ingest writer is closed', null));
      if (fallback) return fallback.write(projectId, source, batch);
      worker ??= start();
      const w = worker;
      const id = nextId++;
      return new Promise<number>((resolve, reject) => {
        if (idle()) w.ref();
        pending.set(id, { projectId, source, batch, sent: false, resolve, reject });
        // Copied, not transferred: should the worker fail to start, the fallback writer needs the batch.
        if (outboxWorker !== null && outboxWorker !== w) flush();
        outbox.push({ id, projectId, source, batch: toWire(batch) });
        outboxEvents += batch.n;
        outboxWorker = w;
        if (!flushScheduled && (atWorker === 0 || outboxEvents >= EAGER_EVENTS)) {
          flushScheduled = true;
          setImmediate(flush);
        }
      });
    },

    swapCompaction(plan, merged) {
      if (fallback) return fallback.swapCompaction(plan, merged);
      return runTask({ kind: 'swap', plan, merged }) as Promise<SwapOutcome>;
    },

    persistSummaries(rows) {
      if (fallback) return fallback.persistSummaries(rows);
      return runTask({ kind: 'summaries', rows }) as Promise<void>;
    },

    clearCaches() {
      fallback?.clearCaches();
      flush();
      worker?.postMessage({ t: 'clear' } satisfies WorkerRequest);
    },

    warmUp() {
      if (closing || worker || fallback) return Promise.resolve();
      const w = start();
      worker = w;
      // Held open until the worker is up (a caller may await this with nothing else keeping the process alive).
      w.ref();
      return new Promise<void>((resolve) =>
        readyWaiters.push(() => {
          if (idle()) w.unref();
          resolve();
        }),
      );
    },

    stats() {
      const own = addWriterStats(before, reported);
      return fallback ? addWriterStats(own, fallback.stats()) : own;
    },

    close() {
      closing ??= (async () => {
        await fallback?.close();
        const c = checkpointer;
        checkpointer = null;
        worker?.ref();
        if (c) {
          c.worker.ref();
          c.worker.postMessage('stop');
          await c.exited;
        }
        const w = worker;
        if (!w) return;
        w.ref();
        // The worker finishes the writes it has, closes its connection and says so; then it is ended.
        flush();
        await new Promise<void>((resolve) => {
          onClosed = resolve;
          w.postMessage({ t: 'close' } satisfies WorkerRequest);
        });
        worker = null;
        await w.terminate();
      })();
      return closing;
    },
  };
}
