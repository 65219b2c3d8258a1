// The write side of ingest: group commit, dictionaries and the SQL of one ingest transaction.
//
// Each accepted event becomes one raw row (`analytics_events`) and, when it is a qualifying view, one
// deduplicated (day, path, visitor, class) row (`analytics_daily_visits`). Both, the dictionary entries
// they need, the project's data-version bump and the day-version bumps are written in ONE transaction, and
// `write` resolves only after it committed, so accepted events are durable when the 202 is sent (SQLite
// runs synchronous=FULL).
//
// Group commit: batches that arrive while a transaction is running wait and are then written together in
// the next transaction (up to GROUP_MAX_EVENTS), so one fsync covers many requests. If a group transaction
// fails, its batches are retried one by one, so one bad batch cannot fail its neighbours.
//
// Dictionaries (path → id, visitor key → ordinal) are cached per project in bounded caches. A miss is
// resolved with insert … on conflict do nothing, then select — safe when several processes ingest at once.
// Cache entries are only added after the transaction commits, so a rolled-back batch never leaves an id
// in the cache that the database does not have.
//
// The writer runs where its caller puts it: in the ingest service's own thread (PostgreSQL, whose I/O is
// asynchronous anyway), or in a worker thread with its own SQLite connection (ingest-worker.ts), so that
// the inserts, the commit's fsync and checkpoints never block the thread that serves HTTP.
import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import { type BulkRow, createBulkWriter } from '../db/bulk.ts';
import type { Database } from '../db/index.ts';
import type { DB } from '../db/schema.ts';
import { RULES_VERSION } from './classify.ts';
import { daysetStore } from './dayset-store.ts';
import { GenerationCache, Lru } from './lru.ts';
import { chunkRows, analyticsStore as store } from './store.ts';
import { CLS_AI, CLS_HUMAN } from './tables.ts';
import { VisitorHashIndex } from './visitor-index.ts';

export type IngestSource = 'api' | 'collect' | 'import';

/**
 * One prepared event as the writer receives it (a flat tuple: cheap to build, and to copy to a worker).
 * Index constants below; `cls` is human | ai | crawler, `qualifying` 1 or 0.
 */
export type WriteEvent = [
  ts: number,
  day: number,
  rawPath: string,
  path: string,
  vkey: string,
  userAgent: string | null,
  accept: string | null,
  method: string | null,
  status: number | null,
  referrer: string | null,
  cls: 'human' | 'ai' | 'crawler',
  category: string | null,
  rule: string | null,
  qualifying: 0 | 1,
  dedupKey: string | null,
];

export const W_TS = 0;
export const W_DAY = 1;
export const W_RAW_PATH = 2;
export const W_PATH = 3;
export const W_VKEY = 4;
export const W_UA = 5;
export const W_ACCEPT = 6;
export const W_METHOD = 7;
export const W_STATUS = 8;
export const W_REFERRER = 9;
export const W_CLASS = 10;
export const W_CATEGORY = 11;
export const W_RULE = 12;
export const W_QUALIFYING = 13;
export const W_DEDUP = 14;

/** Events written in one transaction at most (several batches). */
export const GROUP_MAX_EVENTS = 10_000;

export interface IngestWriter {
  /** Where the writes happen: a worker thread (SQLite file) or the caller's thread. */
  readonly mode: 'worker' | 'thread';
  /** Stores the events of one batch durably; resolves with the raw events inserted (import duplicates skipped). */
  write(projectId: string, source: IngestSource, events: WriteEvent[]): Promise<number>;
  /** Forgets cached dictionary entries and project ordinals. */
  clearCaches(): void;
  /** Waits for queued writes, then releases resources (a worker thread). */
  close(): Promise<void>;
  /** Gets ready to write (starts a worker thread now rather than on the first write). */
  warmUp(): Promise<void>;
}

export interface GroupWriterOptions {
  /** Dictionary cache bound per project (paths and visitors each). */
  cacheEntries?: number;
}

