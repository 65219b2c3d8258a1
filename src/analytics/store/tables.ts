// Tables of the analytics area. Times are epoch ms; `day` is the UTC day number (ms / 86,400,000).
//
// Storage design (see ARCHITECTURE "Performance design notes"):
// - `analytics_projects` gives each project a small integer (`ord`) used by every other analytics table,
//   and a data `version` bumped in every ingest transaction (the export result cache keys on it).
// - `analytics_paths` / `analytics_visitors` / `analytics_user_agents` are dictionaries: (project, normalised
//   path) → integer id, (project, visitor key) → integer ordinal, (project, user agent) → id. Raw IPs are never
//   stored; only the keyed visitor hash (stored as bytes since migration 0018: visitor-key.ts). Visitors are
//   append-only with no unique index on the key (migration 0008): the ingest writer keeps them unique (in-memory
//   hash index, src/analytics/ingest/visitor-index.ts).
// - `analytics_segments` keeps every accepted event in compressed columnar segments per (project, day) (migration
//   0016; segment-store.ts): the only per-event storage.
// - What the answers read of a day is derived from its segments (src/analytics/export/day-summary.ts): a day
//   summary, valid for one version of its (project, day) (`analytics_day_versions`), persisted once the day holds
//   still (`analytics_day_summaries`, migration 0017, which dropped the per-event derived tables).

import type { Generated } from 'kysely';

/** Class codes of the day summaries (visitor sets and facets). */
export const CLS_HUMAN = 1;
export const CLS_AI = 2;
/** Class code of a crawler (facets only: crawlers never qualify). */
export const CLS_CRAWLER = 3;

/** A day summary's facet kinds. */
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
    /** The visitor key (the keyed visitor hash, never a raw IP, or the visitorId) as bytes: visitor-key.ts. */
    visitor_key: Uint8Array;
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
  /**
   * A data version per (project, day) that has segments (migration 0006; 0017 added `rewritten` and `has_data`):
   * bumped by every transaction that changes the day's segments. See summary-store.ts.
   */
  analytics_day_versions: {
    project_ord: number;
    day: number;
    version: number;
    /** The version at which the day's segments were last replaced (compaction, reclassification); 0: never. */
    rewritten: number;
    /** 1 once the day had a qualifying view or an AI or crawler request with a rule. */
    has_data: number;
  };
  /** Persisted day summaries (src/analytics/export/day-summary.ts, migration 0017): a (project, day)'s at one version. */
  analytics_day_summaries: {
    project_ord: number;
    day: number;
    version: number;
    data: Uint8Array;
  };
}
