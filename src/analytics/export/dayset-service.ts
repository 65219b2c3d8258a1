// Day sets at work: load a window's day sets (memory → persisted blob → rebuilt from the daily visits),
// count it exactly (src/analytics/export/daysets.ts), name the paths, and seal changed days in the background.
//
// Correctness across processes: every transaction that changes a day's daily visits bumps that
// (project, day)'s version (analytics_day_versions) — ingest in its write transaction, reclassify in its
// rebuild. A day set is valid for exactly one version. A window is loaded in one read transaction: the
// versions are read first, then (for days whose set is neither cached in memory nor persisted at that
// version) the day's visits — from the same snapshot, so a set always matches its version.
//
// Sealing: a background loop (API processes) persists the set of every day whose stored blob is missing or
// out of date once its version has stayed the same for a whole interval (the current day of a busy site
// changes all the time: it is rebuilt from its visits when queried, which is one day's rows). Several
// processes may seal at once: a blob only ever replaces an older version.
import type { Database } from '../../db/index.ts';
import { ByteLru } from '../lru.ts';
import { daysetStore as ds } from '../store/dayset-store.ts';
import type { DayRange } from '../store/store.ts';
import { CLS_AI, CLS_HUMAN } from '../store/tables.ts';
import {
  buildDaySetFromLists,
  countWindow,
  type DaySet,
  DaySetFormatError,
  DaySetIdRangeError,
  daySetBytes,
  decodeDaySet,
  encodeDaySet,
  MarkBuffer,
  type WindowCounts,
} from './daysets.ts';
import { PathDictionary } from './path-order.ts';
import type { ExportResult } from './rows.ts';

export interface DaySetServiceDeps {
  db: Database;
  /** Decoded day sets kept in memory, in bytes. */
  cacheBytes?: number;
  /** Path texts kept in memory (characters, all projects). */
  pathCacheChars?: number;
  /** Days sealed per background tick at most. */
  sealBatch?: number;
  onError?: (err: unknown) => void;
}

export interface LoadStats {
  days: number;
  fromMemory: number;
  fromBlob: number;
  rebuilt: number;
}

const dayKey = (projectOrd: number, day: number) => `${projectOrd}:${day}`;

const PATH_CHUNK = 1000;

function chunk<T>(xs: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}

