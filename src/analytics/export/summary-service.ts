// Day summaries at work: load a window's summaries (memory → persisted blob → extended or rebuilt from the
// day's segments), answer from them (visitors and views exports, series, agents, referrers), and seal changed
// days in the background. What a summary holds: day-summary.ts.
//
// Correctness across processes (the invariants; tests in summary-service.test.ts):
// 1. Every transaction that changes a (project, day)'s segments bumps that day's version
//    (analytics_day_versions): ingest appends (one upsert per touched day, in its write transaction),
//    reclassification and compaction replace, and also set the day's `rewritten` to the version they made.
// 2. A summary is valid for exactly one version. A window is loaded in one read transaction (repeatable read on
//    PostgreSQL; a SQLite transaction is a snapshot): the versions first, then whatever a day needs (blob,
//    segments) from the same snapshot, so a summary always matches its version and one answer reads one
//    snapshot of every day it counts.
// 3. Extension: a summary S (version v, built from the segments with seq <= S.maxSeq) may be extended to the
//    current version V by summarising the segments with seq > S.maxSeq and merging, only when the day's
//    `rewritten` <= v (no replacement since S's snapshot). Why that counts every event exactly once:
//    - an appended segment's seq is its transaction's new project version, taken under the project's row lock
//      held to its commit, so it is above every seq committed before it, and a snapshot that sees seq q sees
//      every smaller appended seq too; the segments S did not see are therefore exactly those above S.maxSeq;
//    - replacements reuse seqs at or below S.maxSeq (their events would be counted twice or lost), but they
//      set `rewritten` above v, which forbids the extension: the day is rebuilt from its segments instead.
// Sealing: a background loop (API processes) persists the summary of a day whose stored blob is missing or
// out of date when (a) its version has stayed the same for a whole interval, (b) it has no stored blob at all,
// or (c) its stored blob is SEAL_BEHIND or more versions behind (the current day of a busy site changes all the
// time: it is still sealed every so often, so the first read after a restart extends its blob by a bounded
// number of segments — each version is one transaction, so at most that many segments plus what came since —
// instead of rebuilding it). At most `sealBatch` days per tick (then the next batch after a yield). close()
// seals every stale day within a bounded time (`closeSealMs`), so a clean restart finds them stored. Several
// processes may seal at once: a blob only ever replaces an older version (upsertSummary's condition).
import type { Kysely } from 'kysely';
import type { Database } from '../../db/index.ts';
import type { DB } from '../../db/schema.ts';
import { scratchDirOf } from '../../lib/scratch-file.ts';
import { isStaticAsset } from '../classify/normalize.ts';
import { ByteLru } from '../lru.ts';
import { decodeSegment } from '../segments/codec.ts';
import { segmentStore } from '../store/segment-store.ts';
import type { DayRange } from '../store/store.ts';
import { type DayVersion, type StoredSummary, type SummaryRow, summaryStore as ss } from '../store/summary-store.ts';
import { FACET_AGENT, FACET_REFERRER } from '../store/tables.ts';
import { createWindowCounter } from './count-threads.ts';
import {
  buildSummary,
  type DaySummary,
  DaySummaryFormatErrors,
  decodeSummary,
  decodeSummaryVisitors,
  encodeSummary,
  mergeSummaries,
  type SeqSegment,
  segmentPathIds,
  summaryBytes,
  summaryVisitorBytes,
} from './day-summary.ts';
import { type DaySet, DaySetIdRangeError, daySetBytes, type WindowCounts } from './daysets.ts';
import { countFacet, type FacetCount } from './facet-counts.ts';
import { PathDictionary } from './path-order.ts';
import { RangeSpill, SPILL_BUDGET } from './range-spill.ts';
import { EMPTY_RESULT, type ExportResult } from './rows.ts';

