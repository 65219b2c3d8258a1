// Ingest: validate → normalise → classify → identify → store.
//
// Each accepted event becomes one raw row (`analytics_events`) and, when it is a qualifying view, one
// deduplicated (day, path, visitor, class) row (`analytics_daily_visits`). Both, the dictionary entries
// they need and the project's data-version bump are written in ONE transaction, and `ingest` resolves only
// after it committed, so accepted events are durable when the 202 is sent (SQLite runs synchronous=FULL).
//
// Group commit: batches that arrive while a transaction is running wait and are then written together in
// the next transaction (up to GROUP_MAX_EVENTS), so one fsync covers many requests. The CPU work
// (validation, classification, hashing) happens before a batch joins the queue. If a group transaction
// fails, its batches are retried one by one, so one bad batch cannot fail its neighbours.
//
// Dictionaries (path → id, visitor key → ordinal) are cached per project in bounded LRU maps. A miss is
// resolved with insert … on conflict do nothing, then select — safe when several processes ingest at once.
// Cache entries are only added after the transaction commits, so a rolled-back batch never leaves an id
// in the cache that the database does not have.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { type BulkRow, createBulkWriter } from '../db/bulk.ts';
import type { Database } from '../db/index.ts';
import type { DB } from '../db/schema.ts';
import type { ProjectWithSecret } from '../projects/service.ts';
import { RULES_VERSION } from './classify.ts';
import { daysetStore } from './dayset-store.ts';
import { Lru } from './lru.ts';
import { createEventPreparer, type PreparedEvent } from './prepare.ts';
import { chunkRows, analyticsStore as store } from './store.ts';
import { CLS_AI, CLS_HUMAN } from './tables.ts';

export type IngestSource = 'api' | 'collect' | 'import';

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
}

export { MAX_FUTURE_MS } from './prepare.ts';

export class UnknownProjectError extends Error {}

interface ProjectCache {
  paths: Lru<string, number>;
  visitors: Lru<string, number>;
}

/** How long a project's settings are reused by ingest (a rotation change applies within this time). */
export const PROJECT_CACHE_MS = 5000;

/** Events written in one transaction at most (several batches). */
export const GROUP_MAX_EVENTS = 10_000;

type Prepared = PreparedEvent;

interface Job {
  ord: number;
  source: IngestSource;
  events: Prepared[];
  resolve(inserted: number): void;
  reject(err: unknown): void;
}

/** Distinct days of visit rows sorted by day (VISIT_TABLE order: day is column 1). */
function daysOf(rows: readonly BulkRow[]): number[] {
  const days: number[] = [];
  for (const r of rows) if (days[days.length - 1] !== r[1]) days.push(r[1] as number);
  return days;
}

function sha256(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}

