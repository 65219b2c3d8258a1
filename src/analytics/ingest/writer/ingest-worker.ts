// Worker-thread entry of the SQLite ingest writer (started by createWorkerWriter in ingest-worker-client.ts,
// through ingest-worker-boot.cjs, which registers the TypeScript loader in this thread first).
//
// It opens its own connection to the same SQLite file and runs the group writer there: the inserts, the
// WAL sync (wal-sync.ts, in the thread pool) and WAL checkpoints happen off the main thread, which keeps
// parsing and validating requests. A batch is acknowledged only after its transaction committed and the WAL
// holding it was synced.
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../../db/index.ts';
import { fromWire, type Learned } from '../write-batch.ts';
import { groupWriterOptions, type WorkerReply, type WorkerRequest, type WorkerSetup } from './ingest-worker-client.ts';
import { createGroupWriter } from './ingest-writer.ts';
import { deferWalSync } from './wal-sync.ts';

/** WAL pages (4 KiB) after which the writer's own commit checkpoints (the checkpointer normally keeps up). */
const WRITER_AUTOCHECKPOINT_PAGES = 16_384;

const setup = workerData as WorkerSetup;
const port = parentPort;
if (!port) throw new Error('ingest-worker.ts must run in a worker thread');
// The checkpointer thread (ingest-worker-client.ts) copies WAL frames to the database file in the background;
// this connection checkpoints itself only when the WAL grows past 64 MiB (it fell behind), instead of
// after every commit past the default 4 MiB.
const db = openDatabase({
  sqlitePath: setup.sqlitePath,
  walAutocheckpointPages: WRITER_AUTOCHECKPOINT_PAGES,
  ...(setup.sqliteCacheKib !== undefined ? { sqliteCacheKib: setup.sqliteCacheKib } : {}),
  ...(setup.sqliteStatementCache !== undefined ? { sqliteStatementCache: setup.sqliteStatementCache } : {}),
});
/**
 * Replies settled together, in order, sent as one message (a group commit settles many writes at once; see
 * WorkerRequest). `learned` replies precede the replies of the batches they came from. Sent from a microtask,
 * not at the end of the turn: the group writer's next transaction (and its fsync) may run in this turn, and the
 * replies must not wait for it. The writes of a group settle in the same round of microtasks (they are resolved
 * in one loop and their continuations are equally deep), so the flush queued by the first reply runs after the
 * last; were one to come later, it would go in a message of its own. A group's `learned` replies wait for its
 * batches' replies (see reply): one message per group commit, not two.
 */
let replies: WorkerReply[] = [];
let sendQueued = false;
let fallbackQueued = false;
/** The `learned` reply of each project among the replies not yet sent: a group's batches' ids go in one. */
let learnedByProject = new Map<string, Learned>();
function reply(r: WorkerReply): void {
  if (r.t === 'learned') {
    const prev = learnedByProject.get(r.projectId);
    if (prev) {
      // Appended to the project's earlier reply (still unsent, so still ahead of these batches' replies).
      for (const k of ['paths', 'visitors', 'userAgents'] as const) {
        prev[k].keys.push(...r.learned[k].keys);
        prev[k].ids.push(...r.learned[k].ids);
      }
    } else {
      learnedByProject.set(r.projectId, r.learned);
      replies.push(r);
    }
  } else replies.push(r);
  if (r.t === 'learned') {
    // Sent from inside the group's transaction function, microtasks before the replies of its batches: it goes
    // with them (one message per group, not two), or at the end of the turn should none follow.
    if (!fallbackQueued) {
      fallbackQueued = true;
      setImmediate(sendReplies);
    }
  } else if (!sendQueued) {
    sendQueued = true;
    queueMicrotask(sendReplies);
  }
}
function sendReplies(): void {
  sendQueued = false;
  fallbackQueued = false;
  const out = replies;
  replies = [];
  learnedByProject = new Map();
  if (out.length === 0) return;
  // The writer's counts as of these replies go with them (for /metrics): whoever was answered sees its own group counted.
  port?.postMessage({ t: 'replies', replies: out, stats: writer.stats() } satisfies WorkerReply);
}

// Commits write their WAL frames without syncing them; the WAL is synced in libuv's thread pool while this
// thread writes the next group, and a group's writes are acknowledged only after that (wal-sync.ts).
const durable = db.sqliteHandle ? deferWalSync(db.sqliteHandle, setup.sqlitePath) : undefined;

const writer = createGroupWriter(db, {
  ...groupWriterOptions(setup),
  visitorKeyFileDir: path.dirname(setup.sqlitePath),
  ...(durable ? { durable } : {}),
  // Ids the main thread's dictionary mirror lacked, sent after their commit (before the batches' replies).
  onLearned: (projectId, learned) => {
    if (learned.paths.keys.length + learned.visitors.keys.length + learned.userAgents.keys.length > 0) reply({ t: 'learned', projectId, learned });
  },
});

const inFlight = new Set<Promise<void>>();

port.on('message', (msg: WorkerRequest) => {
  if (msg.t === 'writes') {
    for (const w of msg.writes) {
      const p: Promise<void> = writer.write(w.projectId, w.source, fromWire(w.batch)).then(
        (inserted) => reply({ t: 'done', id: w.id, inserted }),
        (err: unknown) =>
          reply({
            t: 'fail',
            id: w.id,
            message: err instanceof Error ? err.message : String(err),
            code: (err as { code?: unknown })?.code === undefined ? null : String((err as { code?: unknown }).code),
          }),
      );
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
  } else if (msg.t === 'task') {
    const t = msg.task;
    // Blobs arrive as Uint8Arrays (structured clone); bound as Buffers, over the same memory.
    const buf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    const run: Promise<unknown> =
      t.kind === 'swap' ? writer.swapCompaction(t.plan, t.merged.map(buf)) : writer.persistSummaries(t.rows.map((r) => ({ ...r, data: buf(r.data) })));
    const p: Promise<void> = run.then(
      (result) => reply({ t: 'taskDone', id: msg.id, result }),
      (err: unknown) =>
        reply({
          t: 'fail',
          id: msg.id,
          message: err instanceof Error ? err.message : String(err),
          code: (err as { code?: unknown })?.code === undefined ? null : String((err as { code?: unknown }).code),
        }),
    );
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  } else if (msg.t === 'clear') {
    writer.clearCaches();
  } else if (msg.t === 'close') {
    // Writes received before this message finish first (their replies precede 'closed').
    void Promise.allSettled([...inFlight])
      .then(() => writer.close())
      .then(() => durable?.close())
      .then(() => db.close())
      .finally(() => {
        sendReplies();
        port.postMessage({ t: 'closed' } satisfies WorkerReply);
      });
  }
});
port.postMessage({ t: 'ready' } satisfies WorkerReply);