export interface SummaryServiceDeps {
  db: Database;
  /** Decoded summaries kept in memory, in bytes. */
  cacheBytes?: number;
  /** Path texts kept in memory (characters, all projects). */
  pathCacheChars?: number;
  /** Days sealed per background tick at most. */
  sealBatch?: number;
  /** A changing day is sealed once its stored summary is this many versions behind (or has none). */
  sealBehind?: number;
  /** How long close() may spend sealing the days that changed (ms). */
  closeSealMs?: number;
  /** The clock of close()'s bound (tests inject one). */
  now?: () => number;
  onError?: (err: unknown) => void;
  /**
   * Stores summary blobs (summaryStore.upsertSummaries, one transaction): on `db` unless given, e.g. by the ingest
   * writer (IngestWriter.persistSummaries), so that no lock wait or commit happens in the thread that serves requests.
   */
  persist?: (rows: SummaryRow[]) => Promise<void>;
  /** Threads that count a large window's visitors (count-threads.ts): 2, or 1 (default: 2 with 2 or more CPUs). */
  countThreads?: number;
  /** Windows of fewer pairs are counted in one thread (default THREAD_MIN_PAIRS; tests: 0). */
  countMinPairs?: number;
  /** Bytes of sets a long window decodes and holds at once before it is counted in ranges of paths (range-spill.ts; default SPILL_BUDGET). */
  spillBudget?: number;
}

export interface LoadStats {
  days: number;
  fromMemory: number;
  fromBlob: number;
  extended: number;
  rebuilt: number;
}

export interface Window {
  /** The summaries of the range's days that have segments, ascending by day. */
  days: DaySummary[];
  /** Their versions (same order). */
  versions: DayVersion[];
  stats: LoadStats;
}

const dayKey = (projectOrd: number, day: number) => `${projectOrd}:${day}`;

const PATH_CHUNK = 1000;

/**
 * Versions a stored summary may lag behind a changing day before the sealer persists it anyway: a read after a
 * restart then decodes at most about this many segments of that day (plus those of the last interval) to
 * extend it. Each seal of a busy current day writes its blob again (once per SEAL_BEHIND ingest transactions at most).
 */
export const SEAL_BEHIND = 64;

/**
 * Windows of more days than this (and open ones) are counted from visitor sets streamed from their blobs
 * (loadVisitorSets): a year of a large site's summaries does not fit the cache, and holding them all at once
 * (views, facets and the blobs read) took the 100M-event year's export to 1.6-1.9 GB. 62: two months, so the
 * 30-day window (and the cache that keeps it warm) is unchanged.
 */
export const LONG_WINDOW_DAYS = 62;

/** Days whose blobs loadVisitorSets reads per query: the blobs held at once while it decodes. */
const STREAM_DAYS = 8;

function chunk<T>(xs: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}

