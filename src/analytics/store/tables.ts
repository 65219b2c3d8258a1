// Tables of the analytics area. Times are epoch ms; `day` is the UTC day number (ms / 86,400,000).
//
// Storage design (see ARCHITECTURE "Performance design notes"):
// - `analytics_projects` gives each project a small integer (`ord`) used by every other analytics table,
//   and a data `version` bumped in every ingest transaction (the export result cache keys on it).
// - `analytics_paths` / `analytics_visitor_chunks` / `analytics_user_agents` are dictionaries: (project, normalised
//   path) → integer id, (project, visitor key) → integer ordinal, (project, user agent) → id. Raw IPs are never
//   stored; only the keyed visitor hash (stored as bytes since migration 0018: visitor-key.ts). Visitors are
//   append-only with no index on the key (migration 0008): the ingest writer keeps them unique (in-memory hash
//   index, src/analytics/ingest/writer/visitor-index.ts). Since migration 0019 they are stored in chunks of consecutive
//   ordinals of one project (one row per ~110 visitors instead of a row and an index entry each).
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
  /**
   * The visitor dictionary (migration 0019): each row the keys of a project's ordinals first_ord, first_ord + 1, …
   * (ordinals are per project, dense but for the gaps of rows moved from before 0019). Append-only; rows are
   * written by an ingest transaction holding the project's write lock, with ordinals after the largest stored
   * (ingest-writer.ts). `keys` holds `width` bytes per visitor: the visitor key (the keyed visitor hash, never
   * a raw IP, or the visitorId) as visitor-key.ts encodes it; a row holds keys of one width, at most
   * store.ts VISITOR_CHUNK_BYTES of them, so the key of an ordinal is a slice at a known offset.
   */
  analytics_visitor_chunks: {
    first_ord: number;
    project_ord: number;
    width: number;
    keys: Uint8Array;
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
