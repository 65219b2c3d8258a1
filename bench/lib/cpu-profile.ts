// Where an `inkwell analytics import` spends its CPU, by stage and thread, from V8 CPU profiles (`node
// --cpu-prof`, one file per thread) of a run from the sources (INKWELL_FROM_SOURCE=1), so that every frame names
// its source file. Each sample goes to the stage of the first frame of ours on its stack, leaf first (a Buffer
// or crypto call made by the parser counts as parsing); generic helpers (lru.ts, src/lib) pass it to their
// caller. Used by bench/import.ts --profile.
import fs from 'node:fs';
import path from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ThreadBreakdown {
  thread: 'main' | 'writer' | 'checkpointer' | 'other';
  /** Sampled time not idle, ms. */
  busyMs: number;
  stages: { stage: string; ms: number }[];
}

/** Functions of import.ts that make the dedup key (the rest of the file reads, dispatches and hands on). */
const KEY_FUNCTIONS = new Set(['digestDedupKeyAt', 'lineDedupKeyAt', 'timePrefix', 'nextDigest', 'next', 'get', 'set', 'clear', 'word']);

/** The stage of a frame of ours, or null to pass the sample on to the caller. `viaCrypto`: a crypto call below. */
function stageOf(file: string, fn: string, viaCrypto: boolean): string | null {
  const f = file.slice(file.indexOf('/src/') + 5);
  if (f === 'analytics/lru.ts' || f.startsWith('lib/')) return null;
  if (f.startsWith('cli/') || f === 'context.ts' || f === 'config.ts' || f.endsWith('.cjs')) return 'start-up, runtime, other';
  if (f === 'analytics/import/line-splitter.ts') return 'read + split';
  if (f === 'analytics/ingest/line-key.ts') return 'dedup key (hash, occurrences)';
  if (f === 'analytics/import/logparse.ts') return 'parse';
  if (f === 'analytics/import/import.ts') {
    if (KEY_FUNCTIONS.has(fn) || viaCrypto) return 'dedup key (hash, occurrences)';
    if (fn === 'flush' || fn === 'flushSome' || fn === 'add') return 'hand-off (pack, ids, message)';
    return 'read + split';
  }
  if (/^analytics\/(ingest\/(prepare|event|ingest)\.ts|classify\/(?!facets)|dates\.ts)/.test(f)) return 'prepare + classify';
  if (/^analytics\/(ingest\/(write-batch|dictionary-mirror|ingest-worker-client|ingest-worker)|store\/sql-analytics-store)\.ts/.test(f))
    return 'hand-off (pack, ids, message)';
  if (f.startsWith('db/')) return 'SQL (statements, driver)';
  if (/^analytics\/segments\/(codec|compress|bytes)\.ts/.test(f)) return 'segment encode';
  if (/analytics\/(ingest\/dedup-cache|segments\/dedup)/.test(f)) return 'dedup lookup (writer)';
  if (/^analytics\/(store|export)\/|^analytics\/classify\/facets/.test(f)) return 'derived rows';
  if (f === 'analytics/ingest/writer/ingest-writer.ts' || f === 'analytics/ingest/writer/visitor-index.ts') return 'writer (its JavaScript)';
  return `other: ${f}`;
}

/** The breakdown of one profile file. */
export function breakdown(file: string): ThreadBreakdown {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const urls = p.nodes.map((n) => n.callFrame.url);
  const thread: ThreadBreakdown['thread'] = urls.some((u) => u.endsWith('/import/import.ts'))
    ? 'main'
    : urls.some((u) => u.endsWith('/ingest/writer/ingest-writer.ts'))
      ? 'writer'
      : p.nodes.some((n) => n.callFrame.functionName === 'pragma')
        ? 'checkpointer'
        : 'other';
  const stageCache = new Map<number, string>();
  const stageOfNode = (id: number): string => {
    const hit = stageCache.get(id);
    if (hit !== undefined) return hit;
    const leaf = (byId.get(id) as ProfileNode).callFrame;
    let stage: string | null = null;
    if (leaf.functionName === '(idle)' || leaf.functionName === '(garbage collector)' || leaf.functionName === '(program)') stage = leaf.functionName;
    let viaCrypto = false;
    for (let x: number | undefined = id; stage === null && x !== undefined; x = parent.get(x)) {
      const cf = (byId.get(x) as ProfileNode).callFrame;
      if (cf.url.includes('/src/')) stage = stageOf(cf.url, cf.functionName, viaCrypto);
      else if (thread === 'checkpointer' && cf.functionName === 'pragma') stage = 'checkpoint (pragma)';
      else if (cf.url.includes('better-sqlite3') || cf.url.includes('/kysely/')) stage = 'SQL (statements, driver)';
      else if (cf.url.includes('crypto')) viaCrypto = true;
    }
    stage ??= 'start-up, runtime, other';
    stageCache.set(id, stage);
    return stage;
  };
  const ms = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const s = stageOfNode(p.samples[i] as number);
    ms.set(s, (ms.get(s) ?? 0) + (p.timeDeltas[i] ?? 0) / 1000);
  }
  const stages = [...ms].map(([stage, t]) => ({ stage, ms: Math.round(t) })).sort((a, b) => b.ms - a.ms);
  const busyMs = Math.round([...ms].filter(([s]) => s !== '(idle)').reduce((a, [, t]) => a + t, 0));
  return { thread, busyMs, stages: stages.filter((s) => s.stage !== '(idle)') };
}

/** The breakdowns of every profile in a directory (one per thread), main thread first. */
export function breakdowns(dir: string): ThreadBreakdown[] {
  const order = { main: 0, writer: 1, checkpointer: 2, other: 3 };
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => breakdown(path.join(dir, f)))
    .sort((a, b) => order[a.thread] - order[b.thread]);
}

export function printBreakdowns(all: ThreadBreakdown[], lines: number, log: (m: string) => void): void {
  for (const t of all) {
    log(`${t.thread} thread: ${t.busyMs.toLocaleString('en')} ms busy (${((t.busyMs * 1000) / lines).toFixed(1)} µs/line)`);
    for (const s of t.stages)
      if (s.ms >= t.busyMs / 200) log(`  ${s.stage.padEnd(34)}${String(s.ms).padStart(7)} ms ${((100 * s.ms) / t.busyMs).toFixed(1).padStart(5)}%`);
  }
}
