// Worker-thread entry of the SQLite ingest writer (started by createWorkerWriter in ingest-worker-client.ts,
// through ingest-worker-boot.cjs, which registers the TypeScript loader in this thread first).
//
// It opens its own connection to the same SQLite file and runs the group writer there: the inserts, the
// commit's fsync (synchronous=FULL) and WAL checkpoints happen in this thread, while the main thread keeps
// parsing and validating requests. A batch is acknowledged only after its transaction committed.
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../db/index.ts';
import type { WorkerReply, WorkerRequest, WorkerSetup } from './ingest-worker-client.ts';
import { createGroupWriter } from './ingest-writer.ts';

/** WAL pages (4 KiB) after which the writer's own commit checkpoints (the checkpointer normally keeps up). */
const WRITER_AUTOCHECKPOINT_PAGES = 16_384;

const setup = workerData as WorkerSetup;
const port = parentPort;
if (!port) throw new Error('ingest-worker.ts must run in a worker thread');
// The checkpointer thread (ingest-worker-client.ts) copies WAL frames to the database file in the background;
// this connection checkpoints itself only when the WAL grows past 64 MiB (it fell behind), instead of
// after every commit past the default 4 MiB.
const db = openDatabase({ sqlitePath: setup.sqlitePath, walAutocheckpointPages: WRITER_AUTOCHECKPOINT_PAGES });
const writer = createGroupWriter(db, {
  cacheEntries: setup.cacheEntries,
  // Ids the main thread's dictionary mirror lacked, sent after their commit (before the batches' replies).
  onLearned: (projectId, learned) => port.postMessage({ t: 'learned', projectId, learned } satisfies WorkerReply),
});

const inFlight = new Set<Promise<void>>();

port.on('message', (msg: WorkerRequest) => {
  if (msg.t === 'write') {
    const p: Promise<void> = writer.write(msg.projectId, msg.source, msg.batch).then(
      (inserted) => port.postMessage({ t: 'done', id: msg.id, inserted } satisfies WorkerReply),
      (err: unknown) =>
        port.postMessage({
          t: 'fail',
          id: msg.id,
          message: err instanceof Error ? err.message : String(err),
          code: (err as { code?: unknown })?.code === undefined ? null : String((err as { code?: unknown }).code),
        } satisfies WorkerReply),
    );
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  } else if (msg.t === 'clear') {
    writer.clearCaches();
  } else if (msg.t === 'close') {
    // Writes received before this message finish first (their replies precede 'closed').
    void Promise.allSettled([...inFlight])
      .then(() => writer.close())
      .then(() => db.close())
      .finally(() => port.postMessage({ t: 'closed' } satisfies WorkerReply));
  }
});
port.postMessage({ t: 'ready' } satisfies WorkerReply);
