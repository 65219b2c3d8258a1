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
// - since migration 5, `events.visitor` is the visitor's dense per-project number (UInt32), not its key: numbers
//   are assigned by the SQL database that holds the projects, in its visitor dictionary (visitor-numbers.ts).
//
// THE INVARIANT that keeps the answers exact: every count is computed at query time from `events` rows,
// filtered by the project, the day range and the class columns, as distinct visitor numbers and count() over rows;
// `events` holds each accepted event exactly once (dedup keys checked before the insert under the project's lock
// and against rows still being inserted; retries of one insert dropped by its token, and a keyed batch sent
// again, by any process, by its content's token: clickhouse-store.ts; docs/clickhouse.md lists what that does
// not cover). Within a project a visitor key has exactly one number and a number names one key (the SQL
// dictionary is append-only, a key is added only when absent, under the project's write lock after catching up on
// what other processes committed; the number is committed before any event carrying it is inserted:
// visitor-numbers.ts), so distinct numbers of a project are distinct visitors, and every distinct count equals
// the count of distinct keys. Numbers no event carries (a crash between numbering and insert) are never counted.
// Distinct visitors are counted by GROUP BY on the number (the visitors export) or by uniqExact (series, agents,
// referrers), which for a UInt32 keeps the numbers themselves: a set, not a sketch, no hashing. Nothing is
// pre-aggregated; where partial results are merged (several parts, several shards: docs/scaling.md), they are
// such sets and their union is exact.
import { randomBytes } from 'node:crypto';
import type { ClickHouseExecutor } from './executor.ts';
import type { VisitorNumbering } from './visitor-numbers.ts';

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
/**
 * The columns of `events` since migration 5: those of migration 1 with the codecs of 3, the types of 4, and the
 * visitor's dense per-project number in place of its key (T64 then ZSTD: bench/clickhouse-layouts.ts).
 */
