// The analytics store: the one interface every analytics backend implements (the SQL store over SQLite or
// PostgreSQL, sql-analytics-store.ts: raw events in per-day segments, day summaries derived from them; and
// ClickHouse, clickhouse/clickhouse-store.ts). Routes, the CLI, the ingest service and the exports call only this.
//
// The boundary: everything before `append` is the same for every backend and runs in the request thread —
// validation, path normalisation, classification and the visitor key (prepare.ts), packed into a WriteBatch
// (typed columns and one string table; write-batch.ts). Everything after it belongs to the backend: how events
// are encoded (dictionary ids, rows, segments, parts), where writes happen (a worker thread, a group commit),
// what is derived and cached (day summaries, computed results). No SQL or Kysely type crosses
// it: answers are in domain terms, days are UTC day numbers (days since 1970-01-01), `fromDay` inclusive and
// `toDay` exclusive, null = unbounded.
//
// What every implementation must answer, exactly (test/analytics/store-conformance.ts checks each against a
// reference that recomputes it from the accepted events, test/analytics/reference-store.ts):
// - a qualifying view is an accepted event with `qualifying` = 1 (class human or ai); a visitor is its visitor key;
// - visitors / views: per normalised path, distinct visitors (human, ai, total = their union) or views, over the
//   range; rows by total descending then path (UTF-16 order); pages by offset and limit, `hasMore` exact; the
//   pages of one walk (same walkId, kind, project and range, starting at offset 0) come from one snapshot;
// - series: with absent bounds, from the first to the last day with data (a day that has, or had before a
//   reclassification, a qualifying view or an agent / referrer request);
// - agents / referrers: the facets of classify/facets.ts, ordered by visitors, requests (views), then name.
import type { AgentRow, ExportQuery, ListQuery, Paged, RangeQuery, ReferrerRow, SeriesResult } from '../export/answers.ts';
import type { Page } from '../export/rows.ts';
import type { Interval } from '../export/series.ts';
import type { IngestSource, WriteBatch } from '../ingest/write-batch.ts';
import type { IngestWriterStats } from '../ingest/writer/writer-stats.ts';

export type { AgentRow, ExportQuery, ListQuery, Paged, RangeQuery, ReferrerRow, SeriesResult } from '../export/answers.ts';
export type { Page } from '../export/rows.ts';
export type { IngestSource, WriteBatch } from '../ingest/write-batch.ts';

export interface ReclassifyResult {
  /** Stored events looked at. */
  scanned: number;
  /** Events whose class, crawler category, rule or qualifying flag changed. */
  changed: number;
}

export type AnalyticsHealth = { ok: true } | { ok: false; reason: string };

/**
 * What a store's background work and caches did since the process started (monotonic counts, read by
 * `GET /metrics`). A backend reports the parts it has.
 */
export interface AnalyticsCounters {
  /** Day summaries loaded (by reads and by the sealer), by where each came from: held in memory at its version, its stored blob, extended from an older one by the segments appended since, rebuilt from all the day's segments. */
  summaryDays?: { memory: number; blob: number; extended: number; rebuilt: number };
  /** Day summaries the background sealer stored. */
  summariesSealed?: number;
  /** Segments compaction merged (replaced by fewer). */
  segmentsCompacted?: number;
  /** The ingest writer's group commits (writer-stats.ts), where this process writes them. */
  ingest?: IngestWriterStats;
}

export interface AnalyticsStore {
  /**
   * Stores a batch of prepared events of one project. Resolves only once they are durable (the 202 is sent
   * after it); resolves with the events stored, skipping any whose dedup key the project already has (also
   * within the batch, first one wins), so a retried or re-imported batch adds nothing. The batch must not be
   * changed afterwards.
   */
  append(projectId: string, source: IngestSource, batch: WriteBatch): Promise<number>;
  /** Distinct visitors per path (human, ai, total), one page of the walk. */
  visitors(q: ExportQuery): Promise<Page>;
  /** Qualifying views per path (human, ai, total = their sum), one page of the walk. */
  views(q: ExportQuery): Promise<Page>;
  /** Distinct visitors per bucket and crawler requests; throws SeriesTooLongError past MAX_BUCKETS buckets. */
  series(projectId: string, q: RangeQuery & { interval: Interval }): Promise<SeriesResult>;
  /** AI assistants and crawlers by the rule that classified them. */
  agents(projectId: string, q: ListQuery): Promise<Paged<AgentRow>>;
  /** Referrer hosts of qualifying views. */
  referrers(projectId: string, q: ListQuery): Promise<Paged<ReferrerRow>>;
  /**
   * Re-derives class, crawler category, rule and the qualifying flag of every stored event of the project with
   * the current rules and rebuilds everything derived from them; every answer afterwards follows the new classes.
   */
  reclassify(projectId: string, onProgress?: (done: number, total: number) => void): Promise<ReclassifyResult>;
  /** What its caches and background work did since the process started (for /metrics; never throws). */
  counters(): AnalyticsCounters;
  /** Whether the store can take and answer requests now (never throws). */
  health(): Promise<AnalyticsHealth>;
  /** Gets ready to append (e.g. starts a writer thread now rather than on the first batch). */
  warmUp(): Promise<void>;
  /** Starts background upkeep (API processes): persisting derived day data. */
  startBackground(): void;
  /** Forgets cached state (tests; after a restore). Answers stay the same. */
  clearCaches(): void;
  /** Waits for what was appended, stops background work (persisting, where it ran, what changed: bounded in time) and releases resources. */
  close(): Promise<void>;
}
