// Regex search over files, in a worker thread with a time limit: a pathological pattern from the
// model (catastrophic backtracking) cannot block the process; it ends as a readable tool error.
import { Worker } from 'node:worker_threads';
import { BACKGROUND_THREAD_LIMITS } from '../lib/thread-heaps.ts';
import { OPEN_NO_FOLLOW_SYNC_SOURCE } from './confined-fs.ts';

export interface SearchRequest {
  /** The root as `ConfinedTree.withRootRef` gives it (or a plain directory path). */
  root: string;
  files: string[];
  query: string;
  maxMatches: number;
  maxFileBytes: number;
  /** Lines longer than this are searched only up to it. */
  maxLineChars: number;
}

export interface SearchMatch {
  file: string;
  line: number;
  text: string;
}

export type SearchOutcome = { ok: true; matches: SearchMatch[]; capped: boolean } | { ok: false; error: string };

// Plain JavaScript (workers with eval: true do not go through the TypeScript loader). Files are opened
// without following links in any component (links are skipped, as list_files does not enter them).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
${OPEN_NO_FOLLOW_SYNC_SOURCE}
const { root, files, query, maxMatches, maxFileBytes, maxLineChars } = workerData;
let re;
try { re = new RegExp(query); } catch (e) { parentPort.postMessage({ ok: false, error: 'query is not a valid regular expression: ' + e.message }); return; }
const matches = [];
let capped = false;
outer: for (const f of files) {
  let buf;
  let fd = null;
  try {
    fd = openNoFollowSync(fs, root, f);
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > maxFileBytes) continue;
    buf = fs.readFileSync(fd);
  } catch { continue; } finally { if (fd !== null) fs.closeSync(fd); }
  if (buf.subarray(0, 8000).includes(0)) continue;
  const lines = buf.toString('utf8').split('\\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].length > maxLineChars ? lines[i].slice(0, maxLineChars) : lines[i];
    if (re.test(line)) {
      if (matches.length >= maxMatches) { capped = true; break outer; }
      matches.push({ file: f, line: i + 1, text: line });
    }
  }
}
parentPort.postMessage({ ok: true, matches, capped });
`;

export function searchFiles(req: SearchRequest, timeoutMs: number, signal?: AbortSignal): Promise<SearchOutcome> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(`(() => {${WORKER_SOURCE}})()`, {
      eval: true,
      workerData: req,
      resourceLimits: { ...BACKGROUND_THREAD_LIMITS, maxOldGenerationSizeMb: 256 },
    });
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      void worker.terminate();
      fn();
    };
    const timer = setTimeout(
      () =>
        finish(() =>
          resolve({ ok: false, error: `the search took longer than ${Math.round(timeoutMs / 1000)} s; use a simpler regular expression or a narrower path` }),
        ),
      timeoutMs,
    );
    const onAbort = () => finish(() => reject(signal?.reason));
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (m: SearchOutcome) => finish(() => resolve(m)));
    worker.once('error', (err) => finish(() => resolve({ ok: false, error: `search failed: ${err.message}` })));
    worker.once('exit', () => finish(() => resolve({ ok: false, error: 'search stopped unexpectedly' })));
  });
}
