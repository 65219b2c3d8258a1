// Numbered, append-only ClickHouse migrations of the analytics store, applied at start (never edit or reorder a
// released one: add the next number). Each statement is idempotent (IF NOT EXISTS), so two processes starting
// at once, or a start that failed half-way, apply them again harmlessly; a migration is recorded in
// schema_migrations after all its statements ran.
//
// The layout (single node; docs/scaling.md has the clustered variant):
//
// - `events`: every accepted event, append-only, one row each, sorted by (project, day, path, visitor) and
//   partitioned by month. Strings compressed with ZSTD; low-cardinality columns dictionary-encoded. Each
//   insert is fsynced before ClickHouse acknowledges it (fsync_after_insert), so a resolved append survives a
//   power loss, and a retried insert with the same insert_deduplication_token is dropped
//   (non_replicated_deduplication_window).
// - `data_days`: (project, day) of every day that has or had a qualifying view or an agent request, filled by
//   the materialised view `data_days_mv` in the same insert; reclassification rewrites `events` in place and
//   adds the days that gained data, never removes any (the series' unbounded range keeps such days).
// - `dedup_keys` (migration 2): (project, key) of every event with a dedup key, filled by `dedup_keys_mv` in the
//   same insert, sorted for lookups by the primary key.
//
// THE INVARIANT that keeps the answers exact: every count is computed at query time from `events` rows,
// filtered by the project, the day range and the class columns, as distinct visitor keys and count() over rows;
// `events` holds each accepted event exactly once (dedup keys checked before the insert under the project's lock
// and against rows still being inserted; retries of one insert dropped by its token, and a keyed batch sent
// again, by any process, by its content's token: clickhouse-store.ts; docs/clickhouse.md lists what that does
// not cover). Distinct visitors are
// counted by GROUP BY on the key (keys compared whole: the visitors export) or by uniqExact (series, agents,
// referrers), a set, not a sketch, of the keys' 128-bit SipHash for strings: two keys could only be confused by
// a 128-bit collision (about n^2 / 2^129: 10^-21 for a billion visitors). Nothing is pre-aggregated; where partial
// results are merged (several parts, several shards: docs/scaling.md), they are such sets and their union is
// exact.
import type { ClickHouseExecutor } from './executor.ts';

/** The columns of `events` (migration 1; shared with the clustered DDL of cluster-ddl.ts). */
export const EVENTS_COLUMNS = `        project LowCardinality(String),
        day Int32,
        seq UInt64,
        ts Int64,
        path String CODEC(ZSTD(3)),
        raw_path String CODEC(ZSTD(3)),
        visitor String CODEC(ZSTD(3)),
        user_agent Nullable(String) CODEC(ZSTD(3)),
        accept LowCardinality(Nullable(String)),
        method LowCardinality(Nullable(String)),
        status Nullable(Int32),
        referrer Nullable(String) CODEC(ZSTD(3)),
        ref_host Nullable(String) CODEC(ZSTD(3)),
        cls LowCardinality(String),
        category LowCardinality(Nullable(String)),
        rule LowCardinality(Nullable(String)),
        qualifying UInt8,
        view_shape UInt8,
        source LowCardinality(String),
        dedup_key Nullable(String) CODEC(ZSTD(3)),
        INDEX dedup_idx dedup_key TYPE bloom_filter(0.01) GRANULARITY 1`;
export const EVENTS_PARTITION = 'toYYYYMM(toDate(greatest(day, 0)))';
export const EVENTS_ORDER = '(project, day, path, visitor)';
/** Codecs of migration 3 (bytes per event of ts 5.6 -> 3.6 and seq 4.0 -> 1.8 on bench:scale's 1M events; Delta: 4.3 / 2.5). */
export const EVENTS_CODECS = 'MODIFY COLUMN ts Int64 CODEC(T64, ZSTD(3)), MODIFY COLUMN seq UInt64 CODEC(T64, ZSTD(3))';
/**
 * Column types of migration 4: user agents dictionary-encoded (a part keeps each distinct string once and an index
 * per row). On bench:scale's 1M events (real User-Agent strings): 4.1 -> 1.0 bytes per event (scratch tables
 * through chdb, bench/README.md).
 */
