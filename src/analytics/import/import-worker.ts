// Worker-thread entry of an import thread (started by import-parallel.ts through import-worker-boot.cjs): it
// parses, classifies and prepares the pieces of a log it is sent (import-chunk.ts) and sends each back as write
// batches, its typed arrays handed over rather than copied. It holds no state that outlives a piece but the
// preparer's caches; the main thread orders the results and numbers occurrences.
import { parentPort, workerData } from 'node:worker_threads';
import { ChunkImporter, type ChunkJob, type ChunkSetup, transferList } from './import-chunk.ts';

const port = parentPort;
if (!port) throw new Error('import-worker.ts must run in a worker thread');
const importer = new ChunkImporter(workerData as ChunkSetup);
port.on('message', (job: ChunkJob) => {
  let result: ReturnType<ChunkImporter['run']>;
  try {
    result = importer.run(job);
  } catch (err) {
    port.postMessage({ seq: job.seq, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    return;
  }
  port.postMessage(result, transferList(result));
});
