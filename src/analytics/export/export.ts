// The visitors and views exports: compute a query once, serve its pages from the result.
//
// Snapshot mechanism (SPEC 4.4 "walking all pages of one query gives every path exactly once, even while
// new events arrive"):
// - Every ingest transaction bumps the project's data `version` (analytics_projects.version).
// - Computed results are cached in memory by (kind, project, fromDay, toDay, version), LRU-bounded.
// - A *walk* is identified by (API key, kind, project, fromDay, toDay). A request at offset 0 starts a walk:
//   it reads the current version and serves the result for it (computing it once if needed). Requests at
//   offset > 0 continue the caller's walk: they are served from the same result, whatever was ingested
//   since, as long as the walk was used within `snapshotMs` (sliding) and its result is still cached.
//   Without a live walk (evicted, expired, or a page served by another API process) a page is served from
//   the current version — best effort, as an offset-paginated API without a cursor allows.
// - Totals and rows of one result come from the day summaries of one read transaction (summary-service.ts), so a
//   result is internally consistent. Visitors and views are computed from the same structures (the summaries),
//   so both agree in every process that reads the same versions.
import type { Database } from '../../db/index.ts';
import { Lru } from '../lru.ts';
import { analyticsStore as store } from '../store/store.ts';
import type { ExportQuery } from './answers.ts';
import { EMPTY_RESULT, type ExportResult, type Page, pageOf } from './rows.ts';
import type { SummaryService } from './summary-service.ts';

export type ExportKind = 'visitors' | 'views';

export type { ExportQuery } from './answers.ts';

export interface ExportDeps {
  db: Database;
  now: () => number;
  /** A walk's snapshot lives this long after its last page request. */
  snapshotMs?: number;
  /** Computed results kept in memory. */
  resultEntries?: number;
  /** The day summaries both exports count from. */
  summaries: SummaryService;
}

interface Walk {
  resultKey: string;
  usedAt: number;
}

/** The exports (see above). A factory, long only as a module is: its result cache, the walks and the short functions over them. */
export function createExportService(deps: ExportDeps) {
  const snapshotMs = deps.snapshotMs ?? 600_000;
  const results = new Lru<string, ExportResult>(deps.resultEntries ?? 16);
  const inflight = new Map<string, Promise<ExportResult>>();
  const walks = new Lru<string, Walk>(10_000);
  let computations = 0;

  async function compute(kind: ExportKind, projectOrd: number, fromDay: number | null, toDay: number | null): Promise<ExportResult> {
    computations++;
    const range = { fromDay, toDay };
    if (kind === 'visitors') {
      const { totals, rows } = await deps.summaries.visitors(projectOrd, range);
      return { totals, rows };
    }
    return deps.summaries.views(projectOrd, range);
  }

  /** The cached result for a key, computing it once even when several requests ask at the same time. */
  async function resultFor(key: string, make: () => Promise<ExportResult>): Promise<ExportResult> {
    const hit = results.get(key);
    if (hit) return hit;
    let p = inflight.get(key);
    if (!p) {
      // Cached before it leaves `inflight`, so a request in between finds one or the other.
      p = make()
        .then((r) => {
          results.set(key, r);
          return r;
        })
        .finally(() => inflight.delete(key));
      inflight.set(key, p);
    }
    return p;
  }

  async function page(kind: ExportKind, q: ExportQuery): Promise<Page> {
    if (q.fromDay !== null && q.toDay !== null && q.fromDay >= q.toDay) return pageOf(EMPTY_RESULT, q.offset, q.limit);
    const now = deps.now();
    const walkKey = `${q.walkId}\u0000${kind}\u0000${q.projectId}\u0000${q.fromDay}\u0000${q.toDay}`;
    if (q.offset > 0) {
      const w = walks.get(walkKey);
      const r = w && now - w.usedAt <= snapshotMs ? results.get(w.resultKey) : undefined;
      if (w && r) {
        w.usedAt = now;
        return pageOf(r, q.offset, q.limit);
      }
    }
    const projectOrd = await store.selectProjectOrd(deps.db.kysely, q.projectId);
    if (projectOrd === undefined) return pageOf(EMPTY_RESULT, q.offset, q.limit);
    const version = await store.selectVersion(deps.db.kysely, projectOrd);
    const resultKey = `${kind}\u0000${projectOrd}\u0000${q.fromDay}\u0000${q.toDay}\u0000${version}`;
    const result = await resultFor(resultKey, () => compute(kind, projectOrd, q.fromDay, q.toDay));
    // The walk points at this result; make sure it stays cached even if computed by another caller.
    if (!results.peek(resultKey)) results.set(resultKey, result);
    walks.set(walkKey, { resultKey, usedAt: now });
    return pageOf(result, q.offset, q.limit);
  }

  return {
    visitors: (q: ExportQuery) => page('visitors', q),
    views: (q: ExportQuery) => page('views', q),
    /** How many results were computed (tests and metrics). */
    get computations() {
      return computations;
    },
    clear(): void {
      results.clear();
      walks.clear();
    },
  };
}

export type ExportService = ReturnType<typeof createExportService>;
