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
// - since migration 6, `events` is sorted by (project, path, day, visitor), every column ZSTD-compressed, and has no
//   insertion order (`seq`): an agent's class in the agents breakdown is that of its earliest (day, ts) event, as in
//   the embedded store (a rule names one class under one set of rules, so this matters only for events stored
//   under older rules and not reclassified yet).
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
// Distinct visitors are counted by GROUP BY on the number (the visitors export from raw events) or by uniqExact
// (series, agents, referrers), which for a UInt32 keeps the numbers themselves: a set, not a sketch, no hashing.
// Where partial results are merged (several parts, several shards: docs/scaling.md), they are such sets and their
// union is exact.
// The pre-aggregates (migrations 7 and 8): `visitor_states` holds, per (project, day, path), the bitmaps
// (groupBitmap: the numbers themselves, roaring-compressed; no hashing) of the visitors of that day's qualifying
// views of the path, human and not, made from `events` rows by a materialised view in the same insert (and from
// the stored rows once, by the migration). A (project, day, path) may have several rows (one per insert, until
// merges fold them); a read takes the union of its window's rows, so a row made twice (a retried insert, the
// migration's fill overlapping the view) changes nothing, and the union over a window's days equals the distinct
// numbers of the raw rows that query would read. The states follow the events' classes: reclassification marks
// the project's states as being rebuilt (`visitor_state_rebuilds`) before its mutation, then deletes and remakes
// them from the rewritten events and marks them done; a visitors read uses the states only when no rebuild of
// the project was open or started between its check before and after the read, otherwise the raw events.
// `visitor_days` (migration 8) is the same per (project, day), without the path, for the time series, under the
// same rebuilds and the same rule.
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
/**
 * The columns of `events` since migration 6: those of 5 without the insertion order (`seq`), every column
 * compressed with ZSTD (the small ones had ClickHouse's default, LZ4), the day delta-coded; sorted by EVENTS_ORDER_6.
 * Measured with bench/clickhouse-states.ts on bench:scale's 1M-event year: 20.2 -> 12.8 bytes per event.
 */
export const EVENTS_COLUMNS_6 = `        project LowCardinality(String),
        day Int32 CODEC(Delta, ZSTD(3)),
        ts Int64 CODEC(T64, ZSTD(3)),
        path String CODEC(ZSTD(3)),
        raw_path String CODEC(ZSTD(3)),
        visitor UInt32 CODEC(T64, ZSTD(3)),
        user_agent LowCardinality(Nullable(String)) CODEC(ZSTD(3)),
        accept LowCardinality(Nullable(String)) CODEC(ZSTD(3)),
        method LowCardinality(Nullable(String)) CODEC(ZSTD(3)),
        status Nullable(Int32) CODEC(ZSTD(3)),
        referrer Nullable(String) CODEC(ZSTD(3)),
        ref_host Nullable(String) CODEC(ZSTD(3)),
        cls LowCardinality(String) CODEC(ZSTD(3)),
        category LowCardinality(Nullable(String)) CODEC(ZSTD(3)),
        rule LowCardinality(Nullable(String)) CODEC(ZSTD(3)),
        qualifying UInt8 CODEC(ZSTD(3)),
        view_shape UInt8 CODEC(ZSTD(3)),
        source LowCardinality(String) CODEC(ZSTD(3)),
        dedup_key Nullable(String) CODEC(ZSTD(3)),
        INDEX dedup_idx dedup_key TYPE bloom_filter(0.01) GRANULARITY 1`;
/**
 * The sorting key since migration 6: a path's rows of a month (the partition) together, so the path and the raw
 * path compress to little (they were 5.5 of 18 bytes per event sorted by day first); reads of a day range still
 * skip other months' partitions, and within one by the day after the path.
 */
export const EVENTS_ORDER_6 = '(project, path, day, visitor)';
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
const EVENT_FIELDS_6 = EVENT_FIELDS.filter((f) => f !== 'seq');
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

/**
 * Migration 6: `events` in the layout of EVENTS_COLUMNS_6 / EVENTS_ORDER_6. The sorting key changes, which ALTER
 * cannot do, so, as migration 5 does, the rows are copied into a new table (every column but `seq`), counted, and
 * swapped in with EXCHANGE TABLES (atomic); the materialised views are made again over it. Run with ingest
 * stopped (rows appended to the old table during the copy would be left behind: the count check then stops the
 * start). Re-running it after it is done, or on a cluster (whose Distributed `events` is not a MergeTree:
 * cluster-ddl.ts makes `events_local` in this layout), only makes the views if missing.
 */
