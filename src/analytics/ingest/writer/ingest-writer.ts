// The write side of ingest: group commit, dictionaries and the SQL of one ingest transaction.
//
// Each group transaction appends one segment (src/analytics/segments/codec.ts, `analytics_segments`) per
// (project, day) it touched, holding those raw events: the only per-event storage. The segments, the dictionary
// entries they need, the project's data-version bump and one day-version upsert per touched day (what the day
// summaries are valid for: src/analytics/export/summary-service.ts) are written in ONE transaction, and `write`
// resolves only after it committed, so accepted events are durable when the 202 is sent (SQLite runs
// synchronous=FULL). Nothing per event is derived here: the answers' aggregates are derived from the segments.
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
import { createBulkWriter } from '../../../db/bulk.ts';
import type { Database } from '../../../db/index.ts';
import type { DB } from '../../../db/schema.ts';
import { RULES_VERSION } from '../../classify/classify.ts';
import { GenerationCache, SizedLru } from '../../lru.ts';
import { decodeSegment, encodeSegment, type SegmentCategory, type SegmentEvent } from '../../segments/codec.ts';
import { dedupHashHex } from '../../segments/dedup.ts';
import { type SwapOutcome, type SwapPlan, swapCompaction } from '../../store/segment-days.ts';
import { segmentStore } from '../../store/segment-store.ts';
import { chunkRows, analyticsStore as store } from '../../store/store.ts';
import { type SummaryRow, summaryStore } from '../../store/summary-store.ts';
import {
  dedupKeyDayOf,
  dedupKeyDigestText,
  digestTextWord,
  type EventClass,
  hashOfWords,
  type IngestSource,
  type Learned,
  type LearnedIds,
  NO_STATUS,
  NO_STRING,
  R_ACCEPT,
  R_CATEGORY,
  R_CLASS,
  R_METHOD,
  R_PATH,
  R_RAW_PATH,
  R_REFERRER,
  R_RULE,
  R_UA,
  R_VKEY,
  REF_WIDTH,
  splitStrings,
  USER_AGENT_CACHE,
  type WriteBatch,
} from '../write-batch.ts';
import { DedupCache, HashSet64 } from './dedup-cache.ts';
import {
  type AddedChunk,
  CACHED_KEY_BYTES,
  catchUpVisitors,
  closeVisitorIndex,
  indexAdded,
  newVisitorIndexState,
  resolveVisitorKeys,
  type VisitorIndexState,
  visitorIndexBytes,
} from './visitor-dictionary.ts';
import { copyWriterStats, type IngestWriterStats, newWriterStats, observeSeconds } from './writer-stats.ts';

export type { IngestSource, WriteEvent } from '../write-batch.ts';

/** Events written in one transaction at most (several batches). */
export const GROUP_MAX_EVENTS = 10_000;

export interface IngestWriter {
  /** Where the writes happen: a worker thread (SQLite file) or the caller's thread. */
  readonly mode: 'worker' | 'thread';
  /**
   * Stores the events of one batch durably; resolves with the raw events inserted (import duplicates
   * skipped). The batch must not be changed afterwards (the in-thread writer reads it while it waits).
   */
  write(projectId: string, source: IngestSource, batch: WriteBatch): Promise<number>;
  /**
   * Compaction's swap (segment-days.ts swapCompaction) as a transaction of this writer, between its groups: on
   * SQLite the writer is the process's one writer, so the swap waits for no lock and holds up no request (the
   * in-thread writer of PostgreSQL runs it on its pool). Not acknowledged durably: a swap lost to a crash leaves the
   * segments it would have replaced.
   */
  swapCompaction(plan: SwapPlan, merged: Uint8Array[]): Promise<SwapOutcome>;
  /** Stores summary blobs (summaryStore.upsertSummaries) as a transaction of this writer, like swapCompaction (the sealer's writes). */
  persistSummaries(rows: SummaryRow[]): Promise<void>;
  /** Forgets cached dictionary entries and project ordinals. */
  clearCaches(): void;
  /** Waits for queued writes, then releases resources (a worker thread). */
  close(): Promise<void>;
  /** Gets ready to write (starts a worker thread now rather than on the first write). */
  warmUp(): Promise<void>;
  /** What it wrote so far (writer-stats.ts): a copy; a worker thread's as of its last replies (so it counts every write that has settled). */
  stats(): IngestWriterStats;
}