/** Summaries at work (see above). A factory, long only as a module is: its caches and the short functions over them. */
export function createSummaryService(deps: SummaryServiceDeps) {
  // 128 MiB by default (config daySetCacheMb): at 10M events over a year, 256 took the SQLite service's peak RSS
  // while ingesting over 1 GB (1,047-1,053 MB against 923 at 128) for no faster 365-day export (bench/README.md, Decisions, "Day-summary cache 128 MiB").
  const summaries = new ByteLru<DaySummary>(deps.cacheBytes ?? 128 * 1024 * 1024);
  /**
   * Visitor sets long windows decoded from blobs (loadVisitorSets), half as many bytes as `summaries`, apart from
   * it so that a year streamed through does not push out the short windows' days. A load holds at most this
   * cache's size of it (the days it found there, then those it admits): a window that fits is then read from
   * memory; a larger one keeps the same part of itself from one load to the next instead of replacing it (the days
   * found there stay held by the load, so replacing them held both: range-spill.ts).
   */
  const longSets = new ByteLru<DaySet>(Math.floor((deps.cacheBytes ?? 128 * 1024 * 1024) / 2));
  const counter = createWindowCounter({
    ...(deps.countThreads === undefined ? {} : { threads: deps.countThreads }),
    ...(deps.countMinPairs === undefined ? {} : { minPairs: deps.countMinPairs }),
  });
  /** Where a long window's spill file goes: beside the SQLite file (on disk), else the system's temporary directory. */
  const spillDir = scratchDirOf(deps.db);
  const dictionaries = new Map<number, PathDictionary>();
  /** Per project, whether a path id names a static asset (a path's text never changes). */
  const assets = new Map<number, Map<number, boolean>>();
  let assetEntries = 0;
  let pathChars = 0;
  const maxPathChars = deps.pathCacheChars ?? 32 * 1024 * 1024;
  const sealBatch = deps.sealBatch ?? 16;
  const sealBehind = deps.sealBehind ?? SEAL_BEHIND;
  const closeSealMs = deps.closeSealMs ?? 5000;
  const now = deps.now ?? Date.now;
  /** Stale days seen by the previous seal tick, with their version then. */
  let lastStale = new Map<string, number>();
  /** Days whose visitors do not fit a day set, with the version that failed. */
  const unsealable = new Map<string, number>();
  const stats = { loads: 0, fromMemory: 0, fromBlob: 0, extended: 0, rebuilt: 0, sealed: 0, persistedOnRead: 0, rangedWindows: 0 };
  /** Summaries rebuilt by reads being persisted, one write after the other, after the reads answered. */
  let persisting: Promise<void> = Promise.resolve();
  const persist = deps.persist ?? ((rows: SummaryRow[]) => ss.upsertSummaries(deps.db.kysely, rows));

  /**
   * Persists summaries a read rebuilt from all their segments (a cold process, or several API processes, would
   * otherwise each rebuild them until the sealer gets there; bench:insights, cold agents after a cold series).
   * Extended ones (the changing current day, as a rule) are left to the sealer. A blob never replaces a newer one.
   */
  function persistLater(projectOrd: number, rebuilt: DaySummary[]): void {
    if (rebuilt.length === 0) return;
    persisting = persisting
      .then(async () => {
        await persist(rebuilt.map((s) => ({ projectOrd, day: s.day, version: s.version, data: encodeSummary(s) })));
        stats.persistedOnRead += rebuilt.length;
      })
      .catch((err) => deps.onError?.(err));
  }

  function remember(projectOrd: number, s: DaySummary): void {
    summaries.set(dayKey(projectOrd, s.day), s, summaryBytes(s));
  }

  /**
   * Compaction moved a day from version `from` to `to` without changing its events (segment-days.ts
   * swapCompaction): what memory holds of it at `from` is exact at `to` and is re-labelled (new objects: a load
   * in progress keeps what it read). Invariant: called only with the versions of a swap made; a summary held at
   * any other version is left as it is (the next read resolves it).
   */
  function carry(projectOrd: number, day: number, from: number, to: number): void {
    const key = dayKey(projectOrd, day);
    const s = summaries.get(key);
    if (s && s.version === from) summaries.set(key, { ...s, version: to, visitors: { ...s.visitors, version: to } }, summaryBytes(s));
    const set = longSets.get(key);
    if (set && set.version === from) longSets.set(key, { ...set, version: to }, daySetBytes(set));
  }

  /** The static-asset answer of every path id of `segments` (texts read in the caller's transaction when not known). */
  async function assetsFor(q: Kysely<DB>, projectOrd: number, segments: readonly SeqSegment[]): Promise<(pathId: number) => boolean> {
    let known = assets.get(projectOrd);
    if (!known) {
      known = new Map();
      assets.set(projectOrd, known);
    }
    const misses = [...segmentPathIds(segments)].filter((id) => !known.has(id));
    // A cold process about to need most of the project's paths reads them all at once.
    const rows =
      misses.length > 2000
        ? await ss.selectAllPathTexts(q, projectOrd)
        : (await Promise.all(chunk(misses, PATH_CHUNK).map((c) => ss.selectPathTexts(q, projectOrd, c)))).flat();
    for (const r of rows) {
      if (known.has(r.id)) continue;
      known.set(r.id, isStaticAsset(r.path));
      assetEntries++;
    }
    const answers = known;
    if (assetEntries > 4_000_000) {
      // Bounded: forget every project's answers (this call keeps its own map).
      assets.clear();
      assetEntries = 0;
    }
    return (id) => {
      const a = answers.get(id);
      if (a === undefined) throw new Error(`analytics path ${id} has no text`);
      return a;
    };
  }

  /** Summarises a day's segments above `afterSeq` (all of them: -1), read in the caller's transaction. */
  async function summarise(q: Kysely<DB>, projectOrd: number, v: DayVersion, afterSeq: number): Promise<DaySummary> {
    const segments = (await segmentStore.selectDaySegments(q, projectOrd, v.day, afterSeq)).map((s) => ({ seq: s.seq, segment: decodeSegment(s.data) }));
    return buildSummary(v.day, v.version, segments, await assetsFor(q, projectOrd, segments));
  }

  /** A summary of day `v` at its version from `older` (a summary of an earlier version), or null when the day was rewritten since. */
  async function extend(q: Kysely<DB>, projectOrd: number, v: DayVersion, older: DaySummary): Promise<DaySummary | null> {
    // Invariant 3 (above): no replacement since `older`'s snapshot, so the segments above its maxSeq are exactly those it lacks.
    if (v.rewritten > older.version || older.version > v.version) return null;
    return mergeSummaries(older, await summarise(q, projectOrd, v, older.maxSeq), v.version);
  }

  /** Decodes a stored blob (undefined: none, or one this version cannot read: built from the segments instead). */
  function decodeBlob(b: StoredSummary | undefined): DaySummary | undefined {
    if (!b) return undefined;
    try {
      return decodeSummary(b.day, b.version, b.data);
    } catch (err) {
      if (!DaySummaryFormatErrors.some((E) => err instanceof E)) throw err;
      return undefined;
    }
  }

  /**
   * The summary of day `m` at its version, read in the caller's transaction `q`, when memory does not hold it:
   * the stored blob when it is of that version, else the newer of memory's and the blob's extended by the segments
   * appended since, else rebuilt from all the day's segments (added to `rebuilt`, persisted later).
   */
  async function resolve(
    q: Kysely<DB>,
    projectOrd: number,
    m: DayVersion,
    blob: DaySummary | undefined,
    st: LoadStats,
    rebuilt: DaySummary[],
  ): Promise<DaySummary> {
    if (blob && blob.version === m.version) {
      st.fromBlob++;
      return blob;
    }
    const mem = summaries.get(dayKey(projectOrd, m.day));
    const older = mem && (!blob || mem.version > blob.version) ? mem : blob;
    let s = older ? await extend(q, projectOrd, m, older) : null;
    if (s) st.extended++;
    else {
      s = await summarise(q, projectOrd, m, -1);
      st.rebuilt++;
      rebuilt.push(s);
    }
    return s;
  }

  /** Adds a load's figures to the service's and has the days it rebuilt persisted. */
  function finishLoad(projectOrd: number, st: LoadStats, rebuilt: DaySummary[]): void {
    stats.loads++;
    stats.fromMemory += st.fromMemory;
    stats.fromBlob += st.fromBlob;
    stats.extended += st.extended;
    stats.rebuilt += st.rebuilt;
    persistLater(projectOrd, rebuilt);
  }

  /**
   * The day summaries of a window (days with segments only), consistent with one snapshot of the data.
   * `keepNew` false: a day not already in memory is not put there (the sealer's days; see sealOnce).
   */
  async function loadWindow(projectOrd: number, range: DayRange, keepNew = true): Promise<Window> {
    const st: LoadStats = { days: 0, fromMemory: 0, fromBlob: 0, extended: 0, rebuilt: 0 };
    const rebuilt: DaySummary[] = [];
    const { days, versions } = await deps.db.kysely
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const versions = await ss.selectDayVersions(trx, projectOrd, range);
        const out = new Map<number, DaySummary>();
        const missing: DayVersion[] = [];
        /** Days missing at their version that memory holds at an older one. */
        const held = new Set<number>();
        for (const v of versions) {
          const s = summaries.get(dayKey(projectOrd, v.day));
          if (s && s.version === v.version) out.set(v.day, s);
          else {
            missing.push(v);
            if (s) held.add(v.day);
          }
        }
        st.fromMemory = out.size;
        if (missing.length > 0) {
          const blobs = new Map<number, DaySummary>();
          for (const b of await ss.selectSummaries(
            trx,
            projectOrd,
            missing.map((m) => m.day),
            deps.db.caps,
          )) {
            // A blob this version cannot read (another format): built from the segments by resolve.
            const d = decodeBlob(b);
            if (d) blobs.set(b.day, d);
          }
          for (const m of missing) {
            const s = await resolve(trx, projectOrd, m, blobs.get(m.day), st, rebuilt);
            out.set(m.day, s);
            if (keepNew || held.has(m.day)) remember(projectOrd, s);
          }
        }
        return { days: versions.map((v) => out.get(v.day) as DaySummary), versions };
      });
    st.days = days.length;
    finishLoad(projectOrd, st, rebuilt);
    return { days, versions, stats: st };
  }

  /**
   * The visitor sets of a long window's days (those with segments), consistent with one snapshot as loadWindow's
   * (same transaction, same per-day resolution), in bounded memory beyond the sets themselves: memory's summaries
   * (or `longSets`) holds the day's version; else the day's blob, read STREAM_DAYS days at a time, of which only
   * the visitor set is decoded and kept (into `longSets` up to its size per load); a day without a current readable
   * blob goes through resolve (extended or rebuilt, cached, rebuilt ones persisted later), as in loadWindow.
   * With `spill`, each set goes to it as it is had (resident: a cache holds it) and `sets` is empty: the sets decoded
   * and not cached are then held a range of paths at a time (range-spill.ts).
   */
  async function loadVisitorSets(projectOrd: number, range: DayRange, spill?: RangeSpill): Promise<{ sets: DaySet[]; stats: LoadStats }> {
    const st: LoadStats = { days: 0, fromMemory: 0, fromBlob: 0, extended: 0, rebuilt: 0 };
    const rebuilt: DaySummary[] = [];
    const sets = await deps.db.kysely
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const versions = await ss.selectDayVersions(trx, projectOrd, range);
        const out: DaySet[] = [];
        const keep = (set: DaySet, resident: boolean): void => {
          if (spill) spill.add(set, resident);
          else out.push(set);
        };
        let fromMemory = 0;
        /** Bytes of `longSets` this load holds (its hits, then what it admits): at most the cache's size. */
        let admitted = 0;
        /** A set did not fit what this load may hold of `longSets`: the later ones are not offered to it. */
        let cacheFull = false;
        const missing: DayVersion[] = [];
        for (const v of versions) {
          const key = dayKey(projectOrd, v.day);
          const s = summaries.get(key);
          if (s && s.version === v.version) {
            keep(s.visitors, true);
            fromMemory++;
          } else {
            const set = longSets.get(key);
            if (set && set.version === v.version) {
              keep(set, true);
              admitted += daySetBytes(set);
              fromMemory++;
            } else missing.push(v);
          }
        }
        st.fromMemory = fromMemory;
        spill?.expect(missing.length);
        for (let i = 0; i < missing.length; i += STREAM_DAYS) {
          const part = missing.slice(i, i + STREAM_DAYS);
          const stored = new Map<number, StoredSummary>();
          for (const b of await ss.selectSummaries(
            trx,
            projectOrd,
            part.map((m) => m.day),
            deps.db.caps,
          ))
            stored.set(b.day, b);
          for (const m of part) {
            const b = stored.get(m.day);
            if (b && b.version === m.version) {
              try {
                if (spill && cacheFull) {
                  // Not kept in memory: cut into the spill's ranges from the blob's bytes.
                  spill.addEncoded(m.day, m.version, summaryVisitorBytes(b.data));
                  st.fromBlob++;
                  continue;
                }
                const set = decodeSummaryVisitors(m.day, m.version, b.data);
                st.fromBlob++;
                const bytes = daySetBytes(set);
                const admit = admitted + bytes <= longSets.maxBytes;
                if (admit) {
                  admitted += bytes;
                  longSets.set(dayKey(projectOrd, m.day), set, bytes);
                } else cacheFull = true;
                keep(set, admit);
                continue;
              } catch (err) {
                if (!DaySummaryFormatErrors.some((E) => err instanceof E)) throw err;
              }
            }
            const s = await resolve(trx, projectOrd, m, b && b.version !== m.version ? decodeBlob(b) : undefined, st, rebuilt);
            remember(projectOrd, s);
            keep(s.visitors, true);
          }
        }
        return out;
      });
    st.days = st.fromMemory + st.fromBlob + st.extended + st.rebuilt;
    finishLoad(projectOrd, st, rebuilt);
    return { sets, stats: st };
  }

  /** The project's path dictionary, with every id of `ids` in it (a path id's text never changes). */
  async function pathDictionary(projectOrd: number, ids: ArrayLike<number>): Promise<PathDictionary> {
    let dict = dictionaries.get(projectOrd);
    if (!dict) {
      dict = new PathDictionary();
      dictionaries.set(projectOrd, dict);
    }
    const misses: number[] = [];
    for (let i = 0; i < ids.length; i++) if (!dict.has(ids[i] as number)) misses.push(ids[i] as number);
    if (misses.length > 0) {
      const before = dict.chars;
      const rows =
        misses.length > 2000
          ? await ss.selectAllPathTexts(deps.db.kysely, projectOrd)
          : (await Promise.all(chunk(misses, PATH_CHUNK).map((c) => ss.selectPathTexts(deps.db.kysely, projectOrd, c)))).flat();
      for (const r of rows) dict.add(r.id, r.path);
      pathChars += dict.chars - before;
      for (const id of misses) if (!dict.has(id)) throw new Error(`analytics path ${id} has no text`);
    }
    if (pathChars > maxPathChars) {
      // Over the bound: forget the other projects' texts (this one's are needed right now).
      for (const [ord, other] of dictionaries) {
        if (ord === projectOrd) continue;
        pathChars -= other.chars;
        dictionaries.delete(ord);
      }
    }
    return dict;
  }

  /** Exact distinct visitors per path and site-wide over a day range (the visitors export). */
  async function visitors(projectOrd: number, range: DayRange): Promise<ExportResult & { stats: LoadStats }> {
    const long = range.fromDay === null || range.toDay === null || range.toDay - range.fromDay > LONG_WINDOW_DAYS;
    let counts: WindowCounts;
    let st: LoadStats;
    if (long) {
      counter.prepare();
      // The sets decoded and not cached are held a range of paths at a time past SPILL_BUDGET (bench/README.md,
      // Decisions, "A long window counted a range of paths at a time").
      const spill = new RangeSpill(deps.spillBudget ?? SPILL_BUDGET, spillDir);
      try {
        st = (await loadVisitorSets(projectOrd, range, spill)).stats;
        counts = await counter.countRanges(spill);
        if (spill.ranges > 1) stats.rangedWindows++;
      } finally {
        spill.close();
      }
    } else {
      const w = await loadWindow(projectOrd, range);
      st = w.stats;
      counts = await counter.count(w.days.map((d) => d.visitors));
    }
    const dict = await pathDictionary(projectOrd, counts.pathIds);
    return { totals: counts.totals, rows: dict.orderedRows(counts), stats: st };
  }

  /** Qualifying views per path (human, AI, both) and in total over a day range (the views export). */
  async function views(projectOrd: number, range: DayRange): Promise<ExportResult> {
    const w = await loadWindow(projectOrd, range);
    const byPath = new Map<number, [number, number]>();
    let human = 0;
    let ai = 0;
    for (const d of w.days) {
      const v = d.views;
      for (let k = 0; k < v.pathIds.length; k++) {
        const h = v.human[k] as number;
        const a = v.ai[k] as number;
        human += h;
        ai += a;
        const c = byPath.get(v.pathIds[k] as number);
        if (c) {
          c[0] += h;
          c[1] += a;
        } else byPath.set(v.pathIds[k] as number, [h, a]);
      }
    }
    if (byPath.size === 0) return EMPTY_RESULT;
    const pathIds = Float64Array.from(byPath.keys());
    const hs = new Float64Array(pathIds.length);
    const as = new Float64Array(pathIds.length);
    const ts = new Float64Array(pathIds.length);
    pathIds.forEach((p, i) => {
      const c = byPath.get(p) as [number, number];
      hs[i] = c[0];
      as[i] = c[1];
      ts[i] = c[0] + c[1];
    });
    const dict = await pathDictionary(projectOrd, pathIds);
    return { totals: { human, ai, total: human + ai }, rows: dict.orderedRows({ pathIds, human: hs, ai: as, total: ts }) };
  }

  /** Per-name counts of one facet over a day range. */
  async function facet(projectOrd: number, range: DayRange, kind: number): Promise<FacetCount[]> {
    return countFacet((await loadWindow(projectOrd, range)).days, kind);
  }

  /**
   * Persists up to one batch of days whose stored summary is out of date and that are due (see Sealing above);
   * `all`: every stale day is due (close()); `deadline` (the `now` clock): stop there. Returns days sealed.
   */
  async function sealOnce(opts: { all?: boolean; batch?: number; deadline?: number; done?: Set<string> } = {}): Promise<number> {
    const batch = opts.batch ?? sealBatch;
    const stale = await ss.selectStaleDays(deps.db.kysely, 1000);
    const seen = new Map<string, number>();
    const rows: SummaryRow[] = [];
    let sealed = 0;
    for (const d of stale) {
      const key = dayKey(d.projectOrd, d.day);
      seen.set(key, d.version);
      const due = opts.all || d.storedVersion === null || d.version - d.storedVersion >= sealBehind || lastStale.get(key) === d.version;
      if (sealed >= batch || !due || unsealable.get(key) === d.version || opts.done?.has(key)) continue;
      if (opts.deadline !== undefined && now() >= opts.deadline) break;
      // A turn of the event loop between days: on SQLite the reads and the summarising below are synchronous, so
      // without it a batch held the serving thread from its first day to its last (requests, and the ingest
      // writer's replies, waited for all of it: bench:compaction --work seal).
      await new Promise<void>((resolve) => setImmediate(resolve));
      let s: DaySummary | undefined;
      // Kept in memory only if it was there (a read asked for it): a day the sealer builds is read again, if ever,
      // from its blob, and the next seal of a day still changing extends the blob it wrote. Invariant: memory is a
      // cache (exact at its version), so leaving a summary out changes no answer.
      // Why: a year ingested in time order seals each day as it ends. Finished days kept filled the cache (128 MiB)
      // with days nobody read (10M events over a year, bench:scale --memory, SQLite: the serving thread's buffers
      // at the ingest's peak 112 MB with them, 19 without); so did days kept for still changing fast, which a replay
      // seals as they end and no later seal replaces: at 30M events over 110 days, the cache held ~30 such days
      // (bench/README.md, Decisions, "does not cache the finished days" and "nor the changing ones").
      try {
        // Through loadWindow: memory, else extended or rebuilt in one snapshot.
        s = (await loadWindow(d.projectOrd, { fromDay: d.day, toDay: d.day + 1 }, false)).days[0];
      } catch (err) {
        // Visitors beyond a day set's range: answers for this day fail; do not retry it until it changes.
        if (!(err instanceof DaySetIdRangeError)) throw err;
        if (unsealable.size > 10_000) unsealable.clear();
        unsealable.set(key, d.version);
        continue;
      }
      if (!s) continue;
      rows.push({ projectOrd: d.projectOrd, day: d.day, version: s.version, data: encodeSummary(s) });
      opts.done?.add(key);
      sealed++;
    }
    // The batch in one transaction (one commit, not one per day).
    await persist(rows);
    stats.sealed += rows.length;
    lastStale = seen;
    return sealed;
  }

  /**
   * Seals every stale day once (a day another process keeps changing is not chased) until none is left or
   * `closeSealMs` (by the `now` clock) has passed. Returns days sealed.
   */
  async function sealAll(): Promise<number> {
    const deadline = now() + closeSealMs;
    const done = new Set<string>();
    let total = 0;
    for (;;) {
      const n = await sealOnce({ all: true, batch: 256, deadline, done });
      total += n;
      if (n === 0 || now() >= deadline) return total;
    }
  }

  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;

  /** Runs sealOnce every `intervalMs` until stop(); never throws (errors go to onError). */
  function startSealer(intervalMs: number): void {
    if (intervalMs <= 0 || timer || stopped) return;
    const tick = () => {
      timer = null;
      if (stopped) return;
      running = (async () => {
        try {
          // Keep going while a whole batch was sealed (a backlog), yielding between batches.
          while (!stopped && (await sealOnce()) >= sealBatch) await new Promise((r) => setImmediate(r));
        } catch (err) {
          deps.onError?.(err);
        }
      })().finally(() => {
        running = null;
        if (!stopped) {
          timer = setTimeout(tick, intervalMs);
          timer.unref();
        }
      });
    };
    timer = setTimeout(tick, intervalMs);
    timer.unref();
  }

  /** Stops the sealer; with `seal`, then persists the days that changed (sealAll: bounded in time, errors to onError). */
  async function stop(opts: { seal?: boolean } = {}): Promise<void> {
    stopped = true;
    if (timer) clearTimeout(timer);
    timer = null;
    await running;
    await persisting;
    await counter.close();
    if (opts.seal) await sealAll().catch((err) => deps.onError?.(err));
  }

  return {
    loadWindow,
    loadVisitorSets,
    visitors,
    views,
    /** AI assistants and crawlers by rule name over a day range. */
    agents: (projectOrd: number, range: DayRange) => facet(projectOrd, range, FACET_AGENT),
    /** Referrer hosts of qualifying views over a day range. */
    referrers: (projectOrd: number, range: DayRange) => facet(projectOrd, range, FACET_REFERRER),
    /** The versions of a project's days in a range (which have data: `hasData`). */
    dayVersions: (projectOrd: number, range: DayRange) => ss.selectDayVersions(deps.db.kysely, projectOrd, range),
    sealOnce,
    sealAll,
    startSealer,
    stop,
    stats,
    /** A compaction swap moved a day from one version to the next, its events unchanged (see carry). */
    carry,
    /** Resolves once the summaries reads rebuilt so far are persisted (tests). */
    persisted: (): Promise<void> => persisting,
    /** Forgets every in-memory summary and path text (tests: a cold process). */
    clear(): void {
      summaries.clear();
      longSets.clear();
      dictionaries.clear();
      assets.clear();
      assetEntries = 0;
      pathChars = 0;
      lastStale = new Map();
    },
    /** The window counter's figures (counts split between two threads). */
    countStats: counter.stats,
    get cachedBytes(): number {
      return summaries.bytes + longSets.bytes;
    },
  };
}

export type SummaryService = ReturnType<typeof createSummaryService>;

/** The visitor sets of a window's summaries. */
export const visitorSets = (w: Window): DaySet[] => w.days.map((d) => d.visitors);