/** Day sets at work (see above). A factory, long only as a module is: its caches and the short functions over them. */
export function createDaySetService(deps: DaySetServiceDeps) {
  const sets = new ByteLru<DaySet>(deps.cacheBytes ?? 256 * 1024 * 1024);
  const marks = new MarkBuffer();
  const dictionaries = new Map<number, PathDictionary>();
  let pathChars = 0;
  const maxPathChars = deps.pathCacheChars ?? 32 * 1024 * 1024;
  const sealBatch = deps.sealBatch ?? 16;
  /** Stale days seen by the previous seal tick, with their version then. */
  let lastStale = new Map<string, number>();
  /** Days whose ids do not fit a day set, with the version that failed. */
  const unsealable = new Map<string, number>();
  const stats = { loads: 0, fromMemory: 0, fromBlob: 0, rebuilt: 0, sealed: 0 };

  function cached(projectOrd: number, day: number, version: number): DaySet | undefined {
    const s = sets.get(dayKey(projectOrd, day));
    return s && s.version === version ? s : undefined;
  }

  function remember(projectOrd: number, s: DaySet): void {
    sets.set(dayKey(projectOrd, s.day), s, daySetBytes(s));
  }

  async function buildFromVisits(q: Database['kysely'], projectOrd: number, day: number, version: number): Promise<DaySet> {
    const v = await ds.selectDayVisitLists(q, deps.db.caps, projectOrd, day);
    return buildDaySetFromLists(day, version, v.pathIds, v.lists, CLS_HUMAN, CLS_AI);
  }

  /** The day sets of a window, consistent with one snapshot of the data. */
  async function loadWindow(projectOrd: number, range: DayRange): Promise<{ days: DaySet[]; stats: LoadStats }> {
    const st: LoadStats = { days: 0, fromMemory: 0, fromBlob: 0, rebuilt: 0 };
    const days = await deps.db.kysely
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const versions = await ds.selectDayVersions(trx, projectOrd, range);
        const out = new Map<number, DaySet>();
        const missing: { day: number; version: number }[] = [];
        for (const v of versions) {
          const s = cached(projectOrd, v.day, v.version);
          if (s) out.set(v.day, s);
          else missing.push(v);
        }
        st.fromMemory = out.size;
        if (missing.length > 0) {
          const want = new Map(missing.map((m) => [m.day, m.version]));
          for (const b of await ds.selectDaySets(
            trx,
            projectOrd,
            missing.map((m) => m.day),
          )) {
            if (want.get(b.day) !== b.version) continue;
            let s: DaySet;
            try {
              s = decodeDaySet(b.day, b.version, b.data);
            } catch (err) {
              // A blob this version cannot read (another format): rebuilt from the visits below.
              if (err instanceof DaySetFormatError) continue;
              throw err;
            }
            out.set(b.day, s);
            remember(projectOrd, s);
            st.fromBlob++;
          }
          for (const m of missing) {
            if (out.has(m.day)) continue;
            const s = await buildFromVisits(trx, projectOrd, m.day, m.version);
            out.set(m.day, s);
            remember(projectOrd, s);
            st.rebuilt++;
          }
        }
        return versions.map((v) => out.get(v.day) as DaySet);
      });
    st.days = days.length;
    stats.loads++;
    stats.fromMemory += st.fromMemory;
    stats.fromBlob += st.fromBlob;
    stats.rebuilt += st.rebuilt;
    return { days, stats: st };
  }

  /** The project's path dictionary, with every id of `ids` in it (a path id's text never changes). */
  async function pathDictionary(projectOrd: number, ids: Uint32Array): Promise<PathDictionary> {
    let dict = dictionaries.get(projectOrd);
    if (!dict) {
      dict = new PathDictionary();
      dictionaries.set(projectOrd, dict);
    }
    const misses: number[] = [];
    for (const id of ids) if (!dict.has(id)) misses.push(id);
    if (misses.length > 0) {
      const before = dict.chars;
      const rows =
        misses.length > 2000
          ? await ds.selectAllPathTexts(deps.db.kysely, projectOrd)
          : (await Promise.all(chunk(misses, PATH_CHUNK).map((c) => ds.selectPathTexts(deps.db.kysely, projectOrd, c)))).flat();
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

  /** Named, sorted rows from window counts. */
  async function toResult(projectOrd: number, c: WindowCounts): Promise<ExportResult> {
    const dict = await pathDictionary(projectOrd, c.pathIds);
    return { totals: c.totals, rows: dict.orderedRows(c) };
  }

  /** Exact distinct visitors per path and site-wide over a day range (the visitors export). */
  async function visitors(projectOrd: number, range: DayRange): Promise<ExportResult & { stats: LoadStats }> {
    const { days, stats: st } = await loadWindow(projectOrd, range);
    const counts = countWindow(days, marks);
    // A window over an unusually wide ordinal range should not pin a large buffer.
    if (marks.size > 64 * 1024 * 1024) marks.release();
    return { ...(await toResult(projectOrd, counts)), stats: st };
  }

  /** Persists up to one batch of days whose stored set is out of date and whose version held for a tick. */
  async function sealOnce(): Promise<number> {
    const stale = await ds.selectStaleDays(deps.db.kysely, 1000);
    const seen = new Map<string, number>();
    let sealed = 0;
    for (const d of stale) {
      const key = dayKey(d.projectOrd, d.day);
      seen.set(key, d.version);
      if (sealed >= sealBatch || lastStale.get(key) !== d.version || unsealable.get(key) === d.version) continue;
      let s = cached(d.projectOrd, d.day, d.version);
      if (!s) {
        try {
          s = await deps.db.kysely
            .transaction()
            .setIsolationLevel('repeatable read')
            .execute(async (trx) => {
              const v = await ds.selectDayVersions(trx, d.projectOrd, { fromDay: d.day, toDay: d.day + 1 });
              const version = v[0]?.version ?? 0;
              return buildFromVisits(trx, d.projectOrd, d.day, version);
            });
        } catch (err) {
          // Ids beyond a day set's range: this day is counted in SQL; do not retry it until it changes.
          if (!(err instanceof DaySetIdRangeError)) throw err;
          if (unsealable.size > 10_000) unsealable.clear();
          unsealable.set(key, d.version);
          continue;
        }
        remember(d.projectOrd, s);
      }
      await ds.upsertDaySet(deps.db.kysely, d.projectOrd, d.day, s.version, s.pairs.length, encodeDaySet(s));
      sealed++;
      stats.sealed++;
    }
    lastStale = seen;
    return sealed;
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

  async function stop(): Promise<void> {
    stopped = true;
    if (timer) clearTimeout(timer);
    timer = null;
    await running;
  }

  return {
    loadWindow,
    visitors,
    sealOnce,
    startSealer,
    stop,
    stats,
    /** Forgets every in-memory set and path text (tests: a cold process). */
    clear(): void {
      sets.clear();
      dictionaries.clear();
      pathChars = 0;
      lastStale = new Map();
    },
    get cachedBytes(): number {
      return sets.bytes;
    },
  };
}

export type DaySetService = ReturnType<typeof createDaySetService>;