export interface GroupWriterOptions {
  /** Dictionary cache bound per project (paths and visitors each). */
  cacheEntries?: number;
  /**
   * Whether recently seen visitor keys are kept in an exact cache (key → ordinal) in front of the visitor index
   * (default true). An import passes false (import.ts IMPORT_WRITER): its keys are mostly new (a key names a
   * visitor's day, and a batch already sends each of its keys once), so the cache was two misses and an insert
   * per key before the index was asked anyway; without it every key goes straight to the index, which finds a
   * known one by its hash and stored bytes (visitor-dictionary.ts).
   */
  visitorCache?: boolean;
  /**
   * Told, after each commit, the dictionary ids resolved for strings that a batch carried `known` entries of
   * 0 for (dictionary-mirror.ts): so the preparing thread can send them next time.
   */
  onLearned?: (projectId: string, learned: Learned) => void;
  /**
   * Bound of the per-project caches and visitor indexes together, in bytes (least recently written projects
   * dropped first; default 512 MiB).
   */
  projectStateBytes?: number;
  /** Bound of the import dedup hashes kept in memory (dedup-cache.ts), in bytes. */
  dedupCacheBytes?: number;
  /**
   * A project's visitor keys held in memory at most (visitor-keys.ts), in bytes; never more than half of
   * projectStateBytes (the default).
   */
  visitorKeyBytes?: number;
  /** Where a project's other visitor keys go, in an unlinked file (none: their candidates are read from their rows). */
  visitorKeyFileDir?: string;
  /**
   * Makes what has been committed so far durable; called after each group's commit, and the group's writes
   * resolve only once the promise it returns does (they fail if it fails). The next group is written meanwhile.
   * For a connection that commits without syncing (SQLite synchronous=NORMAL) while this syncs the WAL in another
   * thread (ingest-worker.ts walSyncer): the fsync of one group overlaps the statements of the next.
   */
  durable?: () => Promise<void>;
}

interface ProjectCache {
  paths: GenerationCache<string, number>;
  /** Exact visitor key → ordinal, for recently seen visitors (null: none, GroupWriterOptions.visitorCache). */
  visitors: GenerationCache<string, number> | null;
  userAgents: GenerationCache<string, number>;
  /**
   * Every visitor of the project by key hash (visitor-index.ts), complete up to ordinal `upTo`. Loaded on the
   * project's first write; caught up under the project's write lock in every transaction.
   */
  visitorIndex?: VisitorIndexState;
}

/** Approximate bytes of a project's caches (cache entries are estimated; the index is measured). */
function projectCacheBytes(c: ProjectCache): number {
  const entries = c.paths.size + (c.visitors?.size ?? 0) + c.userAgents.size;
  return entries * CACHED_KEY_BYTES + (c.visitorIndex ? visitorIndexBytes(c.visitorIndex) : 0);
}

interface Job {
  projectId: string;
  ord: number;
  source: IngestSource;
  batch: WriteBatch;
  resolve(inserted: number): void;
  reject(err: unknown): void;
}

/** A job of the group being written, with the events of its batch to write (`keep`; null: all of them). */
interface GroupJob {
  job: Job;
  /** The job's position in the group (its count of inserted rows goes there). */
  index: number;
  keep: Uint8Array | null;
  /** Per event, the dedup hash of its import key (null: none); null when no event has one. */
  hashes: (bigint | null)[] | null;
  /** The same hashes as (high, low) 32-bit word pairs, for the lookups (set where `hashes` is). */
  words: Uint32Array | null;
}

/** A batch's dictionary ids by string index (see idsOf): paths, visitor ordinals, user agents. */
interface BatchIds {
  pids: Float64Array;
  vords: Float64Array;
  uas: Float64Array;
}

/** Dictionary entries a transaction resolved: cached after its commit (`indexed`: visitors it added). */
interface NewEntries {
  paths: Map<string, number>;
  visitors: Map<string, number>;
  userAgents: Map<string, number>;
  indexed: { key: string; ord: number }[];
  /** The visitor chunks it added. */
  chunks: AddedChunk[];
}

function sha256(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}

