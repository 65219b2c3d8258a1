// Tables of the analytics area. Times are epoch ms; `day` is the UTC day number (ms / 86,400,000).
//
// Storage design (see ARCHITECTURE "Performance design notes"):
// - `analytics_projects` gives each project a small integer (`ord`) used by every other analytics table,
//   and a data `version` bumped in every ingest transaction (the export result cache keys on it).
// - `analytics_paths` / `analytics_visitors` / `analytics_user_agents` are dictionaries: (project, normalised
//   path) → integer id, (project, visitor key) → integer ordinal, (project, user agent) → id. Raw IPs are never
//   stored; only the keyed visitor hash. Visitors are append-only with no unique index on the key (migration
//   0008): the ingest writer keeps them unique (in-memory hash index, src/analytics/ingest/visitor-index.ts).
// - `analytics_segments` keeps every accepted event (for reclassification, rebuilding the derived tables and
//   audits) in compressed columnar segments per (project, day) (migration 0016; segment-store.ts).
// - `analytics_daily_views` counts qualifying views per (project, day, path), human and AI apart (the views
//   export reads only this table).
// - `analytics_daily_visits` holds one row per qualifying (project, day, path, visitor, class), deduplicated
//   at ingest. The visitors export reads only this table. A later per-day compressed visitor-set table
//   (e.g. Roaring bitmaps over visitor ordinals, keyed by (project, day, path, class)) can be derived from it.

/** Class code in `analytics_daily_visits.cls`. */
import type { Generated } from 'kysely';

export const CLS_HUMAN = 1;
export const CLS_AI = 2;
/** Class code of a crawler in `analytics_daily_facets.cls` (never in the daily visits). */
export const CLS_CRAWLER = 3;

/** `analytics_daily_facets.facet`. */
export const FACET_AGENT = 1;
export const FACET_REFERRER = 2;

export interface AnalyticsTables {
  analytics_projects: {
    ord: Generated<number>;
    project_id: string;
    /** Bumped by every write transaction that changes the project's analytics data. */
    version: number;
  };
  analytics_paths: {
    id: Generated<number>;
    project_ord: number;
    /** sha256 hex of the normalised path (paths may be longer than an index entry allows). */
    path_hash: string;
    path: string;
  };
  analytics_visitors: {
    ord: Generated<number>;
    project_ord: number;
    /** The keyed visitor hash (never a raw IP). */
    visitor_key: string;
  };
  /** Per-project user agent dictionary (migration 0007): raw events refer to it by ua_id. */
  analytics_user_agents: {
    id: Generated<number>;
    project_ord: number;
    /** sha256 hex of the user agent (they may be longer than an index entry allows). */
    ua_hash: string;
    user_agent: string;
  };
  /**
   * Raw events (migration 0016): each row one immutable segment (src/analytics/segments/codec.ts) of a
   * (project, day)'s events. Ingest appends one per (project, day) a transaction touched; compaction and
   * reclassification replace a day's segments by fewer. `seq` orders a day's segments: a new one takes the
   * project's data version of its transaction (bumped by every writer first), so it is above every seq stored
   * before it; replacements reuse the seqs of the segments they replace.
   */
  analytics_segments: {
    project_ord: number;
    day: number;
    seq: number;
    /** Events in the segment. */
    events: number;
    data: Uint8Array;
  };
  /**
   * Dedup hashes of imported events whose key names no day (dedup.ts dedupKeyDay), looked up project-wide
   * (migration 0016); keys with a day are looked up in their day's segments.
   */
  analytics_dedup_keys: {
    project_ord: number;
    /** dedupHashHex of the key's hash. */
    hash: string;
  };
  analytics_daily_visits: {
    project_ord: number;
    day: number;
    path_id: number;
    visitor_ord: number;
    /** CLS_HUMAN or CLS_AI. */
    cls: number;
  };
  /** Qualifying views per (project, day, path), human and AI apart (migration 0009): what the views export sums. */
  analytics_daily_views: {
    project_ord: number;
    day: number;
    path_id: number;
    human: number;
    ai: number;
  };
  /**
   * Per (project, day, facet, name, visitor): views and requests (migration 0010). Facet FACET_AGENT: AI and
   * crawler requests by rule name (`cls` CLS_AI or CLS_CRAWLER; views = page views, see facets.ts);
   * FACET_REFERRER: qualifying views by referrer host (`cls` 0, views = requests).
   */
  analytics_daily_facets: {
    project_ord: number;
    day: number;
    facet: number;
    name: string;
    visitor_ord: number;
    cls: number;
    views: number;
    requests: number;
  };
  /** A data version per (project, day) of analytics_daily_facets: bumped whenever that day's facets change (migration 0010). */
  analytics_day_facet_versions: {
    project_ord: number;
    day: number;
    version: number;
  };
  /** A data version per (project, day): bumped whenever that day's daily visits change (migration 0006). */
  analytics_day_versions: {
    project_ord: number;
    day: number;
    version: number;
  };
  /** Persisted day sets (src/analytics/export/daysets.ts): the encoded visitor set of a (project, day) at a version. */
  analytics_day_sets: {
    project_ord: number;
    day: number;
    version: number;
    /** Number of (path, visitor) pairs in the set. */
    pairs: number;
    data: Uint8Array;
  };
}
