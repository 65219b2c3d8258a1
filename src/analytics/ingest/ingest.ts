// Ingest: validate → normalise → classify → identify (prepare.ts, in the caller's thread) → store
// (ingest-writer.ts: group commit, one transaction per group, acknowledged after the commit).
//
// On the embedded database (a SQLite file) the writer runs in a worker thread with its own connection
// (ingest-worker-client.ts), so the thread that parses and validates requests never waits for inserts or
// for the commit's fsync; on PostgreSQL (asynchronous I/O) it runs in this thread. Either way `ingest`
// resolves only after the batch's transaction committed: accepted events are durable when the 202 is sent.
import type { Database } from '../../db/index.ts';
import type { ProjectWithSecret } from '../../projects/service.ts';
import { DictionaryMirror } from './dictionary-mirror.ts';
import { createWorkerWriter } from './ingest-worker-client.ts';
import { createGroupWriter, type IngestSource, type IngestWriter } from './ingest-writer.ts';
import { createEventPreparer } from './prepare.ts';
import { packEvents, type WriteEvent } from './write-batch.ts';

export type { IngestSource } from './ingest-writer.ts';
export { GROUP_MAX_EVENTS } from './ingest-writer.ts';
export { MAX_FUTURE_MS } from './prepare.ts';

export interface IngestOptions {
  source: IngestSource;
  /** Per event (same index): an idempotency key; an event whose key was stored before is skipped. */
  dedupKeys?: readonly (string | null)[];
}

export interface IngestResult {
  /** Events that passed validation (for imports: including those already stored before). */
  accepted: number;
  /** Raw events actually written (accepted minus previously imported duplicates). */
  inserted: number;
  rejected: { index: number; error: string }[];
}

export interface IngestDeps {
  db: Database;
  getProject(id: string): Promise<ProjectWithSecret | undefined>;
  now: () => number;
  /** Dictionary cache bound per project (paths and visitors each). */
  cacheEntries?: number;
  /** Write through a worker thread when the database is a SQLite file (default true). */
  worker?: boolean;
  /** Told when the worker thread cannot start and the writer runs in this thread instead. */
  onWorkerFallback?: (err: Error) => void;
}

export class UnknownProjectError extends Error {}

/** How long a project's settings are reused by ingest (a rotation change applies within this time). */
export const PROJECT_CACHE_MS = 5000;

/**
 * The writer for this database: a worker thread where writes would hold up this thread and the database has
 * a file the worker's own connection can open (unless disabled), else in this thread. With a worker, `mirror`
 * (dictionary-mirror.ts) copies the dictionary ids it commits into this thread.
 */
function createWriter(deps: IngestDeps): { writer: IngestWriter; mirror: DictionaryMirror | null } {
  const cacheEntries = deps.cacheEntries ?? 100_000;
  const inThread = () => createGroupWriter(deps.db, { cacheEntries });
  const file = deps.db.caps.writerThread && deps.worker !== false ? deps.db.file : undefined;
  if (file !== undefined) {
    const mirror = new DictionaryMirror(cacheEntries);
    const writer = createWorkerWriter(
      { sqlitePath: file, cacheEntries },
      {
        fallback: inThread,
        onLearned: (projectId, learned) => mirror.learn(projectId, learned),
        ...(deps.onWorkerFallback ? { onFallback: deps.onWorkerFallback } : {}),
      },
    );
    return { writer, mirror };
  }
  return { writer: inThread(), mirror: null };
}

export function createIngestService(deps: IngestDeps) {
  const { writer, mirror } = createWriter(deps);
  const preparer = createEventPreparer();
  const inFlight = new Set<Promise<IngestResult>>();
  let closing = false;

  /**
   * Projects (visitor secret, rotation setting) are cached for PROJECT_CACHE_MS: besides saving a query
   * per batch, it lets a batch join the write queue without touching the database, which on SQLite (one
   * connection) would wait for the running transaction — and then miss the group commit.
   */
  const projectCache = new Map<string, { project: ProjectWithSecret; at: number }>();
  async function getProject(projectId: string): Promise<ProjectWithSecret | undefined> {
    const now = Date.now();
    const hit = projectCache.get(projectId);
    if (hit && now - hit.at < PROJECT_CACHE_MS) return hit.project;
    const project = await deps.getProject(projectId);
    if (project) {
      if (projectCache.size > 1000) projectCache.clear();
      projectCache.set(projectId, { project, at: now });
    }
    return project;
  }

  const service = {
    /** Where batches are written: a worker thread (SQLite file) or this thread. */
    get writerMode(): 'worker' | 'thread' {
      return writer.mode;
    },

    /**
     * Ingests a batch for a project. Invalid events are rejected one by one; the rest are stored durably
     * before this resolves. Throws UnknownProjectError for a project that does not exist.
     */
    ingest(projectId: string, events: readonly unknown[], opts: IngestOptions): Promise<IngestResult> {
      if (closing) return Promise.reject(new Error('ingest service is closed'));
      const p = ingestBatch(projectId, events, opts);
      inFlight.add(p);
      const done = () => inFlight.delete(p);
      p.then(done, done);
      return p;
    },

    /** Forgets cached dictionary entries (tests; after a restore). */
    clearCaches(): void {
      writer.clearCaches();
      mirror?.clear();
      preparer.clear();
      projectCache.clear();
    },

    /** Starts the writer's worker thread now (API processes), so the first batches do not wait for it. */
    warmUp(): Promise<void> {
      return writer.warmUp();
    },

    /** Waits for the batches being ingested, then stops the writer (its worker thread). */
    async close(): Promise<void> {
      closing = true;
      await Promise.allSettled([...inFlight]);
      await writer.close();
    },
  };

  return service;

  async function ingestBatch(projectId: string, events: readonly unknown[], opts: IngestOptions): Promise<IngestResult> {
    const project = await getProject(projectId);
    if (!project) throw new UnknownProjectError(`Project ${projectId} not found`);
    const now = deps.now();
    const rejected: { index: number; error: string }[] = [];
    const ok: WriteEvent[] = [];
    const pp = { id: projectId, visitorSecret: project.visitorSecret, rotation: project.settings.visitorIdRotation ?? 'none' };
    const gen = preparer.beginBatch(pp);
    const keys = opts.dedupKeys;
    for (let i = 0; i < events.length; i++) {
      const r = preparer.prepare(events[i], pp, gen, now, keys ? (keys[i] ?? null) : null);
      if (typeof r === 'string') rejected.push({ index: i, error: r });
      else ok.push(r);
    }
    if (ok.length === 0) return { accepted: 0, inserted: 0, rejected };
    const batch = packEvents(ok);
    mirror?.fill(projectId, batch);
    const inserted = await writer.write(projectId, opts.source, batch);
    return { accepted: ok.length, inserted, rejected };
  }
}

export type IngestService = ReturnType<typeof createIngestService>;