export const EVENTS_TYPES_4 = 'MODIFY COLUMN user_agent LowCardinality(Nullable(String)) CODEC(ZSTD(3))';
/** The dedup keys of events, for `dedup_keys` (migration 2). */
export const DEDUP_KEYS_SELECT = 'SELECT project, assumeNotNull(dedup_key) AS key FROM events WHERE dedup_key IS NOT NULL';
/** Days with data: a qualifying view or an agent request (the reference store's rule). */
export const DATA_DAYS_SELECT = "SELECT project, day FROM events WHERE qualifying = 1 OR (cls IN ('ai', 'crawler') AND rule IS NOT NULL) GROUP BY project, day";

export interface ClickHouseMigration {
  version: number;
  name: string;
  statements: readonly string[];
}

export const CLICKHOUSE_MIGRATIONS: readonly ClickHouseMigration[] = [
  {
    version: 1,
    name: 'events and data days',
    statements: [
      `CREATE TABLE IF NOT EXISTS events (
${EVENTS_COLUMNS}
      ) ENGINE = MergeTree
      PARTITION BY ${EVENTS_PARTITION}
      ORDER BY ${EVENTS_ORDER}
      SETTINGS fsync_after_insert = 1, fsync_part_directory = 1, non_replicated_deduplication_window = 10000`,
      `CREATE TABLE IF NOT EXISTS data_days (project LowCardinality(String), day Int32) ENGINE = ReplacingMergeTree ORDER BY (project, day)
      SETTINGS fsync_after_insert = 1, fsync_part_directory = 1, non_replicated_deduplication_window = 10000`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS data_days_mv TO data_days AS
      ${DATA_DAYS_SELECT}`,
    ],
  },
  {
    // A batch's dedup keys were looked up in `events`, where no index finds them (a bloom filter per granule
    // matches some of 1,000 keys almost always): 345-540 ms per 1,000-key lookup at 2M events against 5-23 ms
    // by the primary key of this table (chdb, machine loaded), and growing with the events. The backfill may run
    // twice (a start that stopped before recording this migration): duplicates are merged away and lookups
    // are DISTINCT.
    version: 2,
    name: 'dedup keys by primary key',
    statements: [
      `CREATE TABLE IF NOT EXISTS dedup_keys (project LowCardinality(String), key String CODEC(ZSTD(3))) ENGINE = ReplacingMergeTree ORDER BY (project, key)
      SETTINGS fsync_after_insert = 1, fsync_part_directory = 1, non_replicated_deduplication_window = 10000`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS dedup_keys_mv TO dedup_keys AS ${DEDUP_KEYS_SELECT}`,
      `INSERT INTO dedup_keys ${DEDUP_KEYS_SELECT}`,
    ],
  },
  {
    // The two integer columns of every row, compressed as integers (T64 packs their varying low bits) rather
    // than as bytes: new parts and merges use it; re-running it changes nothing.
    version: 3,
    name: 'integer codecs for ts and seq',
    statements: [`ALTER TABLE events ${EVENTS_CODECS}`],
  },
  {
    // Converts the stored parts (a mutation; mutations_sync = 2: the migration is recorded once every part is
    // converted, and reads meanwhile convert unconverted parts on the fly). Re-running it changes nothing.
    version: 4,
    name: 'user agents dictionary-encoded',
    statements: [`ALTER TABLE events ${EVENTS_TYPES_4} SETTINGS mutations_sync = 2`],
  },
];

/** Applies the migrations not recorded yet, in order; returns the versions applied now. */
export async function migrateClickHouse(ch: ClickHouseExecutor, migrations: readonly ClickHouseMigration[] = CLICKHOUSE_MIGRATIONS): Promise<number[]> {
  await ch.command(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String, applied_at DateTime DEFAULT now()) ENGINE = ReplacingMergeTree ORDER BY version',
  );
  const done = new Set((await ch.query<{ version: number }>('SELECT DISTINCT version FROM schema_migrations')).map((r) => Number(r.version)));
  const applied: number[] = [];
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    for (const sql of m.statements) await ch.command(sql);
    await ch.insert('schema_migrations', [{ version: m.version, name: m.name }]);
    applied.push(m.version);
  }
  return applied;
}

/** Whether every migration is recorded (readiness). */
export async function clickHouseMigrationsApplied(
  ch: ClickHouseExecutor,
  migrations: readonly ClickHouseMigration[] = CLICKHOUSE_MIGRATIONS,
): Promise<boolean> {
  const done = new Set((await ch.query<{ version: number }>('SELECT DISTINCT version FROM schema_migrations')).map((r) => Number(r.version)));
  return migrations.every((m) => done.has(m.version));
}