async function eventsLayout6(ch: ClickHouseExecutor): Promise<void> {
  const table = async () =>
    (
      await ch.query<{ engine: string; key: string }>(
        "SELECT engine, sorting_key AS key FROM system.tables WHERE database = currentDatabase() AND name = 'events'",
      )
    )[0];
  const t = await table();
  if (t?.engine === 'MergeTree' && t.key !== EVENTS_ORDER_6.slice(1, -1)) {
    const copy = `events_v6_${randomBytes(6).toString('hex')}`;
    try {
      await ch.command(
        `CREATE TABLE ${copy} (\n${EVENTS_COLUMNS_6}\n) ENGINE = MergeTree PARTITION BY ${EVENTS_PARTITION} ORDER BY ${EVENTS_ORDER_6} ${EVENTS_SETTINGS}`,
      );
      await ch.command(`INSERT INTO ${copy} (${EVENT_FIELDS_6.join(', ')}) SELECT ${EVENT_FIELDS_6.join(', ')} FROM events`);
      const count = async (name: string) => Number((await ch.query<{ n: string }>(`SELECT count() AS n FROM ${name}`))[0]?.n ?? 0);
      const [before, after] = [await count('events'), await count(copy)];
      if (before !== after) throw new Error(`ClickHouse migration 6: copied ${after} of ${before} events (ingest must be stopped while it runs)`);
      if ((await table())?.key !== EVENTS_ORDER_6.slice(1, -1)) {
        await ch.command('DROP VIEW IF EXISTS data_days_mv');
        await ch.command('DROP VIEW IF EXISTS dedup_keys_mv');
        await ch.command(`EXCHANGE TABLES events AND ${copy}`);
      }
    } finally {
      await ch.command(`DROP TABLE IF EXISTS ${copy}`);
    }
  }
  await ch.command(`CREATE MATERIALIZED VIEW IF NOT EXISTS data_days_mv TO data_days AS ${DATA_DAYS_SELECT}`);
  await ch.command(`CREATE MATERIALIZED VIEW IF NOT EXISTS dedup_keys_mv TO dedup_keys AS ${DEDUP_KEYS_SELECT}`);
}

/**
 * Per-(project, day, path) visitor states (migration 7): the bitmaps of the visitor numbers with a qualifying view
 * of the path that day, human and not. What the visitors export reads (clickhouse-store.ts) unless a rebuild is
 * under way.
 */
export const VISITOR_STATES_COLUMNS = `project LowCardinality(String), day Int32 CODEC(Delta, ZSTD(3)), path String CODEC(ZSTD(3)),
        humans AggregateFunction(groupBitmap, UInt32) CODEC(ZSTD(3)), others AggregateFunction(groupBitmap, UInt32) CODEC(ZSTD(3))`;
/** The states of `events` rows (of the ones matching `where`, when given). */
export const visitorStatesSelect = (where = '') =>
  `SELECT project, day, path, groupBitmapStateIf(visitor, cls = 'human') AS humans, groupBitmapStateIf(visitor, cls != 'human') AS others
   FROM events WHERE qualifying = 1${where ? ` AND ${where}` : ''} GROUP BY project, day, path`;

/**
 * Per-(project, day) visitor states (migration 8): the same bitmaps without the path, what the time series reads
 * (a bucket's union of its days'), unless a rebuild is under way. Merging a day's ~20k path bitmaps of
 * `visitor_states` cost more than counting the raw rows (bench/README.md, Decisions); one row a day does not.
 */
export const VISITOR_DAYS_COLUMNS = `project LowCardinality(String), day Int32 CODEC(Delta, ZSTD(3)),
        humans AggregateFunction(groupBitmap, UInt32) CODEC(ZSTD(3)), others AggregateFunction(groupBitmap, UInt32) CODEC(ZSTD(3))`;
/** The per-day states of `events` rows (of the ones matching `where`, when given). */
export const visitorDaysSelect = (where = '') =>
  `SELECT project, day, groupBitmapStateIf(visitor, cls = 'human') AS humans, groupBitmapStateIf(visitor, cls != 'human') AS others
   FROM events WHERE qualifying = 1${where ? ` AND ${where}` : ''} GROUP BY project, day`;

