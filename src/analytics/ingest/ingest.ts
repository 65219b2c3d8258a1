// Ingest: validate → normalise → classify → identify (prepare.ts, in the caller's thread) → the analytics store's
// `append` (src/analytics/store/analytics-store.ts), which resolves only once the batch is durable: accepted
// events are durable when the 202 is sent. This part is the same for every store; how and where a batch is
// written (the SQL store's group-committing writer, in a worker thread on a SQLite file) is the store's.
import type { ProjectWithSecret } from '../../projects/service.ts';
import type { AnalyticsStore } from '../store/analytics-store.ts';
import type { RawEvent } from './event.ts';
import { createEventPreparer, type PrepareProject } from './prepare.ts';
import { BatchBuilder, packEvents, type WriteBatch, type WriteEvent } from './write-batch.ts';
import type { IngestSource } from './writer/ingest-writer.ts';

export { MAX_FUTURE_MS } from './prepare.ts';
export type { IngestSource } from './writer/ingest-writer.ts';
export { GROUP_MAX_EVENTS } from './writer/ingest-writer.ts';

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
  /** Where prepared batches go. */
  store: Pick<AnalyticsStore, 'append' | 'warmUp' | 'clearCaches'>;
  getProject(id: string): Promise<ProjectWithSecret | undefined>;
  now: () => number;
}

export class UnknownProjectError extends Error {}

/**
 * An import's events prepared one by one into the batch being built (write-batch.ts BatchBuilder): `add`
 * validates and derives an event at once (the checks and results of `ingest`, prepare.ts) and returns its error
 * when it is refused, else null; `take` hands the built batch over and starts the next; `append` stores one
 * durably (its promise resolves with the events inserted only after the commit, as `ingest`'s does). `refresh`
 * re-reads the project's settings and the clock, which a batch of `ingest` reads once: call it between batches.
 */
export interface ImportStream {
  readonly size: number;
  /** The project's settings and the clock as of the last `refresh`: what `add` prepares with (import threads prepare with them too). */
  readonly project: PrepareProject;
  readonly now: number;
  /**
   * `ms`: the time of an event of the byte parser (prepare.ts prepareParsed), NaN for any other. Its dedup key is
   * the line key (LineKeys) of `digest` (the line's sha256: 32 bytes, or 32 latin1 characters), `occurrence` and
   * `keyMs` (the line's time, NaN: none).
   */
  add(ev: RawEvent, ms: number, digest: Uint8Array | string, occurrence: number, keyMs: number): string | null;
  take(): WriteBatch | null;
  append(batch: WriteBatch): Promise<number>;
  refresh(): Promise<void>;
}

/** How long a project's settings are reused by ingest (a rotation change applies within this time). */
export const PROJECT_CACHE_MS = 5000;