/**
 * The dictionary ids a batch's events need for one text field, by string index: found in the cache (if any), or -1
 * with the string added to `miss` (resolved in the transaction, then filled in by fillMisses). Strings the
 * field does not use (or only events not kept use) stay 0. Ids are copied out of the cache here: other
 * batches may evict them while this one awaits.
 */
function idsOf(
  b: WriteBatch,
  keep: Uint8Array | null,
  field: number,
  known: Float64Array | undefined,
  cache: GenerationCache<string, number> | null,
  miss: Set<string>,
): Float64Array {
  const ids = new Float64Array(b.strings.length);
  for (let i = 0; i < b.n; i++) {
    if (keep !== null && keep[i] === 0) continue;
    const r = b.refs[i * REF_WIDTH + field] as number;
    if (r === NO_STRING || ids[r] !== 0) continue;
    const given = known === undefined ? 0 : (known[r] as number);
    if (given > 0) {
      ids[r] = given;
      continue;
    }
    const s = b.strings[r] as string;
    const id = cache === null ? undefined : cache.get(s);
    if (id === undefined) {
      ids[r] = -1;
      miss.add(s);
    } else ids[r] = id;
  }
  return ids;
}

/** The ids of `ids` that `known` had no entry for (0), for Learned. */
function newlyKnown(b: WriteBatch, known: Float64Array, ids: Float64Array): LearnedIds {
  const out: LearnedIds = { keys: [], ids: [] };
  for (let r = 0; r < ids.length; r++) {
    if (known[r] === 0 && (ids[r] as number) > 0) {
      out.keys.push(b.strings[r] as string);
      out.ids.push(ids[r] as number);
    }
  }
  return out;
}

/** Fills the ids idsOf left to resolve (-1) from the entries resolved in the transaction. */
function fillMisses(ids: Float64Array, b: WriteBatch, resolved: Map<string, number>): void {
  for (let r = 0; r < ids.length; r++) if (ids[r] === -1) ids[r] = resolved.get(b.strings[r] as string) as number;
}

/** The ids a batch carried no `known` entry for, now resolved: sent back to the preparing thread's mirror. */
function learnedOf(b: WriteBatch, known: NonNullable<WriteBatch['known']>, ids: BatchIds): Learned {
  return {
    paths: newlyKnown(b, known.paths, ids.pids),
    visitors: newlyKnown(b, known.visitors, ids.vords),
    userAgents: newlyKnown(b, known.userAgents, ids.uas),
  };
}

/**
 * The raw events of one batch, added to their day's segment in `segments`; returns the events added. The raw
 * path is stored only when it differs from the normalised one (null = the same), the user agent by its
 * dictionary id. `dataDays` gets the days of events the series and breakdowns count (summary-store.ts has_data).
 */
function eventRows(source: IngestSource, b: WriteBatch, t: GroupJob, ids: BatchIds, segments: Map<number, SegmentEvent[]>, dataDays: Set<number>): number {
  const { keep, hashes } = t;
  const { pids, vords, uas } = ids;
  const { strings, refs } = b;
  const str = (r: number): string | null => (r === NO_STRING ? null : (strings[r] as string));
  let added = 0;
  for (let i = 0; i < b.n; i++) {
    if (keep !== null && keep[i] === 0) continue;
    const o = i * REF_WIDTH;
    const pathRef = refs[o + R_PATH] as number;
    const rawRef = refs[o + R_RAW_PATH] as number;
    const uaRef = refs[o + R_UA] as number;
    const day = b.day[i] as number;
    const status = b.status[i] as number;
    const qualifying = b.qualifying[i] === 1;
    const cls = strings[refs[o + R_CLASS] as number] as EventClass;
    const rule = str(refs[o + R_RULE] as number);
    let dayEvents = segments.get(day);
    if (!dayEvents) {
      dayEvents = [];
      segments.set(day, dayEvents);
    }
    dayEvents.push({
      ts: b.ts[i] as number,
      pathId: pids[pathRef] as number,
      rawPath: rawRef === pathRef ? null : (strings[rawRef] as string),
      visitor: vords[refs[o + R_VKEY] as number] as number,
      uaId: uaRef === NO_STRING ? null : (uas[uaRef] as number),
      accept: str(refs[o + R_ACCEPT] as number),
      method: str(refs[o + R_METHOD] as number),
      status: status === NO_STATUS ? null : status,
      referrer: str(refs[o + R_REFERRER] as number),
      cls,
      category: str(refs[o + R_CATEGORY] as number) as SegmentCategory,
      rule,
      rulesVersion: RULES_VERSION,
      qualifying,
      source,
      dedup: hashes === null ? null : (hashes[i] as bigint | null),
    });
    added++;
    if (qualifying || (cls !== 'human' && rule !== null)) dataDays.add(day);
  }
  return added;
}

