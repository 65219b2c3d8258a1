// Worker-thread entry of the segment merger (merge-worker-client.ts): decodes, merges and encodes a day's
// segments (codec.ts mergeSegments), the CPU work of compaction, so that it runs in neither the thread that
// serves requests nor the ingest writer's. It touches no database: blobs in, blobs out.
import { parentPort } from 'node:worker_threads';
import { mergeSegments } from './codec.ts';
import type { MergeReply, MergeRequest } from './merge-worker-client.ts';

const port = parentPort;
if (!port) throw new Error('merge-worker.ts must run in a worker thread');
port.on('message', (m: MergeRequest) => {
  let reply: MergeReply;
  try {
    reply = { id: m.id, merged: mergeSegments(m.segments) };
  } catch (err) {
    reply = { id: m.id, error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(reply);
});
