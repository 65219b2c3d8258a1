// Compaction's CPU work (decode, merge, encode: codec.ts mergeSegments) in a worker thread of its own
// (merge-worker.ts), so that merging a large day holds up neither the requests nor the ingest writer. The
// thread starts on the first merge and holds the process open only while merges are outstanding; one that died
// fails the merges it had, and the next merge starts a new one.
import { Worker } from 'node:worker_threads';
import { BACKGROUND_THREAD_LIMITS } from '../../lib/thread-heaps.ts';

export interface MergeRequest {
  id: number;
  segments: Uint8Array[];
}

export type MergeReply = { id: number; merged: Uint8Array[] } | { id: number; error: string };

export interface SegmentMerger {
  /** mergeSegments of `segments`, computed in the merge thread (the blobs are copied there and back). */
  merge(segments: Uint8Array[]): Promise<Uint8Array[]>;
  /** Ends the thread (after failing any merge still outstanding). */
  close(): Promise<void>;
}

const BOOT_URL = new URL('./merge-worker-boot.cjs', import.meta.url);

export function createSegmentMerger(): SegmentMerger {
  let worker: Worker | null = null;
  let nextId = 1;
  const pending = new Map<number, { resolve(m: Uint8Array[]): void; reject(e: Error): void }>();

  function failAll(err: Error): void {
    const all = [...pending.values()];
    pending.clear();
    for (const p of all) p.reject(err);
  }

  function start(): Worker {
    const w = new Worker(BOOT_URL, { resourceLimits: BACKGROUND_THREAD_LIMITS });
    w.on('message', (r: MergeReply) => {
      const p = pending.get(r.id);
      if (!p) return;
      pending.delete(r.id);
      if (pending.size === 0) w.unref();
      if ('error' in r) p.reject(new Error(`segment merge failed: ${r.error}`));
      // As Buffers (what the drivers bind as blobs), over the copies received: no further copy.
      else p.resolve(r.merged.map((b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength)));
    });
    w.on('error', (err) => {
      if (worker === w) worker = null;
      failAll(new Error(`segment merge thread failed: ${err.message}`));
    });
    w.on('exit', (code) => {
      if (worker === w) worker = null;
      failAll(new Error(`segment merge thread exited (code ${code})`));
    });
    w.unref();
    return w;
  }

  return {
    merge(segments) {
      worker ??= start();
      const w = worker;
      const id = nextId++;
      return new Promise<Uint8Array[]>((resolve, reject) => {
        if (pending.size === 0) w.ref();
        pending.set(id, { resolve, reject });
        w.postMessage({ id, segments } satisfies MergeRequest);
      });
    },
    async close() {
      const w = worker;
      worker = null;
      if (w) await w.terminate();
      failAll(new Error('segment merger is closed'));
    },
  };
}