/**
 * The group-committing writer over one database connection (pool), in the calling thread. A factory, long only
 * as a module is: the writer's state (queue, caches, bulk statements) and its steps, each a short function.
 */
export function createGroupWriter(db: Database, opts: GroupWriterOptions = {}): IngestWriter {
  const cacheEntries = opts.cacheEntries ?? 100_000;
  const projectStateBytes = opts.projectStateBytes ?? 512 * 2 ** 20;
  const caches = new SizedLru<number, ProjectCache>(projectStateBytes, projectCacheBytes, (c) => {
    if (c.visitorIndex) closeVisitorIndex(c.visitorIndex);
  });
  /** A project's visitor keys held in memory at most (visitor-keys.ts): at most half its state's bound, the index and caches the rest. */
  const keyBytes = Math.min(Math.floor(projectStateBytes / 2), opts.visitorKeyBytes ?? Number.POSITIVE_INFINITY);
  const newIndex = () => newVisitorIndexState(keyBytes, opts.visitorKeyFileDir);
  const projectOrds = new Map<string, number>();
  const bulk = createBulkWriter(db);
  const queue: Job[] = [];
  /** Background writes waiting (compaction swaps, summaries): each runs as its own transaction before the next group. */
  const tasks: (() => Promise<void>)[] = [];
  function task<T>(run: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      tasks.push(() => run().then(resolve, reject));
      drain();
    });
  }
  const dedupCache = new DedupCache(opts.dedupCacheBytes);
  let draining: Promise<void> | null = null;

  function cacheFor(ord: number): ProjectCache {
    let c = caches.get(ord);
    if (!c) {
      c = {
        paths: new GenerationCache(cacheEntries),
        visitors: opts.visitorCache === false ? null : new GenerationCache(cacheEntries),
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
    const ord = await store.ensureProjectOrd(db.kysely, projectId);
    projectOrds.set(projectId, ord);
    return ord;
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
        const vi = newIndex();
        try {
          await catchUpVisitors(db.kysely, ord, vi, db.caps);
        } catch (err) {
          closeVisitorIndex(vi);
          throw err;
        }
        const cache = cacheFor(ord);
        if (cache.visitorIndex) closeVisitorIndex(vi);
        else cache.visitorIndex = vi;
        caches.resize(ord);
      })().finally(() => loading.delete(ord));
      loading.set(ord, p);
    }
    return p;
  }

  /** Visitors not in the exact cache, under the project's write lock (visitor-dictionary.ts, its invariant). */
  async function resolveVisitors(
    trx: Kysely<DB>,
    ord: number,
    misses: Set<string>,
    added: { key: string; ord: number }[],
    addedChunks: AddedChunk[],
  ): Promise<Map<string, number>> {
    if (misses.size === 0) return new Map();
    const cache = cacheFor(ord);
    cache.visitorIndex ??= newIndex();
    return resolveVisitorKeys(trx, bulk, ord, cache.visitorIndex, misses, added, addedChunks);
  }

  /**
   * A project's jobs of the group, each with the events of its batch to write. Imported lines stored before (or
   * twice in this group) are dropped whole — raw event and daily visit — so a re-import after a settings change
   * (e.g. visitor-id rotation) cannot add visits. `keep` marks the events to write (null: all of them).
   */
  async function jobsToWrite(trx: Kysely<DB>, ord: number, jobs: Job[], caughtUp: Map<number, number>, unscopedNew: string[]): Promise<GroupJob[]> {
    const todo: GroupJob[] = [];
    for (let i = 0; i < jobs.length; i++) if ((jobs[i] as Job).ord === ord) todo.push({ job: jobs[i] as Job, index: i, keep: null, hashes: null, words: null });
    const days = new Set<number>();
    const unscoped = new Set<string>();
    /** Per job, which keyed events name no day of their own (looked up project-wide). */
    const projectWide = new Map<GroupJob, Uint8Array>();
    for (const t of todo) {
      const b = t.job.batch;
      for (let i = 0; i < b.n; i++) {
        const digest = dedupKeyDigestText(b, i);
        if (digest === null) continue;
        t.hashes ??= new Array<bigint | null>(b.n).fill(null);
        t.words ??= new Uint32Array(b.n * 2);
        const hi = digestTextWord(digest, 0);
        const lo = digestTextWord(digest, 4);
        // The first 8 bytes big-endian, as readBigUInt64BE reads them.
        const h = hashOfWords(hi, lo);
        t.hashes[i] = h;
        t.words[2 * i] = hi;
        t.words[2 * i + 1] = lo;
        const day = b.day[i] as number;
        // An import key begins with the event time, so the same line imported again falls on the same day.
        if (dedupKeyDayOf(b, i) === day) days.add(day);
        else {
          let w = projectWide.get(t);
          if (!w) {
            w = new Uint8Array(b.n);
            projectWide.set(t, w);
          }
          w[i] = 1;
          unscoped.add(dedupHashHex(h));
        }
      }
    }
    if (days.size === 0 && unscoped.size === 0) return todo;
    for (const day of [...days].sort((a, b) => a - b)) await catchUpDay(trx, ord, day, caughtUp);
    const storedUnscoped = new Set(await segmentStore.selectDedupKeys(trx, ord, [...unscoped].sort()));
    const seen = new HashSet64();
    // The day's hashes of the event before (an import's lines come day after day; no eviction happens in this loop).
    let lastDay = Number.NaN;
    let dayHashes: HashSet64 | null = null;
    for (const t of todo) {
      const b = t.job.batch;
      const keep = new Uint8Array(b.n);
      const wide = projectWide.get(t);
      const words = t.words as Uint32Array;
      for (let i = 0; i < b.n; i++) {
        const h = t.hashes === null ? null : (t.hashes[i] as bigint | null);
        if (h === null) {
          keep[i] = 1;
          continue;
        }
        const hi = words[2 * i] as number;
        const lo = words[2 * i + 1] as number;
        if (seen.has(hi, lo)) continue;
        if (wide !== undefined && wide[i] === 1) {
          const hex = dedupHashHex(h);
          if (storedUnscoped.has(hex)) continue;
          seen.add(hi, lo);
          unscopedNew.push(hex);
          keep[i] = 1;
        } else {
          const day = b.day[i] as number;
          if (day !== lastDay || dayHashes === null) {
            dayHashes = dedupCache.entry(ord, day).hashes;
            lastDay = day;
          }
          if (dayHashes.has(hi, lo)) continue;
          seen.add(hi, lo);
          keep[i] = 1;
        }
      }
      t.keep = keep;
    }
    return todo;
  }

  /**
   * Brings a (project, day)'s dedup hashes up to date with its stored segments (dedup-cache.ts), under the
   * project's write lock; `caughtUp` records the days done in this transaction, with the seq they reached.
   */
  async function catchUpDay(trx: Kysely<DB>, ord: number, day: number, caughtUp: Map<number, number>): Promise<void> {
    const e = dedupCache.entry(ord, day);
    const fresh: bigint[] = [];
    let seq = e.seq;
    for (const seg of await segmentStore.selectDaySegments(trx, ord, day, e.seq)) {
      const d = decodeSegment(seg.data).dedup;
      if (d !== null) for (let i = 0; i < d.hash.length; i++) if (d.present[i] === 1) fresh.push(d.hash[i] as bigint);
      seq = seg.seq;
    }
    // Committed by earlier transactions: safe to cache at once. No eviction before this group's events are checked.
    dedupCache.add(ord, day, fresh, seq, false);
    caughtUp.set(day, seq);
  }

  /**
   * The dictionary ids of each job's strings (see idsOf): from the project's caches, the rest resolved in the
   * transaction. The resolved entries join the caches only after the commit (publish).
   */
  async function resolveIds(trx: Kysely<DB>, ord: number, todo: GroupJob[]): Promise<{ ids: BatchIds[]; entries: NewEntries }> {
    const cache = cacheFor(ord);
    const pathMiss = new Set<string>();
    const visitorMiss = new Set<string>();
    const uaMiss = new Set<string>();
    const ids = todo.map(({ job: { batch }, keep }) => ({
      pids: idsOf(batch, keep, R_PATH, batch.known?.paths, cache.paths, pathMiss),
      vords: idsOf(batch, keep, R_VKEY, batch.known?.visitors, cache.visitors, visitorMiss),
      uas: idsOf(batch, keep, R_UA, batch.known?.userAgents, cache.userAgents, uaMiss),
    }));
    const paths = await resolvePaths(trx, ord, pathMiss);
    const indexed: { key: string; ord: number }[] = [];
    const chunks: AddedChunk[] = [];
    const visitors = await resolveVisitors(trx, ord, visitorMiss, indexed, chunks);
    const userAgents = await resolveUserAgents(trx, ord, uaMiss);
    for (let j = 0; j < todo.length; j++) {
      const b = (todo[j] as GroupJob).job.batch;
      const { pids, vords, uas } = ids[j] as BatchIds;
      fillMisses(pids, b, paths);
      fillMisses(vords, b, visitors);
      fillMisses(uas, b, userAgents);
    }
    return { ids, entries: { paths, visitors, userAgents, indexed, chunks } };
  }

  /** After the commit (never before: a rolled-back id must not be cached), the group's new dictionary entries join the caches. */
  function publish(newEntries: Map<number, NewEntries>): void {
    for (const [ord, e] of newEntries) {
      const cache = cacheFor(ord);
      for (const [k, v] of e.paths) cache.paths.set(k, v);
      const visitors = cache.visitors;
      if (visitors !== null) for (const [k, v] of e.visitors) visitors.set(k, v);
      for (const [k, v] of e.userAgents) cache.userAgents.set(k, v);
      if (cache.visitorIndex) indexAdded(cache.visitorIndex, e.indexed, e.chunks);
      caches.resize(ord);
    }
  }

  /** Writes several batches in one transaction; returns rows inserted per job. */
  async function writeGroup(jobs: Job[]): Promise<number[]> {
    const inserted = jobs.map(() => 0);
    const ords = [...new Set(jobs.map((j) => j.ord))].sort((a, b) => a - b);
    const newEntries = new Map<number, NewEntries>();
    const learned: { projectId: string; learned: Learned }[] = [];
    const dedupAfter: { ord: number; seq: number; caughtUp: Map<number, number>; segments: Map<number, SegmentEvent[]> }[] = [];
    await db.kysely.transaction().execute(async (trx) => {
      // The version bumps come first on purpose: they take the write lock at once. On SQLite a transaction
      // that read first and writes later fails (SQLITE_BUSY) when another process committed in between; one
      // that writes first waits its turn (busy_timeout). On PostgreSQL they order concurrent writers of a
      // project (in ord order), so their dictionary and visit inserts cannot deadlock.
      // The new version is also the seq of the segments this transaction appends (tables.ts).
      const versions = new Map<number, number>();
      for (const ord of ords) versions.set(ord, await segmentStore.bumpVersionReturning(trx, ord));

      for (const ord of ords) {
        const caughtUp = new Map<number, number>();
        const unscopedNew: string[] = [];
        const todo = await jobsToWrite(trx, ord, jobs, caughtUp, unscopedNew);
        await segmentStore.insertDedupKeys(trx, ord, unscopedNew.sort());
        const { ids, entries } = await resolveIds(trx, ord, todo);
        newEntries.set(ord, entries);
        const segments = new Map<number, SegmentEvent[]>();
        const dataDays = new Set<number>();
        for (let j = 0; j < todo.length; j++) {
          const t = todo[j] as GroupJob;
          const b = t.job.batch;
          const batchIds = ids[j] as BatchIds;
          if (b.known && opts.onLearned) learned.push({ projectId: t.job.projectId, learned: learnedOf(b, b.known, batchIds) });
          inserted[t.index] = eventRows(t.job.source, b, t, batchIds, segments, dataDays);
        }
        const seq = versions.get(ord) as number;
        const days = [...segments.keys()].sort((a, b) => a - b);
        for (const day of days) {
          const events = segments.get(day) as SegmentEvent[];
          await segmentStore.insertSegment(trx, ord, day, seq, events.length, encodeSegment(events));
        }
        // The day summaries (summary-service.ts) are valid for one version of their day: a new one for each day touched.
        await summaryStore.bumpDayVersions(
          trx,
          ord,
          days.map((day) => ({ day, hasData: dataDays.has(day) })),
        );
        dedupAfter.push({ ord, seq, caughtUp, segments });
      }
    });
    publish(newEntries);
    // The hashes this transaction stored join the days it caught up (others are read from their segments later).
    for (const { ord, seq, caughtUp, segments } of dedupAfter) {
      for (const day of caughtUp.keys()) {
        const hashes: bigint[] = [];
        for (const e of segments.get(day) ?? []) if (e.dedup !== null) hashes.push(e.dedup);
        dedupCache.add(ord, day, hashes, seq, false);
      }
    }
    dedupCache.trim();
    if (opts.onLearned) for (const l of learned) opts.onLearned(l.projectId, l.learned);
    return inserted;
  }

  const stats = newWriterStats();
  /** Groups committed and waiting for `durable`. */
  const syncing = new Set<Promise<void>>();
  /** Resolves the jobs of a committed group: at once, or once what it committed is durable (opts.durable). */
  function settle(jobs: Job[], counts: number[]): void {
    if (!opts.durable) {
      for (let i = 0; i < jobs.length; i++) (jobs[i] as Job).resolve(counts[i] as number);
      return;
    }
    const committed = performance.now();
    const p = opts.durable().then(
      () => {
        observeSeconds(stats.syncSeconds, (performance.now() - committed) / 1000);
        for (let i = 0; i < jobs.length; i++) (jobs[i] as Job).resolve(counts[i] as number);
      },
      (err: unknown) => {
        for (const j of jobs) j.reject(err);
      },
    );
    syncing.add(p);
    void p.finally(() => syncing.delete(p));
  }

  /** writeGroup, counted in `stats` when it commits. */
  async function countedGroup(group: Job[], events: number): Promise<number[]> {
    const started = performance.now();
    const counts = await writeGroup(group);
    observeSeconds(stats.transactionSeconds, (performance.now() - started) / 1000);
    stats.groups++;
    stats.events += events;
    return counts;
  }

  /** The single writer of this writer: takes everything queued (up to GROUP_MAX_EVENTS) per transaction. */
  async function drainLoop(): Promise<void> {
    for (;;) {
      // Yield one event-loop turn first: batches whose requests arrived meanwhile (SQLite work is
      // synchronous, so they queue up during a transaction) are taken in and join this group.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (tasks.length > 0) await (tasks.shift() as () => Promise<void>)();
      if (queue.length === 0) break;
      const group: Job[] = [];
      let n = 0;
      while (queue.length > 0 && (group.length === 0 || n + (queue[0] as Job).batch.n <= GROUP_MAX_EVENTS)) {
        const j = queue.shift() as Job;
        group.push(j);
        n += j.batch.n;
      }
      let counts: number[];
      try {
        counts = await countedGroup(group, n);
      } catch (err) {
        if (group.length === 1) {
          (group[0] as Job).reject(err);
          continue;
        }
        for (const j of group) {
          let one: number[];
          try {
            one = await countedGroup([j], j.batch.n);
          } catch (e) {
            j.reject(e);
            continue;
          }
          settle([j], one);
        }
        continue;
      }
      settle(group, counts);
    }
  }

  function drain(): void {
    if (draining) return;
    draining = drainLoop().finally(() => {
      draining = null;
      if (queue.length > 0 || tasks.length > 0) drain();
    });
  }

  return {
    mode: 'thread',

    async write(projectId, source, batch) {
      if (batch.n === 0) return 0;
      splitStrings(batch);
      const ord = await projectOrd(projectId);
      await loadVisitorIndex(ord);
      return new Promise<number>((resolve, reject) => {
        queue.push({ projectId, ord, source, batch, resolve, reject });
        drain();
      });
    },

    swapCompaction: (plan, merged) => task(() => swapCompaction(db.kysely, plan, merged)),
    persistSummaries: (rows) => task(() => summaryStore.upsertSummaries(db.kysely, rows)),

    clearCaches() {
      caches.clear();
      dedupCache.clear();
      loading.clear();
      projectOrds.clear();
    },

    async close() {
      while (draining || syncing.size > 0) {
        await draining;
        await Promise.allSettled([...syncing]);
      }
      // The visitor indexes' key files.
      caches.clear();
    },

    async warmUp() {},

    stats: () => copyWriterStats(stats),
  };
}