export function createIngestService(deps: IngestDeps) {
  const { store } = deps;
  const preparer = createEventPreparer();
  const inFlight = new Set<Promise<IngestResult>>();
  let closing = false;

  /**
   * Projects (visitor secret, rotation setting) are cached for PROJECT_CACHE_MS: besides saving a query
   * per batch, it lets a batch join the write queue without touching the database, which on SQLite (one
   * connection) would wait for the running transaction — and then miss the group commit.
   */
  const projectCache = new Map<string, { project: PrepareProject; at: number }>();
  /** The project as the preparer takes it (made once per cache entry, not per batch), or undefined. */
  function getProject(projectId: string): PrepareProject | Promise<PrepareProject | undefined> {
    const now = Date.now();
    const hit = projectCache.get(projectId);
    // A hit answers synchronously: one event per request (page views) is most batches, and an await per
    // batch is a turn of the microtask queue per request.
    if (hit && now - hit.at < PROJECT_CACHE_MS) return hit.project;
    return deps.getProject(projectId).then((p) => {
      if (!p) return undefined;
      const project: PrepareProject = { id: projectId, visitorSecret: p.visitorSecret, rotation: p.settings.visitorIdRotation ?? 'none' };
      if (projectCache.size > 1000) projectCache.clear();
      projectCache.set(projectId, { project, at: now });
      return project;
    });
  }

  const service = {
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

    /**
     * A log import's events, prepared one at a time as they are read (see ImportStream) rather than a batch of
     * parsed events at once. Throws UnknownProjectError for a project that does not exist.
     */
    async importStream(projectId: string): Promise<ImportStream> {
      let pp = await getProject(projectId);
      if (!pp) throw new UnknownProjectError(`Project ${projectId} not found`);
      let gen = preparer.beginBatch(pp);
      let now = deps.now();
      const builder = new BatchBuilder(8192);
      return {
        get size() {
          return builder.n;
        },
        get project() {
          return pp as PrepareProject;
        },
        get now() {
          return now;
        },
        add(ev, ms, digest, occurrence, keyMs) {
          if (!Number.isNaN(ms)) return preparer.prepareParsedInto(builder, ev, ms, pp as PrepareProject, gen, now, digest, occurrence, keyMs);
          const r = preparer.prepare(ev, pp as PrepareProject, gen, now, null);
          if (typeof r === 'string') return r;
          builder.add(r, digest, occurrence, keyMs);
          return null;
        },
        take() {
          return builder.take();
        },
        append(batch) {
          if (closing) return Promise.reject(new Error('ingest service is closed'));
          const p = store.append(projectId, 'import', batch).then((inserted) => ({ accepted: batch.n, inserted, rejected: [] }));
          inFlight.add(p);
          const done = () => inFlight.delete(p);
          p.then(done, done);
          return p.then((r) => r.inserted);
        },
        async refresh() {
          // As for a batch of ingest: the project's settings (cached for PROJECT_CACHE_MS) and the clock.
          const next = await getProject(projectId);
          if (!next) throw new UnknownProjectError(`Project ${projectId} not found`);
          pp = next;
          gen = preparer.beginBatch(next);
          now = deps.now();
        },
      };
    },

    /** Forgets cached dictionary entries (tests; after a restore). */
    clearCaches(): void {
      store.clearCaches();
      preparer.clear();
      projectCache.clear();
    },

    /** Gets the store ready to append now (API processes), so the first batches do not wait for it. */
    warmUp(): Promise<void> {
      return store.warmUp();
    },

    /** Refuses new batches and waits for those being ingested (the store is closed by its owner). */
    async close(): Promise<void> {
      closing = true;
      await Promise.allSettled([...inFlight]);
    },
  };

  return service;

  function ingestBatch(projectId: string, events: readonly unknown[], opts: IngestOptions): Promise<IngestResult> {
    const project = getProject(projectId);
    return project instanceof Promise ? project.then((p) => ingestPrepared(projectId, p, events, opts)) : ingestPrepared(projectId, project, events, opts);
  }

  async function ingestPrepared(projectId: string, pp: PrepareProject | undefined, events: readonly unknown[], opts: IngestOptions): Promise<IngestResult> {
    if (!pp) throw new UnknownProjectError(`Project ${projectId} not found`);
    const now = deps.now();
    const rejected: { index: number; error: string }[] = [];
    const ok: WriteEvent[] = [];
    const gen = preparer.beginBatch(pp);
    const keys = opts.dedupKeys;
    for (let i = 0; i < events.length; i++) {
      const r = preparer.prepare(events[i], pp, gen, now, keys ? (keys[i] ?? null) : null);
      if (typeof r === 'string') rejected.push({ index: i, error: r });
      else ok.push(r);
    }
    if (ok.length === 0) return { accepted: 0, inserted: 0, rejected };
    const inserted = await store.append(projectId, opts.source, packEvents(ok));
    return { accepted: ok.length, inserted, rejected };
  }
}

export type IngestService = ReturnType<typeof createIngestService>;
