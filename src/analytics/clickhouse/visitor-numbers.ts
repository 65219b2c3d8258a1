// Dense per-project visitor numbers for the ClickHouse store, assigned by the SQL database that holds the projects
// (SQLite or PostgreSQL): the SQL store's visitor dictionary (`analytics_visitor_chunks`, migration 0019), under
// the same per-project write lock and with the same catch-up as its ingest writer (ingest-writer.ts).
//
// Why in SQL: a visitor key must get the same number in every process, or two processes numbering a new visitor
// at the same moment would give it two numbers and count it twice. ClickHouse has no insert-if-absent to
// arbitrate that (KeeperMap in strict mode has, but only on a server with Keeper: not on one node without it,
// not in chdb); the SQL database has, in a transaction: the version bump of `analytics_projects` takes the
// project's write lock first (SQLite's single writer; a row lock on PostgreSQL), then the visitors committed by
// other processes are read (catch-up), so a key absent from this process's index is absent from the table, and
// new keys take the ordinals after the project's largest.
//
// THE INVARIANT (what the exact answers rest on): within a project, a key has exactly one number for ever and a
// number names exactly one key — the dictionary is append-only and a key is added only when it is absent under
// the lock. The numbers are committed in SQL before any event carrying them is inserted in ClickHouse, so:
// - a crash (or failed insert) after the numbering leaves numbers no event uses: gaps, harmless (nothing counts
//   numbers, only distinct numbers of stored events), and the visitor gets the same number when it comes back;
// - a batch sent again gets the same numbers, hence the same rows and the same content token (dedup).
//
// Each process keeps, per project, the visitor hash index (visitor-index.ts: 10-12.5 bytes per visitor, loaded on
// the project's first append) with the visitors' stored keys (visitor-keys.ts, up to half the bound) and a bounded cache of exact key -> number; the projects' states together are
// bounded by bytes (least recently used projects dropped first; a dropped project's index is loaded again on its
// next append), so a process serving thousands of sites holds the busy ones, not the first 64.
import { createBulkWriter } from '../../db/bulk.ts';
import type { Database } from '../../db/index.ts';
import {
  type AddedChunk,
  CACHED_KEY_BYTES,
  catchUpVisitors,
  indexAdded,
  newVisitorIndexState,
  resolveVisitorKeys,
  type VisitorIndexState,
  VisitorOrdinalLimitError,
  visitorIndexBytes,
} from '../ingest/writer/visitor-dictionary.ts';
import { GenerationCache, SizedLru } from '../lru.ts';
import { segmentStore } from '../store/segment-store.ts';
import { analyticsStore as store } from '../store/store.ts';

export interface VisitorNumbering {
  /** The number of every key (new keys numbered, and committed in SQL, before this resolves). */
  numbers(projectId: string, keys: Iterable<string>): Promise<Map<string, number>>;
  /** Forgets the cached numbers and indexes. */
  clear(): void;
}

/** The largest number a `UInt32` column holds. */
export const MAX_VISITOR_NUMBER = 0xffff_ffff;

interface ProjectState extends VisitorIndexState {
  exact: GenerationCache<string, number>;
}

/**
 * Numbering through the SQL database `db`. Calls for one project must not overlap within an instance (the
 * ClickHouse store holds its per-project lock around them); instances in other processes may run at any time.
 */
export function createSqlVisitorNumbering(db: Database, opts: { cacheEntries?: number; maxBytes?: number } = {}): VisitorNumbering {
  const projectOrds = new Map<string, number>();
  /** The confirming reads of the visitor dictionary (visitor-dictionary.ts resolveVisitorKeys). */
  const bulk = createBulkWriter(db);
  const maxBytes = opts.maxBytes ?? 512 * 2 ** 20;
  const states = new SizedLru<number, ProjectState>(maxBytes, (s) => visitorIndexBytes(s) + s.exact.size * CACHED_KEY_BYTES);

  async function projectOrd(projectId: string): Promise<number> {
    const known = projectOrds.get(projectId);
    if (known !== undefined) return known;
    const ord = await store.ensureProjectOrd(db.kysely, projectId);
    projectOrds.set(projectId, ord);
    return ord;
  }

  async function stateOf(ord: number): Promise<ProjectState> {
    let s = states.get(ord);
    if (!s) {
      // The whole dictionary once, outside the transaction (it should not hold the write lock).
      s = { exact: new GenerationCache(opts.cacheEntries ?? 100_000), ...newVisitorIndexState(Math.floor(maxBytes / 2)) };
      await catchUpVisitors(db.kysely, ord, s, db.caps);
      states.set(ord, s);
    }
    return s;
  }

  return {
    async numbers(projectId, keys) {
      const out = new Map<string, number>();
      const ord = await projectOrd(projectId);
      const s = await stateOf(ord);
      const misses = new Set<string>();
      for (const k of keys) {
        if (out.has(k)) continue;
        const n = s.exact.get(k);
        if (n === undefined) misses.add(k);
        else out.set(k, n);
      }
      if (misses.size === 0) return out;
      const added: { key: string; ord: number }[] = [];
      const addedChunks: AddedChunk[] = [];
      let upTo = s.upTo;
      await db.kysely.transaction().execute(async (trx) => {
        added.length = 0;
        addedChunks.length = 0;
        // The project's write lock first (ingest-writer.ts writeGroup does the same).
        await segmentStore.bumpVersionReturning(trx, ord);
        try {
          for (const [k, n] of await resolveVisitorKeys(trx, bulk, ord, s, misses, added, addedChunks, MAX_VISITOR_NUMBER)) out.set(k, n);
        } catch (err) {
          if (!(err instanceof VisitorOrdinalLimitError)) throw err;
          throw new Error(`project ${projectId} has more visitors than ClickHouse's UInt32 visitor numbers hold (${MAX_VISITOR_NUMBER})`);
        }
        upTo = s.upTo;
      });
      // After the commit (never before: a rolled-back number must not be used or cached).
      s.upTo = upTo;
      indexAdded(s, added, addedChunks);
      for (const { key, ord: o } of added) out.set(key, o);
      for (const [k, n] of out) s.exact.set(k, n);
      states.resize(ord);
      return out;
    },
    clear() {
      states.clear();
      projectOrds.clear();
    },
  };
}
