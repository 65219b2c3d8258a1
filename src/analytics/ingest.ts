// Ingest: validate → normalise → classify → identify → store, one transaction per batch.
//
// Each accepted event becomes one raw row (`analytics_events`) and, when it is a qualifying view, one
// deduplicated (day, path, visitor, class) row (`analytics_daily_visits`). Both, the dictionary entries
// they need and the project's data-version bump are written in ONE transaction, so accepted events are
// durable when `ingest` resolves (SQLite runs with synchronous=FULL).
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
import { classify, RULES_VERSION } from './classify.ts';
import { utcDay } from './dates.ts';
import { type IngestEvent, validateIngestEvent } from './event.ts';
import { visitorKey } from './identity.ts';
import { Lru } from './lru.ts';
import { isQualifyingView } from './qualify.ts';
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

/** How far in the future a timestamp may be (clock skew between edge servers and us). */
export const MAX_FUTURE_MS = 24 * 3_600_000;

export interface IngestDeps {
  db: Database;
  getProject(id: string): Promise<ProjectWithSecret | undefined>;
  now: () => number;
  /** Dictionary cache bound per project (paths and visitors each). */
  cacheEntries?: number;
}

export class UnknownProjectError extends Error {}

interface ProjectCache {
  paths: Lru<string, number>;
  visitors: Lru<string, number>;
}

interface Prepared {
  index: number;
  ts: number;
  day: number;
  rawPath: string;
  path: string;
  vkey: string;
  ev: IngestEvent;
  cls: ReturnType<typeof classify>;
  qualifying: boolean;
  dedupKey: string | null;
}

function sha256(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}