export function createIngestService(deps: IngestDeps) {
  const cacheEntries = deps.cacheEntries ?? 100_000;
  const caches = new Lru<number, ProjectCache>(64);
  const projectOrds = new Map<string, number>();
  const bulk = createBulkWriter(deps.db);
  const preparer = createEventPreparer();
  const queue: Job[] = [];
  let draining = false;

  function cacheFor(ord: number): ProjectCache {
    let c = caches.get(ord);
    if (!c) {
      c = { paths: new Lru(cacheEntries), visitors: new Lru(cacheEntries) };
      caches.set(ord, c);
    }
    return c;
  }

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

  /** The project's analytics ordinal, created on first use. */
  async function projectOrd(projectId: string): Promise<number> {
    const known = projectOrds.get(projectId);
    if (known !== undefined) return known;
    let ord = await store.selectProjectOrd(deps.db.kysely, projectId);
    if (ord === undefined) {
      await store.insertProjectOrd(deps.db.kysely, projectId);
      ord = await store.selectProjectOrd(deps.db.kysely, projectId);
    }
    if (ord === undefined) throw new Error('analytics project ordinal missing after insert');
    projectOrds.set(projectId, Number(ord));
    return Number(ord);
  }

  /** Resolves missing dictionary ids inside the transaction; returns the new entries (cached after commit). */
  async function resolvePaths(trx: Kysely<DB>, ord: number, misses: Set<string>): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    if (misses.size === 0) return found;
    const byHash = new Map<string, string>();
    for (const p of misses) byHash.set(sha256(p), p);
    // Sorted so that concurrent transactions (PostgreSQL) take the unique-index locks in one order.
    const hashes = [...byHash.keys()].sort();
    await store.bulkInsertPaths(
      bulk,
      trx,
      hashes.map((h) => [ord, h, byHash.get(h)]),
    );
    for (const chunk of chunkRows(hashes, 1, deps.db.caps.maxParams - 1, 5000)) {
      for (const r of await store.selectPathIds(trx, ord, chunk)) found.set(byHash.get(r.path_hash) as string, Number(r.id));
    }
    return found;
  }

  async function resolveVisitors(trx: Kysely<DB>, ord: number, misses: Set<string>): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    if (misses.size === 0) return found;
    const keys = [...misses].sort();
    await store.bulkInsertVisitors(
      bulk,
      trx,
      keys.map((k) => [ord, k]),
    );
    for (const chunk of chunkRows(keys, 1, deps.db.caps.maxParams - 1, 5000)) {
      for (const r of await store.selectVisitorOrds(trx, ord, chunk)) found.set(r.visitor_key, Number(r.ord));
    }
    return found;
  }

  /** Writes several batches in one transaction; returns rows inserted per job. */
  async function writeGroup(jobs: Job[]): Promise<number[]> {
    const inserted = jobs.map(() => 0);
    const ords = [...new Set(jobs.map((j) => j.ord))].sort((a, b) => a - b);
    const newEntries = new Map<number, { paths: Map<string, number>; visitors: Map<string, number> }>();
    await deps.db.kysely.transaction().execute(async (trx) => {
      // The version bumps come first on purpose: they take the write lock at once. On SQLite a transaction
      // that read first and writes later fails (SQLITE_BUSY) when another process committed in between; one
      // that writes first waits its turn (busy_timeout). On PostgreSQL they order concurrent writers of a
      // project (in ord order), so their dictionary and visit inserts cannot deadlock.
      for (const ord of ords) await store.bumpVersion(trx, ord);

      for (const ord of ords) {
        const mine = jobs.map((j, i) => [j, i] as const).filter(([j]) => j.ord === ord);
        // Imported lines stored before (or twice in this group) are dropped whole — raw event and daily
        // visit — so a re-import after a settings change (e.g. visitor-id rotation) cannot add visits.
        const keyed = mine.flatMap(([j]) => j.events.filter((p) => p.dedupKey !== null).map((p) => p.dedupKey as string));
        const skip = new Set<string>();
        if (keyed.length > 0) {
          for (const chunk of chunkRows(keyed, 1, deps.db.caps.maxParams - 1, 5000)) {
            for (const k of await store.selectExistingDedupKeys(trx, ord, chunk)) skip.add(k);
          }
        }
        const todo = mine.map(([j, i]) => {
          const events = j.events.filter((p) => {
            if (p.dedupKey === null) return true;
            if (skip.has(p.dedupKey)) return false;
            skip.add(p.dedupKey);
            return true;
          });
          return { job: j, index: i, events };
        });

        // Ids known now are copied out: other batches may evict them from the LRU while this one awaits.
        const cache = cacheFor(ord);
        const pathIds = new Map<string, number>();
        const visitorOrds = new Map<string, number>();
        const pathMiss = new Set<string>();
        const visitorMiss = new Set<string>();
        for (const { events } of todo) {
          for (const p of events) {
            if (!pathIds.has(p.path)) {
              const id = cache.paths.get(p.path);
              if (id === undefined) pathMiss.add(p.path);
              else pathIds.set(p.path, id);
            }
            if (!visitorOrds.has(p.vkey)) {
              const o = cache.visitors.get(p.vkey);
              if (o === undefined) visitorMiss.add(p.vkey);
              else visitorOrds.set(p.vkey, o);
            }
          }
        }
        const paths = await resolvePaths(trx, ord, pathMiss);
        const visitors = await resolveVisitors(trx, ord, visitorMiss);
        newEntries.set(ord, { paths, visitors });
        const pathId = (p: string) => (pathIds.get(p) ?? paths.get(p)) as number;
        const visitorOrd = (k: string) => (visitorOrds.get(k) ?? visitors.get(k)) as number;

        const visits = new Map<string, number[]>();
        for (const { job, index, events } of todo) {
          if (events.length === 0) continue;
          const rows: BulkRow[] = new Array(events.length);
          for (let i = 0; i < events.length; i++) {
            const p = events[i] as Prepared;
            const pid = pathId(p.path);
            const vord = visitorOrd(p.vkey);
            // EVENT_TABLE column order.
            rows[i] = [
              ord,
              p.ts,
              p.day,
              pid,
              p.rawPath,
              vord,
              p.ev.userAgent ?? null,
              p.ev.accept ?? null,
              p.ev.method ?? null,
              p.ev.status ?? null,
              p.ev.referrer ?? null,
              p.cls.class,
              p.cls.category,
              p.cls.rule,
              RULES_VERSION,
              p.qualifying ? 1 : 0,
              job.source,
              p.dedupKey,
            ];
            if (p.qualifying) {
              const cls = p.cls.class === 'human' ? CLS_HUMAN : CLS_AI;
              const k = `${p.day}:${pid}:${vord}:${cls}`;
              if (!visits.has(k)) visits.set(k, [ord, p.day, pid, vord, cls]);
            }
          }
          inserted[index] = await store.bulkInsertEvents(bulk, trx, rows);
        }
        // VISIT_TABLE order; sorted by key so that concurrent transactions take row locks in one order.
        const visitRows = [...visits.values()].sort(
          (a, b) =>
            (a[1] as number) - (b[1] as number) ||
            (a[2] as number) - (b[2] as number) ||
            (a[3] as number) - (b[3] as number) ||
            (a[4] as number) - (b[4] as number),
        );
        const added = await store.bulkInsertVisits(bulk, trx, visitRows);
        // Day sets (src/analytics/dayset-service.ts) are valid for one version of their (project, day).
        if (added > 0) await daysetStore.bumpDayVersions(trx, ord, daysOf(visitRows));
      }
    });
    for (const [ord, e] of newEntries) {
      const cache = cacheFor(ord);
      for (const [k, v] of e.paths) cache.paths.set(k, v);
      for (const [k, v] of e.visitors) cache.visitors.set(k, v);
    }
    return inserted;
  }

  /** The single writer of this process: takes everything queued (up to GROUP_MAX_EVENTS) per transaction. */
  async function drain(): Promise<void> {
    if (draining) return;
    draining = true;
    try {
      for (;;) {
        // Yield one event-loop turn first: batches whose requests arrived meanwhile (SQLite work is
        // synchronous, so they queue up during a transaction) are parsed and join this group.
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (queue.length === 0) break;
        const group: Job[] = [];
        let n = 0;
        while (queue.length > 0 && (group.length === 0 || n + (queue[0] as Job).events.length <= GROUP_MAX_EVENTS)) {
          const j = queue.shift() as Job;
          group.push(j);
          n += j.events.length;
        }
        try {
          const counts = await writeGroup(group);
          for (let i = 0; i < group.length; i++) (group[i] as Job).resolve(counts[i] as number);
        } catch (err) {
          if (group.length === 1) {
            (group[0] as Job).reject(err);
            continue;
          }
          for (const j of group) {
            try {
              j.resolve((await writeGroup([j]))[0] as number);
            } catch (e) {
              j.reject(e);
            }
          }
        }
      }
    } finally {
      draining = false;
    }
  }

  function write(ord: number, source: IngestSource, events: Prepared[]): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      queue.push({ ord, source, events, resolve, reject });
      void drain();
    });
  }

  return {
    projectOrd,

    /**
     * Ingests a batch for a project. Invalid events are rejected one by one; the rest are stored durably
     * before this resolves. Throws UnknownProjectError for a project that does not exist.
     */
    async ingest(projectId: string, events: readonly unknown[], opts: IngestOptions): Promise<IngestResult> {
      const project = await getProject(projectId);
      if (!project) throw new UnknownProjectError(`Project ${projectId} not found`);
      const now = deps.now();
      const rejected: { index: number; error: string }[] = [];
      const ok: Prepared[] = [];
      const pp = { id: projectId, visitorSecret: project.visitorSecret, rotation: project.settings.visitorIdRotation ?? 'none' };
      const gen = preparer.beginBatch(pp);
      for (let i = 0; i < events.length; i++) {
        const r = preparer.prepare(events[i], i, pp, gen, now, opts.dedupKeys?.[i] ?? null);
        if (typeof r === 'string') rejected.push({ index: i, error: r });
        else ok.push(r);
      }
      if (ok.length === 0) return { accepted: 0, inserted: 0, rejected };
      const ord = await projectOrd(projectId);
      const inserted = await write(ord, opts.source, ok);
      return { accepted: ok.length, inserted, rejected };
    },

    /** Forgets cached dictionary entries (tests; after a restore). */
    clearCaches(): void {
      caches.clear();
      preparer.clear();
      projectOrds.clear();
      projectCache.clear();
    },
  };
}

export type IngestService = ReturnType<typeof createIngestService>;
