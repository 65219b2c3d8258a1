// The analytics store over the SQL database (SQLite or PostgreSQL, the dialect differences inside src/db): raw
// events as day segments and their dictionaries written by the group-committing ingest writer; every answer
// (exports, series, agents, referrers) from day summaries derived from the segments. See analytics-store.ts for
// the contract.
import type { Config } from '../../config.ts';
import type { Database } from '../../db/index.ts';
import { ping } from '../../db/index.ts';
import { scratchDirOf } from '../../lib/scratch-file.ts';
import { BACKGROUND_THREAD_LIMITS } from '../../lib/thread-heaps.ts';
import { createExportService } from '../export/export.ts';
import { createInsightsService } from '../export/insights.ts';
import { createSummaryService } from '../export/summary-service.ts';
import { DictionaryMirror } from '../ingest/writer/dictionary-mirror.ts';
import { createWorkerWriter, groupWriterOptions, type WorkerSetup } from '../ingest/writer/ingest-worker-client.ts';
import { createGroupWriter, type IngestWriter } from '../ingest/writer/ingest-writer.ts';
import { createSegmentMerger } from '../segments/merge-worker-client.ts';
import type { AnalyticsStore, ReclassifyResult } from './analytics-store.ts';
import { compactDay, reclassifyDay, type SegmentMerge, type SwapPlan } from './segment-days.ts';
import { segmentStore } from './segment-store.ts';
import { analyticsStore as store } from './store.ts';
import { summaryStore } from './summary-store.ts';

export interface SqlAnalyticsStoreDeps {
  config: Pick<Config, 'analytics'> & Partial<Pick<Config, 'sqliteCacheMb'>>;
  db: Database;
  now: () => number;
  /** Errors of background work (summary sealing, a writer thread that cannot start), which never throws. */
  onBackgroundError?: (err: unknown) => void;
  /** Settings of the ingest writer's thread and connection (an import's bounded memory: import.ts IMPORT_WRITER). */
  writerThread?: Pick<WorkerSetup, 'dedupCacheBytes' | 'visitorCache' | 'sqliteCacheKib' | 'sqliteStatementCache' | 'resourceLimits'>;
}

/** A complete day is compacted once it has more segments than this (bench/README.md, Decisions, "Size-tiered compaction"). */
const COMPACT_MIN_SEGMENTS = 8;
/** Days compacted per step of background work at most. */
const COMPACT_DAYS = 4;
/**
 * Candidate days looked at per step at most: a day still being appended to whose tiers have nothing to merge is
 * passed over (compaction-policy.ts), so that it does not hold up the days after it.
 */
const COMPACT_CANDIDATES = 64;
/**
 * The tables whose rows the background work replaces (compaction's segments, the sealer's summaries), whose freed
 * space it reclaims (DialectCaps.reclaimSpace) at most every RECLAIM_INTERVAL_MS, and only after it replaced rows
 * (an idle or read-only process never vacuums).
 */
const RECLAIMED_TABLES = ['analytics_segments', 'analytics_day_summaries'] as const;
const RECLAIM_INTERVAL_MS = 60_000;

/** Whether the background work reclaims space now: rows were replaced since the last reclaim, which is old enough. */
export function reclaimDue(s: { replaced: number; replacedAtLast: number; now: number; last: number }): boolean {
  return s.replaced !== s.replacedAtLast && s.now - s.last >= RECLAIM_INTERVAL_MS;
}

/**
 * The writer thread's settings: the service's own (config) unless the caller gives its own (an import).
 * The statement cache is small because the writer's dictionary lookups are `in (…)` lists whose every length is
 * a statement of its own, up to thousands of parameters, compiled in native memory outside the V8 heaps: a cache
 * of 256 of them held ~100 MB (bench/README.md, Decisions, "32 prepared statements"). The fixed statements run on every batch, so an LRU of
 * 32 keeps them; only the rarely repeated list lengths are evicted and compiled again.
 */
export function writerSetup(deps: Pick<SqlAnalyticsStoreDeps, 'config' | 'writerThread'>, sqlitePath: string, cacheEntries: number): WorkerSetup {
  return {
    sqlitePath,
    cacheEntries,
    projectStateBytes: deps.config.analytics.projectStateMb * 2 ** 20,
    visitorKeyBytes: deps.config.analytics.visitorKeysMb * 2 ** 20,
    ...(deps.config.sqliteCacheMb !== undefined ? { sqliteCacheKib: deps.config.sqliteCacheMb * 1024 } : {}),
    sqliteStatementCache: deps.config.analytics.writerStatementCache,
    resourceLimits: BACKGROUND_THREAD_LIMITS,
    ...deps.writerThread,
  };
}

/**
 * The writer for this database: a worker thread where writes would hold up this thread and the database has
 * a file the worker's own connection can open (unless disabled), else in this thread. With a worker, `mirror`
 * (dictionary-mirror.ts) copies the dictionary ids it commits into this thread.
 */