interface ProjectCache {
  paths: GenerationCache<string, number>;
  /** Exact visitor key → ordinal, for recently seen visitors. */
  visitors: GenerationCache<string, number>;
  userAgents: GenerationCache<string, number>;
  /**
   * Every visitor of the project by key hash (visitor-index.ts), complete up to ordinal `upTo`. Loaded on the
   * project's first write; caught up under the project's write lock in every transaction.
   */
  visitorIndex?: { index: VisitorHashIndex; upTo: number };
}

/** Rows read per query when loading or catching up a visitor index. */
const VISITOR_LOAD_CHUNK = 50_000;

/** User agents cached per project (a site sees a few thousand distinct ones in a day). */
const USER_AGENT_CACHE = 20_000;

interface Job {
  ord: number;
  source: IngestSource;
  events: WriteEvent[];
  resolve(inserted: number): void;
  reject(err: unknown): void;
}

function sha256(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}

/** The group-committing writer over one database connection (pool), in the calling thread. */
export function createGroupWriter(db: Database, opts: GroupWriterOptions = {}): IngestWriter {
  const cacheEntries = opts.cacheEntries ?? 100_000;
  const caches = new Lru<number, ProjectCache>(64);
  const projectOrds = new Map<string, number>();
  const bulk = createBulkWriter(db);
  const queue: Job[] = [];
  let draining: Promise<void> | null = null;

  function cacheFor(ord: number): ProjectCache {
    let c = caches.get(ord);
    if (!c) {
      c = {
        paths: new GenerationCache(cacheEntries),
        visitors: new GenerationCache(cacheEntries),
        userAgents: new GenerationCache(Math.min(cacheEntries, USER_AGENT_CACHE)),
      };
      caches.set(ord, c);
    }
    return c;
  }

  /** The project's analytics ordinal, created on first use. */
  async function projectOrd(projectId: string): Promise<number> {
    const known = projectOrds.get(projectId);
    if (known !== undefined) return known;
    let ord = await store.selectProjectOrd(db.kysely, projectId);
    if (ord === undefined) {
      await store.insertProjectOrd(db.kysely, projectId);
      ord = await store.selectProjectOrd(db.kysely, projectId);
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
    for (const chunk of chunkRows(hashes, 1, db.caps.maxParams - 1, 5000)) {
      for (const r of await store.selectPathIds(trx, ord, chunk)) found.set(byHash.get(r.path_hash) as string, Number(r.id));
    }
    return found;
  }

  async function resolveUserAgents(trx: Kysely<DB>, ord: number, misses: Set<string>): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    if (misses.size === 0) return found;
    const byHash = new Map<string, string>();
    for (const ua of misses) byHash.set(sha256(ua), ua);
    const hashes = [...byHash.keys()].sort();
    await store.bulkInsertUserAgents(
      bulk,
      trx,
      hashes.map((h) => [ord, h, byHash.get(h)]),
    );
    for (const chunk of chunkRows(hashes, 1, db.caps.maxParams - 1, 5000)) {
      for (const r of await store.selectUserAgentIds(trx, ord, chunk)) found.set(byHash.get(r.ua_hash) as string, Number(r.id));
    }
    return found;
  }

  /**
   * Visitors are found in the in-memory index and added append-only: the caller holds the project's write
   * lock (the version bump came first: SQLite's single writer, a row lock on PostgreSQL, so writers of one
   * project take turns and each statement after the bump sees what the previous one committed). After
   * catching up on visitors committed by other processes, a key absent from the index is absent from the
   * table. Index candidates are confirmed by their stored key. The entries added here join the index after
   * the commit (`indexed` lists them).
   */
  /** Adds a project's visitors above `vi.upTo` to its index (all of them for a new index). */
  async function catchUp(q: Kysely<DB>, ord: number, vi: { index: VisitorHashIndex; upTo: number }): Promise<void> {
    for (;;) {
      const rows = await store.selectVisitorsAfter(q, ord, vi.upTo, VISITOR_LOAD_CHUNK);
      for (const r of rows) vi.index.add(r.visitor_key, r.ord);
      if (rows.length > 0) vi.upTo = (rows[rows.length - 1] as { ord: number }).ord;
      if (rows.length < VISITOR_LOAD_CHUNK) break;
    }
  }

  const loading = new Map<number, Promise<void>>();
  /**
   * Loads a project's visitor index before its first write, outside any transaction (it reads the whole
   * dictionary once, which should not hold the write lock). Should the index be evicted with its project's
   * caches meanwhile, the transaction loads it again itself.
   */
  function loadVisitorIndex(ord: number): Promise<void> {
    if (cacheFor(ord).visitorIndex) return Promise.resolve();
    let p = loading.get(ord);
    if (!p) {
      p = (async () => {
        const vi = { index: new VisitorHashIndex(), upTo: 0 };
        await catchUp(db.kysely, ord, vi);
        const cache = cacheFor(ord);
        cache.visitorIndex ??= vi;
      })().finally(() => loading.delete(ord));
      loading.set(ord, p);
    }
    return p;
  }

  async function resolveVisitors(trx: Kysely<DB>, ord: number, misses: Set<string>, added: { key: string; ord: number }[]): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    if (misses.size === 0) return found;
    const cache = cacheFor(ord);
    cache.visitorIndex ??= { index: new VisitorHashIndex(), upTo: 0 };
    const vi = cache.visitorIndex;
    // Visitors other processes committed since we last looked (they exist: safe to index at once).
    await catchUp(trx, ord, vi);
    const candidates: number[] = [];
    const toConfirm = new Set<number>();
    const fresh: string[] = [];
    const withCandidates: string[] = [];
    for (const key of misses) {
      candidates.length = 0;
      vi.index.candidates(key, candidates);
      if (candidates.length === 0) fresh.push(key);
      else {
        withCandidates.push(key);
        for (const c of candidates) toConfirm.add(c);
      }
    }
    if (toConfirm.size > 0) {
      const stored = new Map<string, number>();
      for (const chunk of chunkRows([...toConfirm], 1, db.caps.maxParams - 1, 5000)) {
        for (const r of await store.selectVisitorsByOrd(trx, chunk)) stored.set(r.visitor_key, r.ord);
      }
      for (const key of withCandidates) {
        const o = stored.get(key);
        if (o === undefined) fresh.push(key);
        else found.set(key, o);
      }
    }
    if (fresh.length > 0) {
      fresh.sort();
      const rows = await store.bulkInsertVisitorsReturning(
        bulk,
        trx,
        fresh.map((k) => [ord, k]),
      );
      for (const r of rows) {
        found.set(r.visitor_key, r.ord);
        added.push({ key: r.visitor_key, ord: r.ord });
      }
      if (rows.length !== fresh.length) throw new Error(`visitor dictionary: ${fresh.length - rows.length} of ${fresh.length} new visitors not inserted`);
    }
    return found;
  }

  /** Writes several batches in one transaction; returns rows inserted per job. */
  async function writeGroup(jobs: Job[]): Promise<number[]> {
    const inserted = jobs.map(() => 0);
    const ords = [...new Set(jobs.map((j) => j.ord))].sort((a, b) => a - b);
    const newEntries = new Map<
      number,
      { paths: Map<string, number>; visitors: Map<string, number>; userAgents: Map<string, number>; indexed: { key: string; ord: number }[] }
    >();
    await db.kysely.transaction().execute(async (trx) => {
      // The version bumps come first on purpose: they take the write lock at once. On SQLite a transaction
      // that read first and writes later fails (SQLITE_BUSY) when another process committed in between; one
      // that writes first waits its turn (busy_timeout). On PostgreSQL they order concurrent writers of a
      // project (in ord order), so their dictionary and visit inserts cannot deadlock.
      for (const ord of ords) await store.bumpVersion(trx, ord);

      for (const ord of ords) {
        const mine: { job: Job; index: number }[] = [];
        for (let i = 0; i < jobs.length; i++) if ((jobs[i] as Job).ord === ord) mine.push({ job: jobs[i] as Job, index: i });
        // Imported lines stored before (or twice in this group) are dropped whole — raw event and daily
        // visit — so a re-import after a settings change (e.g. visitor-id rotation) cannot add visits.
        const keyed: string[] = [];
        for (const { job } of mine) for (const e of job.events) if (e[W_DEDUP] !== null) keyed.push(e[W_DEDUP]);
        let todo = mine.map(({ job, index }) => ({ job, index, events: job.events }));
        if (keyed.length > 0) {
          const skip = new Set<string>();
          for (const chunk of chunkRows(keyed, 1, db.caps.maxParams - 1, 5000)) {
            for (const k of await store.selectExistingDedupKeys(trx, ord, chunk)) skip.add(k);
          }
          todo = mine.map(({ job, index }) => ({
            job,
            index,
            events: job.events.filter((e) => {
              const k = e[W_DEDUP];
              if (k === null) return true;
              if (skip.has(k)) return false;
              skip.add(k);
              return true;
            }),
          }));
        }

        // Ids known now are copied out: other batches may evict them from the cache while this one awaits.
        // Per event, the ids found in the caches go into typed arrays (0 = resolved after the misses).
        const cache = cacheFor(ord);
        const pathIds = new Map<string, number>();
        const visitorOrds = new Map<string, number>();
        const uaIds = new Map<string, number>();
        const pathMiss = new Set<string>();
        const visitorMiss = new Set<string>();
        const uaMiss = new Set<string>();
        const known = todo.map(({ events }) => {
          const n = events.length;
          const pids = new Float64Array(n);
          const vords = new Float64Array(n);
          const uas = new Float64Array(n);
          for (let i = 0; i < n; i++) {
            const e = events[i] as WriteEvent;
            const path = e[W_PATH];
            let pid = pathIds.get(path);
            if (pid === undefined && !pathMiss.has(path)) {
              pid = cache.paths.get(path);
              if (pid === undefined) pathMiss.add(path);
              else pathIds.set(path, pid);
            }
            if (pid !== undefined) pids[i] = pid;
            const vkey = e[W_VKEY];
            let vord = visitorOrds.get(vkey);
            if (vord === undefined && !visitorMiss.has(vkey)) {
              vord = cache.visitors.get(vkey);
              if (vord === undefined) visitorMiss.add(vkey);
              else visitorOrds.set(vkey, vord);
            }
            if (vord !== undefined) vords[i] = vord;
            const ua = e[W_UA];
            if (ua !== null) {
              let id = uaIds.get(ua);
              if (id === undefined && !uaMiss.has(ua)) {
                id = cache.userAgents.get(ua);
                if (id === undefined) uaMiss.add(ua);
                else uaIds.set(ua, id);
              }
              if (id !== undefined) uas[i] = id;
            }
          }
          return { pids, vords, uas };
        });
        const paths = await resolvePaths(trx, ord, pathMiss);
        const indexed: { key: string; ord: number }[] = [];
        const visitors = await resolveVisitors(trx, ord, visitorMiss, indexed);
        const userAgents = await resolveUserAgents(trx, ord, uaMiss);
        newEntries.set(ord, { paths, visitors, userAgents, indexed });

        // One row per (day, path, visitor, class) of the group's qualifying views: the key packs path and
        // class (paths ids < 2^50) in one number, per visitor per day. Writers of a project take turns (the
        // version row lock), so the rows need no particular order; existing ones are skipped by the insert.
        const visits: BulkRow[] = [];
        const seen = new Map<number, Map<number, number[]>>();
        // And the group's qualifying views counted per (day, path): [human, ai], added to the daily counts.
        const views = new Map<number, Map<number, [number, number]>>();
        for (let j = 0; j < todo.length; j++) {
          const { job, index, events } = todo[j] as (typeof todo)[number];
          if (events.length === 0) continue;
          const { pids, vords, uas } = known[j] as (typeof known)[number];
          const rows: BulkRow[] = new Array(events.length);
          for (let i = 0; i < events.length; i++) {
            const e = events[i] as WriteEvent;
            const pid = pids[i] || (paths.get(e[W_PATH]) as number);
            const vord = vords[i] || (visitors.get(e[W_VKEY]) as number);
            const ua = e[W_UA];
            // EVENT_TABLE column order. The raw path is stored only when it differs from the normalised one
            // ('' = the same), the user agent by its dictionary id (migration 0007).
            rows[i] = [
              ord,
              e[W_TS],
              e[W_DAY],
              pid,
              e[W_RAW_PATH] === e[W_PATH] ? '' : e[W_RAW_PATH],
              vord,
              ua === null ? null : uas[i] || (userAgents.get(ua) as number),
              e[W_ACCEPT],
              e[W_METHOD],
              e[W_STATUS],
              e[W_REFERRER],
              e[W_CLASS],
              e[W_CATEGORY],
              e[W_RULE],
              RULES_VERSION,
              e[W_QUALIFYING],
              job.source,
              e[W_DEDUP],
            ];
            if (e[W_QUALIFYING] === 1) {
              const cls = e[W_CLASS] === 'human' ? CLS_HUMAN : CLS_AI;
              const day = e[W_DAY];
              let dayViews = views.get(day);
              if (!dayViews) {
                dayViews = new Map();
                views.set(day, dayViews);
              }
              const counts = dayViews.get(pid);
              if (counts) counts[cls === CLS_HUMAN ? 0 : 1]++;
              else dayViews.set(pid, cls === CLS_HUMAN ? [1, 0] : [0, 1]);
              let byVisitor = seen.get(day);
              if (!byVisitor) {
                byVisitor = new Map();
                seen.set(day, byVisitor);
              }
              const pathCls = pid * 4 + cls;
              const mine = byVisitor.get(vord);
              if (mine === undefined) byVisitor.set(vord, [pathCls]);
              else if (mine.includes(pathCls)) continue;
              else mine.push(pathCls);
              visits.push([ord, day, pid, vord, cls]);
            }
          }
          inserted[index] = await store.bulkInsertEvents(bulk, trx, rows);
        }
        const viewRows: BulkRow[] = [];
        for (const [day, byPath] of views) for (const [pid, [human, ai]] of byPath) viewRows.push([ord, day, pid, human, ai]);
        await store.bulkAddViews(bulk, trx, viewRows);
        const visitRows = visits;
        const added = await store.bulkInsertVisits(bulk, trx, visitRows);
        // Day sets (src/analytics/dayset-service.ts) are valid for one version of their (project, day).
        if (added > 0)
          await daysetStore.bumpDayVersions(
            trx,
            ord,
            [...seen.keys()].sort((a, b) => a - b),
          );
      }
    });
    for (const [ord, e] of newEntries) {
      const cache = cacheFor(ord);
      for (const [k, v] of e.paths) cache.paths.set(k, v);
      for (const [k, v] of e.visitors) cache.visitors.set(k, v);
      for (const [k, v] of e.userAgents) cache.userAgents.set(k, v);
      const vi = cache.visitorIndex;
      if (vi) {
        for (const { key, ord: o } of e.indexed) {
          vi.index.add(key, o);
          if (o > vi.upTo) vi.upTo = o;
        }
      }
    }
    return inserted;
  }

  /** The single writer of this writer: takes everything queued (up to GROUP_MAX_EVENTS) per transaction. */
  async function drainLoop(): Promise<void> {
    for (;;) {
      // Yield one event-loop turn first: batches whose requests arrived meanwhile (SQLite work is
      // synchronous, so they queue up during a transaction) are taken in and join this group.
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
  }

  function drain(): void {
    if (draining) return;
    draining = drainLoop().finally(() => {
      draining = null;
      if (queue.length > 0) drain();
    });
  }

  return {
    mode: 'thread',

    async write(projectId, source, events) {
      if (events.length === 0) return 0;
      const ord = await projectOrd(projectId);
      await loadVisitorIndex(ord);
      return new Promise<number>((resolve, reject) => {
        queue.push({ ord, source, events, resolve, reject });
        drain();
      });
    },

    clearCaches() {
      caches.clear();
      loading.clear();
      projectOrds.clear();
    },

    async close() {
      while (draining) await draining;
    },

    async warmUp() {},
  };
}
