// Tables of the analytics area. Times are epoch ms; `day` is the UTC day number (ms / 86,400,000).
//
// Storage design (see ARCHITECTURE "Performance design notes"):
// - `analytics_projects` gives each project a small integer (`ord`) used by every other analytics table,
//   and a data `version` bumped in every ingest transaction (the export result cache keys on it).
// - `analytics_paths` / `analytics_visitors` / `analytics_user_agents` are dictionaries: (project, normalised
//   path) → integer id, (project, visitor key) → integer ordinal, (project, user agent) → id. Raw IPs are never
//   stored; only the keyed visitor hash. Visitors are append-only with no unique index on the key (migration
//   0008): the ingest writer keeps them unique (in-memory hash index, src/analytics/ingest/visitor-index.ts).
// - `analytics_events` keeps every accepted event (for reclassification, rebuilding the derived tables and audits), its user agent
//   by dictionary id and its raw path only when it differs from the normalised one (migration 0007).
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
  analytics_events: {
    id: Generated<number>;
    project_ord: number;
    ts: number;
    day: number;
    path_id: number;
    /** The path or URL as sent, for audits; '' = the same as its normalised path (migration 0007). */
    raw_path: string;
    visitor_ord: number;
    /** The user agent text of rows stored before migration 0007; newer rows use ua_id. */
    user_agent: string | null;
    /** analytics_user_agents.id (null: no user agent, or a row from before migration 0007). */
    ua_id: number | null;
    accept: string | null;
    method: string | null;
    status: number | null;
    referrer: string | null;
    class: 'human' | 'ai' | 'crawler';
    category: 'search' | 'training' | 'other' | null;
    rule: string | null;
    rules_version: string;
    /** 1 when the event is a qualifying view (SPEC 4.3), else 0. */
    qualifying: number;
    /** api | collect | import */
    source: string;
    /** Idempotency key of imported lines; null for live events. */
    dedup_key: string | null;
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