export function createIngestService(deps: IngestDeps) {
  const cacheEntries = deps.cacheEntries ?? 100_000;
  const caches = new Lru<number, ProjectCache>(64);
  const projectOrds = new Map<string, number>();
  const bulk = createBulkWriter(deps.db);

  function cacheFor(ord: number): ProjectCache {
    let c = caches.get(ord);
    if (!c) {
      c = { paths: new Lru(cacheEntries), visitors: new Lru(cacheEntries) };
      caches.set(ord, c);
    }
    return c;
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

  /** Validates and derives everything an event needs; returns an error string for a rejected one. */
  function prepare(raw: unknown, index: number, project: ProjectWithSecret, now: number, dedupKey: string | null): Prepared | string {
    const v = validateIngestEvent(raw, now);
    if (!v.ok) return v.error;
    const ev = v.event;
    const ts = v.timestampMs;
    if (ts > now + MAX_FUTURE_MS) return 'timestamp is more than 24 hours in the future';
    if (ts < 0) return 'timestamp must not be before 1970-01-01';
    const rawPath = (ev.path ?? ev.url) as string;
    const cls = classify({ userAgent: ev.userAgent ?? null, path: rawPath, accept: ev.accept ?? null });
    const qualifying = isQualifyingView({ method: ev.method ?? null, status: ev.status ?? null, path: v.path, class: cls.class });
    const vkey = visitorKey({
      secret: project.visitorSecret,
      rotation: project.settings.visitorIdRotation ?? 'none',
      visitorId: ev.visitorId ?? null,
      ip: ev.ip ?? null,
      userAgent: ev.userAgent ?? null,
      timestampMs: ts,
    });
    return { index, ts, day: utcDay(ts), rawPath, path: v.path, vkey, ev, cls, qualifying, dedupKey };
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

  return {
    projectOrd,

    /**
     * Ingests a batch for a project. Invalid events are rejected one by one; the rest are stored in one
     * transaction. Throws UnknownProjectError for a project that does not exist.
     */
    async ingest(projectId: string, events: readonly unknown[], opts: IngestOptions): Promise<IngestResult> {
      const project = await deps.getProject(projectId);
      if (!project) throw new UnknownProjectError(`Project ${projectId} not found`);
      const now = deps.now();
      const rejected: { index: number; error: string }[] = [];
      const ok: Prepared[] = [];
      for (let i = 0; i < events.length; i++) {
        const r = prepare(events[i], i, project, now, opts.dedupKeys?.[i] ?? null);
        if (typeof r === 'string') rejected.push({ index: i, error: r });
        else ok.push(r);
      }
      if (ok.length === 0) return { accepted: 0, inserted: 0, rejected };

      const ord = await projectOrd(projectId);
      const cache = cacheFor(ord);
      let newPaths = new Map<string, number>();
      let newVisitors = new Map<string, number>();
      let inserted = 0;
      await deps.db.kysely.transaction().execute(async (trx) => {
        // The version bump is the first statement on purpose: it takes the write lock at once. On SQLite a
        // transaction that read first and writes later fails (SQLITE_BUSY) when another process committed in
        // between; one that writes first simply waits its turn (busy_timeout). On PostgreSQL it orders
        // concurrent batches of one project, so their dictionary and visit inserts cannot deadlock.
        await store.bumpVersion(trx, ord);
        // Imported lines stored before are dropped whole (raw event and daily visit), so that a re-import
        // after a settings change (e.g. visitor-id rotation) cannot add visits without raw events.
        let todo = ok;
        const withKeys = ok.filter((p) => p.dedupKey !== null).map((p) => p.dedupKey as string);
        if (withKeys.length > 0) {
          const existing = new Set<string>();
          for (const chunk of chunkRows(withKeys, 1, deps.db.caps.maxParams - 1, 5000)) {
            for (const k of await store.selectExistingDedupKeys(trx, ord, chunk)) existing.add(k);
          }
          if (existing.size > 0) todo = ok.filter((p) => p.dedupKey === null || !existing.has(p.dedupKey));
        }
        if (todo.length === 0) return;

        // Ids known now are copied out: other batches may evict them from the LRU while this one awaits.
        const pathIds = new Map<string, number>();
        const visitorOrds = new Map<string, number>();
        const pathMiss = new Set<string>();
        const visitorMiss = new Set<string>();
        for (const p of todo) {
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
        newPaths = await resolvePaths(trx, ord, pathMiss);
        newVisitors = await resolveVisitors(trx, ord, visitorMiss);
        const pathId = (p: string) => (pathIds.get(p) ?? newPaths.get(p)) as number;
        const visitorOrd = (k: string) => (visitorOrds.get(k) ?? newVisitors.get(k)) as number;

        const rows: BulkRow[] = new Array(todo.length);
        const visits = new Map<string, number[]>();
        for (let i = 0; i < todo.length; i++) {
          const p = todo[i] as Prepared;
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
            opts.source,
            p.dedupKey,
          ];
          if (p.qualifying) {
            const cls = p.cls.class === 'human' ? CLS_HUMAN : CLS_AI;
            const k = `${p.day}:${pid}:${vord}:${cls}`;
            if (!visits.has(k)) visits.set(k, [ord, p.day, pid, vord, cls]);
          }
        }
        inserted = await store.bulkInsertEvents(bulk, trx, rows);
        // VISIT_TABLE order; sorted by key so that concurrent transactions take row locks in one order.
        const visitRows = [...visits.values()].sort(
          (a, b) =>
            (a[1] as number) - (b[1] as number) ||
            (a[2] as number) - (b[2] as number) ||
            (a[3] as number) - (b[3] as number) ||
            (a[4] as number) - (b[4] as number),
        );
        await store.bulkInsertVisits(bulk, trx, visitRows);
      });
      for (const [k, v] of newPaths) cache.paths.set(k, v);
      for (const [k, v] of newVisitors) cache.visitors.set(k, v);
      return { accepted: ok.length, inserted, rejected };
    },

    /** Forgets cached dictionary entries (tests; after a restore). */
    clearCaches(): void {
      caches.clear();
      projectOrds.clear();
    },
  };
}

export type IngestService = ReturnType<typeof createIngestService>;