/** The tables of visitor states, and what makes a project's states from `events`. */
export const STATE_TABLES = ['visitor_states', 'visitor_days'] as const;
export type StateTable = (typeof STATE_TABLES)[number];
export const STATES_SELECT: Record<StateTable, (where?: string) => string> = { visitor_states: visitorStatesSelect, visitor_days: visitorDaysSelect };

/**
 * Migration 7: `visitor_states`, filled by `visitor_states_mv` in every insert into `events` and, for the events
 * already stored, by one INSERT … SELECT after the view exists (rows inserted meanwhile may land in both: a union
 * of bitmaps counts each number once). Single node only: on a cluster (`events` not a MergeTree) nothing is made
 * and the store reads the raw events (docs/scaling.md).
 */
async function visitorStates(ch: ClickHouseExecutor): Promise<void> {
  const [t] = await ch.query<{ engine: string }>("SELECT engine FROM system.tables WHERE database = currentDatabase() AND name = 'events'");
  if (t?.engine !== 'MergeTree') return;
  await ch.command(
    `CREATE TABLE IF NOT EXISTS visitor_states (${VISITOR_STATES_COLUMNS}) ENGINE = AggregatingMergeTree
     PARTITION BY ${EVENTS_PARTITION} ORDER BY (project, path, day)
     SETTINGS fsync_after_insert = 1, fsync_part_directory = 1, non_replicated_deduplication_window = 10000`,
  );
  await ch.command(
    `CREATE TABLE IF NOT EXISTS visitor_state_rebuilds (project LowCardinality(String), id String, done UInt8)
     ENGINE = ReplacingMergeTree(done) ORDER BY (project, id) SETTINGS fsync_after_insert = 1, fsync_part_directory = 1`,
  );
  await ch.command(`CREATE MATERIALIZED VIEW IF NOT EXISTS visitor_states_mv TO visitor_states AS ${visitorStatesSelect()}`);
  // A start that stopped after this but before recording the migration fills again: harmless (a union).
  await ch.command(`INSERT INTO visitor_states ${visitorStatesSelect()}`);
}

/**
 * Migration 8: `visitor_days`, filled as migration 7 fills `visitor_states` (the view, then the stored events once;
 * a row made twice changes no union). It shares `visitor_state_rebuilds`: a rebuild remakes both. Single node only,
 * as migration 7.
 */
async function visitorDays(ch: ClickHouseExecutor): Promise<void> {
  const [t] = await ch.query<{ engine: string }>("SELECT engine FROM system.tables WHERE database = currentDatabase() AND name = 'events'");
  if (t?.engine !== 'MergeTree') return;
  await ch.command(
    `CREATE TABLE IF NOT EXISTS visitor_days (${VISITOR_DAYS_COLUMNS}) ENGINE = AggregatingMergeTree
     PARTITION BY ${EVENTS_PARTITION} ORDER BY (project, day)
     SETTINGS fsync_after_insert = 1, fsync_part_directory = 1, non_replicated_deduplication_window = 10000`,
  );
  await ch.command(`CREATE MATERIALIZED VIEW IF NOT EXISTS visitor_days_mv TO visitor_days AS ${visitorDaysSelect()}`);
  await ch.command(`INSERT INTO visitor_days ${visitorDaysSelect()}`);
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
  {
    // Storage (bench/clickhouse-states.ts, bench:scale's 1M-event year, 20.2 -> 12.8 bytes per event): the
    // insertion order (`seq`, 1.6-2.7 bytes per event, noise in this order) was read only for each agent's first
    // class, now that of its earliest (day, ts) event; the small columns had LZ4 (ZSTD halves them); sorted by
    // path first, path and raw path shrink from 5.5 to 2.3.
    version: 6,
    name: 'events sorted by path, compressed, without insertion order',
    statements: [],
    run: eventsLayout6,
  },
  {
    // The visitors export from per-day states rather than raw rows (bench/clickhouse-states.ts, bench:scale's
    // 1M-event year: 30 days 387 against 821 ms, 365 days 1,464 against 4,734; 4.3 bytes per event).
    version: 7,
    name: 'per-day visitor states',
    statements: [],
    run: visitorStates,
  },
  {
    // The time series from per-day states rather than raw rows (bench/clickhouse-states.ts; bench/README.md, Decisions).
    version: 8,
    name: 'per-day visitor states without paths',
    statements: [],
    run: visitorDays,
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