function createWriter(deps: SqlAnalyticsStoreDeps): { writer: IngestWriter; mirror: DictionaryMirror | null } {
  const cacheEntries = deps.config.analytics.dictionaryCacheEntries ?? 100_000;
  const file = deps.db.caps.writerThread && deps.config.analytics.ingestWorker !== false ? deps.db.file : undefined;
  const setup = writerSetup(deps, file ?? '', cacheEntries);
  const inThread = () =>
    createGroupWriter(deps.db, {
      ...groupWriterOptions(setup),
      // Beside the SQLite file, as the export's spill (summary-service.ts); PostgreSQL: the temporary directory.
      visitorKeyFileDir: scratchDirOf(deps.db),
    });
  if (file !== undefined) {
    const mirror = new DictionaryMirror(cacheEntries);
    const writer = createWorkerWriter(setup, {
      fallback: inThread,
      onLearned: (projectId, learned) => mirror.learn(projectId, learned),
      onFallback: (err) => deps.onBackgroundError?.(new Error(`analytics ingest worker could not start, writing in the serving thread: ${err.message}`)),
    });
    return { writer, mirror };
  }
  return { writer: inThread(), mirror: null };
}

export function createSqlAnalyticsStore(deps: SqlAnalyticsStoreDeps) {
  const { writer, mirror } = createWriter(deps);
  const merger = createSegmentMerger();
  /** Until close() closes the writer: then summaries (close()'s sealing) are stored on this thread's connection. */
  let writerOpen = true;
  const summaries = createSummaryService({
    db: deps.db,
    // The sealer's (and reads') summary writes go through the ingest writer, like compaction's swaps: no lock
    // wait or commit in the serving thread.
    persist: (rows) => (writerOpen ? writer.persistSummaries(rows) : summaryStore.upsertSummaries(deps.db.kysely, rows)),
    cacheBytes: deps.config.analytics.daySetCacheMb * 1024 * 1024,
    now: deps.now,
    ...(deps.onBackgroundError ? { onError: deps.onBackgroundError } : {}),
  });
  const exporter = createExportService({
    db: deps.db,
    now: deps.now,
    snapshotMs: deps.config.analytics.snapshotMs,
    resultEntries: deps.config.analytics.resultCacheEntries,
    summaries,
  });
  const insights = createInsightsService({ db: deps.db, summaries });

  /**
   * Re-derives class, category, rule and the qualifying flag of every stored event of a project from its
   * stored user agent, path, Accept, method and status with the current rules, rewriting each changed day's
   * segments (and bumping its version, so its summary is rebuilt) in one transaction per day.
   */
  async function reclassify(projectId: string, onProgress?: (done: number, total: number) => void): Promise<ReclassifyResult> {
    const ord = await store.selectProjectOrd(deps.db.kysely, projectId);
    if (ord === undefined) return { scanned: 0, changed: 0 };
    const total = await segmentStore.countEvents(deps.db.kysely, ord);
    let scanned = 0;
    let changed = 0;
    onProgress?.(0, total);
    // One transaction per day: its segments rewritten with the new classes.
    for (const day of await segmentStore.selectDays(deps.db.kysely, ord)) {
      const r = await reclassifyDay(deps.db.kysely, ord, day);
      scanned += r.scanned;
      changed += r.changed;
      onProgress?.(scanned, Math.max(total, scanned));
    }
    return { scanned, changed };
  }

  /**
   * Compaction, a bounded step of background work: merges, in up to COMPACT_DAYS complete days (before today, UTC)
   * that have more than COMPACT_MIN_SEGMENTS, the segments the policy picks (compaction-policy.ts: the small ones of
   * a tier, or a quiet day whole). Returns segments merged. Each day is read without the write lock, merged in the
   * merge thread (merge-worker-client.ts), and swapped in by the ingest writer as a short transaction of its own
   * (segment-days.ts compactDay): neither the decoding and encoding nor a lock wait or a commit's fsync happens in
   * the thread that serves requests, and ingest waits only for the swap.
   * `merge`: the merge thread unless a test gives its own (to act while a compaction is in progress).
   */
  async function compact(merge: SegmentMerge = (segments) => merger.merge(segments)): Promise<number> {
    const today = Math.floor(deps.now() / 86_400_000);
    let merged = 0;
    let days = 0;
    const seen = new Map<string, number>();
    for (const { projectOrd, day, version } of await segmentStore.selectCompactable(deps.db.kysely, today, COMPACT_MIN_SEGMENTS, COMPACT_CANDIDATES)) {
      const key = `${projectOrd}:${day}`;
      seen.set(key, version);
      if (days >= COMPACT_DAYS) continue;
      // Quiet: the day's version is the one the previous step saw (nothing appended for a step): merged whole.
      const quiet = lastSeen.get(key) === version;
      const swap = async (plan: SwapPlan, m: Uint8Array[]) => {
        const r = await writer.swapCompaction(plan, m);
        // The day's events did not change: what this process holds of it is carried to the new version instead
        // of being read and decoded again from its blob (at 100M events, compaction merges each quiet day whole
        // after the ingest, through the first exports).
        if (r.swapped && r.version) summaries.carry(projectOrd, day, r.version.from, r.version.to);
        return r;
      };
      const n = await compactDay(deps.db.kysely, projectOrd, day, COMPACT_MIN_SEGMENTS, merge, swap, quiet);
      if (n > 0) days++;
      merged += n;
    }
    lastSeen = seen;
    return merged;
  }
  /** The candidate days' versions at the previous step of compaction (what makes a day quiet). */
  let lastSeen = new Map<string, number>();

  /**
   * Makes the space of the rows the background work replaced reusable (DialectCaps.reclaimSpace): without it a
   * PostgreSQL whose autovacuum is off or behind keeps every replaced segment and summary (bench/README.md, Decisions, "Reclaiming replaced rows":
   * at 10M events the segments' TOAST was 55% dead rows).
   */
  async function reclaim(): Promise<void> {
    await deps.db.caps.reclaimSpace(deps.db.kysely, RECLAIMED_TABLES);
  }
  let lastReclaim = Number.NEGATIVE_INFINITY;
  /** Segments merged and summaries sealed at the last reclaim (both replace rows). */
  let replacedAtReclaim = 0;
  let segmentsMerged = 0;
  let compactTimer: NodeJS.Timeout | null = null;
  /** Whether this process runs the background work (then close() seals what changed). */
  let background = false;
  let compacting: Promise<unknown> | null = null;

  const analytics = {
    append(projectId, source, batch) {
      // Not for a log import's batches (they carry line keys): there the preparing thread is the busier one (the
      // writer thread was idle 7 of 25 s of a 1M-line import, the main thread 3), and filling `known` was 0.9 of
      // its 22.9 µs per line, plus taking in what the writer learned (`npm run bench:import -- --profile`). The
      // writer looks those ids up in its own caches (an id missing from `known` only costs it that lookup).
      if (batch.lineKeys === undefined) mirror?.fill(projectId, batch);
      return writer.write(projectId, source, batch);
    },
    visitors: (q) => exporter.visitors(q),
    views: (q) => exporter.views(q),
    series: (projectId, q) => insights.series(projectId, q),
    agents: (projectId, q) => insights.agents(projectId, q),
    referrers: (projectId, q) => insights.referrers(projectId, q),
    reclassify,
    counters() {
      const st = summaries.stats;
      return {
        summaryDays: { memory: st.fromMemory, blob: st.fromBlob, extended: st.extended, rebuilt: st.rebuilt },
        summariesSealed: st.sealed,
        segmentsCompacted: segmentsMerged,
        ingest: writer.stats(),
      };
    },
    async health() {
      try {
        await ping(deps.db);
        return { ok: true };
      } catch (err) {
        return { ok: false, reason: `database is not reachable: ${(err as Error).message}` };
      }
    },
    warmUp: () => writer.warmUp(),
    startBackground(): void {
      background = deps.config.analytics.sealIntervalMs > 0;
      summaries.startSealer(deps.config.analytics.sealIntervalMs);
      // Compaction shares the sealer's interval (0: neither runs; segments then stay as appended).
      if (compactTimer || deps.config.analytics.sealIntervalMs <= 0) return;
      compactTimer = setInterval(() => {
        if (compacting) return;
        compacting = compact()
          .then(async (merged) => {
            segmentsMerged += merged;
            const replaced = segmentsMerged + summaries.stats.sealed;
            const now = deps.now();
            if (!reclaimDue({ replaced, replacedAtLast: replacedAtReclaim, now, last: lastReclaim })) return;
            replacedAtReclaim = replaced;
            lastReclaim = now;
            await reclaim();
          })
          .catch((err) => deps.onBackgroundError?.(err))
          .finally(() => {
            compacting = null;
          });
      }, deps.config.analytics.sealIntervalMs);
      compactTimer.unref();
    },
    clearCaches(): void {
      writer.clearCaches();
      mirror?.clear();
    },
    async close(): Promise<void> {
      if (compactTimer) clearInterval(compactTimer);
      compactTimer = null;
      await compacting;
      // The writer first (its last batches committed), then, where the background work ran, the days that
      // changed are sealed (bounded in time), so a restart reads their blobs instead of rebuilding them.
      writerOpen = false;
      await writer.close();
      await merger.close();
      await summaries.stop({ seal: background });
    },
  } satisfies AnalyticsStore;

  return {
    ...analytics,
    // The parts of this implementation, for its own tests and benchmarks (not part of AnalyticsStore).
    /** Where batches are written: a worker thread (SQLite file) or this thread. */
    get writerMode(): 'worker' | 'thread' {
      return writer.mode;
    },
    exporter,
    insights,
    summaries,
    /** One step of compaction (what the background work runs): segments merged. */
    compact,
    /** What the background work runs after compaction at most every RECLAIM_INTERVAL_MS. */
    reclaim,
  };
}

export type SqlAnalyticsStore = ReturnType<typeof createSqlAnalyticsStore>;
