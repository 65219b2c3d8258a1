// Worker-thread entry of the window counter (count-threads.ts): counts the paths of a range over day sets whose
// arrays are shared memory (nothing copied in), into a marks array of its own, also shared, which the thread that
// asked ors into its own for the site-wide totals. It touches no database.
import { parentPort } from 'node:worker_threads';
import { countPaths } from './count-paths.ts';
import type { CountReply, CountRequest } from './count-threads.ts';
import { MarkBuffer } from './daysets.ts';

const port = parentPort;
if (!port) throw new Error('count-worker.ts must run in a worker thread');
const marks = new MarkBuffer(true);
port.on('message', (m: CountRequest) => {
  let reply: CountReply;
  try {
    const buf = m.keep ? marks.keep(m.size) : marks.take(m.size);
    const rows = countPaths(m.sets, buf, m.base, m.pathFrom, m.pathTo);
    reply = { id: m.id, rows, marks: buf };
  } catch (err) {
    reply = { id: m.id, error: err instanceof Error ? err.message : String(err) };
  }
  // The rows' arrays are the thread's own (countPaths makes them new): moved, not copied.
  const rows = 'rows' in reply ? [reply.rows.pathIds, reply.rows.human, reply.rows.ai, reply.rows.total] : [];
  port.postMessage(
    reply,
    rows.map((a) => a.buffer as ArrayBuffer),
  );
});