export const EVENTS_COLUMNS_5 = `        project LowCardinality(String),
        day Int32,
        seq UInt64 CODEC(T64, ZSTD(3)),
        ts Int64 CODEC(T64, ZSTD(3)),
        path String CODEC(ZSTD(3)),
        raw_path String CODEC(ZSTD(3)),
        visitor UInt32 CODEC(T64, ZSTD(3)),
        user_agent LowCardinality(Nullable(String)) CODEC(ZSTD(3)),
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
/** The columns of `events`, in order (migration 5's copy). */
const EVENT_FIELDS = [
  'project',
  'day',
  'seq',
  'ts',
  'path',
  'raw_path',
  'visitor',
  'user_agent',
  'accept',
  'method',
  'status',
  'referrer',
  'ref_host',
  'cls',
  'category',
  'rule',
  'qualifying',
  'view_shape',
  'source',
  'dedup_key',
];
/** The settings of the single node's `events`. */
const EVENTS_SETTINGS = 'SETTINGS fsync_after_insert = 1, fsync_part_directory = 1, non_replicated_deduplication_window = 10000';
/** The dedup keys of events, for `dedup_keys` (migration 2). */
export const DEDUP_KEYS_SELECT = 'SELECT project, assumeNotNull(dedup_key) AS key FROM events WHERE dedup_key IS NOT NULL';
/** Days with data: a qualifying view or an agent request (the reference store's rule). */
export const DATA_DAYS_SELECT = "SELECT project, day FROM events WHERE qualifying = 1 OR (cls IN ('ai', 'crawler') AND rule IS NOT NULL) GROUP BY project, day";

/** What a migration's code step may use besides ClickHouse. */
export interface MigrationContext {
  /** Dense visitor numbers from the SQL database (migration 5). */
  numbering?: VisitorNumbering;
}

export interface ClickHouseMigration {
  version: number;
  name: string;
  statements: readonly string[];
  /** Runs after the statements; idempotent as they are (a start that failed half-way runs it again). */
  run?: (ch: ClickHouseExecutor, ctx: MigrationContext) => Promise<void>;
}

/** Keys distinct per query when numbering the stored visitors (migration 5). */
const CONVERT_KEYS = 50_000;

/**
 * Migration 5: `events` with dense visitor numbers in place of the keys. `visitor` is in the sorting key, which
 * ALTER cannot change, so the rows are copied into a new table with the numbers (the stored keys numbered per
 * project through the SQL dictionary, as new ones are), counted, and swapped in with EXCHANGE TABLES (atomic);
 * the materialised views that read `events` are made again over the new table. Run with ingest stopped (every
 * process of the older version): rows appended to the old table during the copy would be left behind in it.
 * Re-running it after it is done (or on a cluster made by clusteredDdl, whose `events_local` has numbers) only
 * makes the views if missing.
 */
async function denseVisitorNumbers(ch: ClickHouseExecutor, ctx: MigrationContext): Promise<void> {
  const visitorType = async () =>
    (await ch.query<{ type: string }>("SELECT type FROM system.columns WHERE database = currentDatabase() AND table = 'events' AND name = 'visitor'"))[0]?.type;
  if ((await visitorType()) === 'String') {
    const [t] = await ch.query<{ engine: string }>("SELECT engine FROM system.tables WHERE database = currentDatabase() AND name = 'events'");
    if (t?.engine !== 'MergeTree')
      throw new Error(
        `ClickHouse migration 5 (dense visitor numbers) converts a single node's events only; this events table is ${t?.engine}: see docs/scaling.md`,
      );
    const numbering = ctx.numbering;
    if (!numbering) throw new Error('ClickHouse migration 5 (dense visitor numbers) needs the SQL database to number the stored visitors');
    const suffix = randomBytes(6).toString('hex');
    const copy = `events_v5_${suffix}`;
    const map = `visitor_numbers_v5_${suffix}`;
    const keysTable = `visitor_keys_v5_${suffix}`;
    try {
      await ch.command(
        `CREATE TABLE ${copy} (\n${EVENTS_COLUMNS_5}\n) ENGINE = MergeTree PARTITION BY ${EVENTS_PARTITION} ORDER BY ${EVENTS_ORDER} ${EVENTS_SETTINGS}`,
      );
      await ch.command(`CREATE TABLE ${map} (project LowCardinality(String), visitor String, num UInt32) ENGINE = MergeTree ORDER BY (project, visitor)`);
      // The distinct keys once (one read of the two columns), then paged through by their primary key.
      await ch.command(`CREATE TABLE ${keysTable} (project LowCardinality(String), visitor String) ENGINE = MergeTree ORDER BY (project, visitor)`);
      await ch.command(`INSERT INTO ${keysTable} SELECT project, visitor FROM events GROUP BY project, visitor`);
      for (const { p } of await ch.query<{ p: string }>(`SELECT DISTINCT project AS p FROM ${keysTable} ORDER BY p`)) {
        for (let after: string | null = null; ; ) {
          const keys = (
            await ch.query<{ v: string }>(
              `SELECT visitor AS v FROM ${keysTable} WHERE project = {p:String}${after === null ? '' : ' AND visitor > {after:String}'} ORDER BY v LIMIT ${CONVERT_KEYS}`,
              { p, ...(after === null ? {} : { after }) },
            )
          ).map((r) => r.v);
          if (keys.length === 0) break;
          const numbers = await numbering.numbers(p, keys);
          await ch.insert(
            map,
            keys.map((k) => ({ project: p, visitor: k, num: numbers.get(k) })),
          );
          after = keys[keys.length - 1] as string;
          if (keys.length < CONVERT_KEYS) break;
        }
        const fields = EVENT_FIELDS.map((f) => (f === 'visitor' ? 'm.num' : `e.${f}`)).join(', ');
        await ch.command(
          `INSERT INTO ${copy} (${EVENT_FIELDS.join(', ')}) SELECT ${fields}
           FROM events AS e INNER JOIN (SELECT visitor, num FROM ${map} WHERE project = {p:String}) AS m ON e.visitor = m.visitor
           WHERE e.project = {p:String}`,
          { p },
        );
      }
      const count = async (table: string) => Number((await ch.query<{ n: string }>(`SELECT count() AS n FROM ${table}`))[0]?.n ?? 0);
      const [before, after] = [await count('events'), await count(copy)];
      if (before !== after) throw new Error(`ClickHouse migration 5: copied ${after} of ${before} events (ingest must be stopped while it runs)`);
      if ((await visitorType()) === 'String') {
        await ch.command('DROP VIEW IF EXISTS data_days_mv');
        await ch.command('DROP VIEW IF EXISTS dedup_keys_mv');
        await ch.command(`EXCHANGE TABLES events AND ${copy}`);
      }
    } finally {
      await ch.command(`DROP TABLE IF EXISTS ${copy}`);
      await ch.command(`DROP TABLE IF EXISTS ${map}`);
      await ch.command(`DROP TABLE IF EXISTS ${keysTable}`);
    }
  }
  await ch.command(`CREATE MATERIALIZED VIEW IF NOT EXISTS data_days_mv TO data_days AS ${DATA_DAYS_SELECT}`);
  await ch.command(`CREATE MATERIALIZED VIEW IF NOT EXISTS dedup_keys_mv TO dedup_keys AS ${DEDUP_KEYS_SELECT}`);
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
  {
    // Storage: the visitor keys were half of it (16.6 of 34.5 bytes per event on bench:scale's 1M events: random
    // 128-bit identifiers, which no order or codec compresses); dense numbers take far less (docs/clickhouse.md).
    version: 5,
    name: 'dense visitor numbers',
    statements: [],
    run: denseVisitorNumbers,
  },
];

/** Applies the migrations not recorded yet, in order; returns the versions applied now. */
export async function migrateClickHouse(
  ch: ClickHouseExecutor,
  migrations: readonly ClickHouseMigration[] = CLICKHOUSE_MIGRATIONS,
  ctx: MigrationContext = {},
): Promise<number[]> {
  await ch.command(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String, applied_at DateTime DEFAULT now()) ENGINE = ReplacingMergeTree ORDER BY version',
  );
  const done = new Set((await ch.query<{ version: number }>('SELECT DISTINCT version FROM schema_migrations')).map((r) => Number(r.version)));
  const applied: number[] = [];
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    for (const sql of m.statements) await ch.command(sql);
    await m.run?.(ch, ctx);
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
