// The DDL of the analytics tables on a ClickHouse cluster (docs/scaling.md). Not applied by Inkwell: an
// operator runs it once, ON CLUSTER, before the first start (the migrations then find their tables and only
// record themselves; migration 2's backfill reads the empty `events`, the ALTERs of migrations 3 and 4 on the
// Distributed `events` change its metadata only, migration 5 finds the visitor numbers of EVENTS_COLUMNS_5,
// migrations 6, 7 and 8 leave a Distributed table alone: the per-day visitor states are made here), then points
// CLICKHOUSE_URL at any node. A cluster made without the states gets them with clusterStatesUpgrade below.
// The shard-local `events_local` has migration 6's layout plus `seq`, which a single node drops in migration 6:
// migration 3 alters it on the Distributed table, so the column must be there; the store no longer writes it, so it
// holds zeros (a few bytes per part) and nothing reads it.
// The store's reads run unchanged: `events`, `data_days`, `dedup_keys`, `visitor_states`, `visitor_days` and
// `visitor_state_rebuilds` are Distributed tables over the shard-local, replicated `…_local` tables.
// Reclassification needs CLICKHOUSE_CLUSTER (reclassifyDdl below).
//
// Why the answers stay exact: a Distributed query has every shard aggregate its own rows and the initiator
// merge the partial states. The states here are uniqExact's sets and groupBitmap's bitmaps (of the visitors' dense
// numbers, assigned by the one SQL dictionary: a number names the same visitor on every shard) and counts: the
// union of sets and the sum of counts of disjoint row sets are exactly the single-node answer, whichever shard
// holds a row. Sharded by project, one project's rows are on one shard; sharded by project and visitor (a project
// too big for one shard), a visitor's rows are on one shard and the sets union across shards. A shard's rows of
// visitor states are made by its own materialised views from its own events (and by a rebuild's insert through the
// Distributed tables, on whichever shard): the union over every shard's rows of a (project, day, path) or a
// (project, day) is the set of that day's visitors (of the path), as on one node.
// test/analytics/clickhouse-cluster.test.ts checks both against the single-node tables (through chdb: plain
// engines for the shards, a Merge table for the Distributed one; the replicated DDL is checked to parse).
import type { Settings } from './executor.ts';
import {
  DATA_DAYS_SELECT,
  DEDUP_KEYS_SELECT,
  EVENTS_COLUMNS_6,
  EVENTS_ORDER_6,
  EVENTS_PARTITION,
  type StateTable,
  VISITOR_DAYS_COLUMNS,
  VISITOR_STATES_COLUMNS,
  visitorDaysSelect,
  visitorStatesSelect,
} from './migrations.ts';

export interface ClusterDdlOptions {
  /** The cluster's name (remote_servers in the servers' configuration). */
  cluster: string;
  /** `project`: a project's events on one shard; `visitor`: spread by project and visitor (a project too big for one shard). */
  shardBy?: 'project' | 'visitor';
  /** Raw events older than this many days are deleted by a TTL (unset: kept). Answers for older days then change. */
  retentionDays?: number;
}

/** `s` if it is a plain ClickHouse identifier (it goes into SQL text), else throws. */
export const name = (s: string) => {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(s)) throw new Error(`not a ClickHouse identifier: ${JSON.stringify(s)}`);
  return s;
};

/** The columns of `events_local`: migration 6's, and `seq` (always 0: see above). */
const LOCAL_EVENTS_COLUMNS = EVENTS_COLUMNS_6.replace('        ts Int64', '        seq UInt64 CODEC(T64, ZSTD(3)),\n        ts Int64');

export const SHARD_KEYS = { project: 'cityHash64(project)', visitor: 'cityHash64(project, visitor)' } as const;

type LocalOptions = { replicated: boolean; cluster?: string; retentionDays?: number };

const onCluster = (o: { cluster?: string | undefined }) => (o.cluster ? ` ON CLUSTER ${name(o.cluster)}` : '');
const localEngine = (o: LocalOptions, kind: 'MergeTree' | 'ReplacingMergeTree' | 'AggregatingMergeTree', table: string, version?: string) =>
  o.replicated
    ? `Replicated${kind}('/clickhouse/tables/{shard}/{database}/${table}', '{replica}'${version ? `, ${version}` : ''})`
    : `${kind}${version ? `(${version})` : ''}`;
const retention = (o: LocalOptions) => (o.retentionDays ? `\n      TTL toDate(greatest(day, 0)) + INTERVAL ${Math.trunc(o.retentionDays)} DAY DELETE` : '');

/**
 * The shard-local per-day visitor states (migrations 7 and 8's tables, cluster-ready): `visitor_states_local` and
 * `visitor_days_local`, filled by their views from every insert into the shard's `events_local`, and
 * `visitor_state_rebuilds_local`. The states expire with the raw events (the same retention TTL).
 */
export function shardLocalStatesDdl(o: LocalOptions): string[] {
  const on = onCluster(o);
  return [
    `CREATE TABLE IF NOT EXISTS visitor_states_local${on} (${VISITOR_STATES_COLUMNS}) ENGINE = ${localEngine(o, 'AggregatingMergeTree', 'visitor_states_local')}
      PARTITION BY ${EVENTS_PARTITION} ORDER BY (project, path, day)${retention(o)}
      SETTINGS fsync_after_insert = 1, fsync_part_directory = 1`,
    `CREATE TABLE IF NOT EXISTS visitor_state_rebuilds_local${on} (project LowCardinality(String), id String, done UInt8)
      ENGINE = ${localEngine(o, 'ReplacingMergeTree', 'visitor_state_rebuilds_local', 'done')} ORDER BY (project, id)
      SETTINGS fsync_after_insert = 1, fsync_part_directory = 1`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS visitor_states_mv${on} TO visitor_states_local AS
      ${visitorStatesSelect().replace('FROM events ', 'FROM events_local ')}`,
    `CREATE TABLE IF NOT EXISTS visitor_days_local${on} (${VISITOR_DAYS_COLUMNS}) ENGINE = ${localEngine(o, 'AggregatingMergeTree', 'visitor_days_local')}
      PARTITION BY ${EVENTS_PARTITION} ORDER BY (project, day)${retention(o)}
      SETTINGS fsync_after_insert = 1, fsync_part_directory = 1`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS visitor_days_mv${on} TO visitor_days_local AS
      ${visitorDaysSelect().replace('FROM events ', 'FROM events_local ')}`,
  ];
}

/**
 * The shard-local tables: `events_local`, `data_days_local`, `dedup_keys_local`, the visitor states' tables and the
 * materialised views between them. `replicated` picks Replicated* engines (production, with ON CLUSTER); plain
 * engines serve a test's stand-in shards.
 */
export function shardLocalDdl(o: LocalOptions): string[] {
  const on = onCluster(o);
  return [
    `CREATE TABLE IF NOT EXISTS events_local${on} (
${LOCAL_EVENTS_COLUMNS}
      ) ENGINE = ${localEngine(o, 'MergeTree', 'events_local')}
      PARTITION BY ${EVENTS_PARTITION}
      ORDER BY ${EVENTS_ORDER_6}${retention(o)}
      SETTINGS fsync_after_insert = 1, fsync_part_directory = 1`,
    `CREATE TABLE IF NOT EXISTS data_days_local${on} (project LowCardinality(String), day Int32) ENGINE = ${localEngine(o, 'ReplacingMergeTree', 'data_days_local')}
      ORDER BY (project, day) SETTINGS fsync_after_insert = 1, fsync_part_directory = 1`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS data_days_mv${on} TO data_days_local AS
      ${DATA_DAYS_SELECT.replace('FROM events ', 'FROM events_local ')}`,
    `CREATE TABLE IF NOT EXISTS dedup_keys_local${on} (project LowCardinality(String), key String CODEC(ZSTD(3))) ENGINE = ${localEngine(o, 'ReplacingMergeTree', 'dedup_keys_local')}
      ORDER BY (project, key) SETTINGS fsync_after_insert = 1, fsync_part_directory = 1`,
    `CREATE MATERIALIZED VIEW IF NOT EXISTS dedup_keys_mv${on} TO dedup_keys_local AS ${DEDUP_KEYS_SELECT.replace('FROM events ', 'FROM events_local ')}`,
    ...shardLocalStatesDdl(o),
  ];
}

/**
 * The Distributed tables of the states, the marks' first: the store reads a table of states once a table of its
 * name exists (clickhouse-store.ts hasStates), so it must not exist before its states are whole.
 */
function distributedStatesDdl(cluster: string): string[] {
  return ['visitor_state_rebuilds', 'visitor_days', 'visitor_states'].map(
    (t) => `CREATE TABLE IF NOT EXISTS ${t} ON CLUSTER ${cluster} AS ${t}_local
      ENGINE = Distributed(${cluster}, currentDatabase(), ${t}_local, ${SHARD_KEYS.project})`,
  );
}

/** Every statement, in order, for a cluster: the replicated shard-local tables, then the Distributed ones. */
export function clusteredDdl(o: ClusterDdlOptions): string[] {
  const cluster = name(o.cluster);
  const key = SHARD_KEYS[o.shardBy ?? 'project'];
  return [
    ...shardLocalDdl({ replicated: true, cluster, ...(o.retentionDays ? { retentionDays: o.retentionDays } : {}) }),
    `CREATE TABLE IF NOT EXISTS events ON CLUSTER ${cluster} AS events_local
      ENGINE = Distributed(${cluster}, currentDatabase(), events_local, ${key})`,
    `CREATE TABLE IF NOT EXISTS data_days ON CLUSTER ${cluster} AS data_days_local
      ENGINE = Distributed(${cluster}, currentDatabase(), data_days_local, ${SHARD_KEYS.project})`,
    `CREATE TABLE IF NOT EXISTS dedup_keys ON CLUSTER ${cluster} AS dedup_keys_local
      ENGINE = Distributed(${cluster}, currentDatabase(), dedup_keys_local, ${SHARD_KEYS.project})`,
    ...distributedStatesDdl(cluster),
  ];
}

/**
 * Per-day visitor states for a cluster made without them (docs/scaling.md), in three steps run in order:
 * `create` (ON CLUSTER: the shard-local tables and the view, which from then on makes the states of every insert);
 * `perShard`, on one replica of every shard (it waits until that replica holds every part of its shard, then makes
 * the states of the events stored before the view: rows inserted meanwhile get states twice, which a union counts
 * once); then `publish` (ON CLUSTER: the Distributed tables; processes started after it read the states).
 */
export function clusterStatesUpgrade(o: { cluster: string; retentionDays?: number }) {
  const cluster = name(o.cluster);
  return {
    create: shardLocalStatesDdl({ replicated: true, cluster, ...(o.retentionDays ? { retentionDays: o.retentionDays } : {}) }),
    perShard: [
      'SYSTEM SYNC REPLICA events_local',
      `INSERT INTO visitor_states_local ${visitorStatesSelect().replace('FROM events ', 'FROM events_local ')}`,
      `INSERT INTO visitor_days_local ${visitorDaysSelect().replace('FROM events ', 'FROM events_local ')}`,
    ],
    publish: distributedStatesDdl(cluster),
  };
}

/** The classification inputs of an event, hashed: what reclassification groups by (128 bits: no collisions in practice). */
export const INPUT_KEY =
  "hex(sipHash128(isNull(user_agent), ifNull(user_agent, ''), raw_path, isNull(accept), ifNull(accept, ''), isNull(method), ifNull(method, ''), isNull(status), ifNull(status, 0), path))";

/**
 * The statements of one reclassification's rewrite (clickhouse-store.ts), in order: `createRows` (a table of the
 * changed classification inputs: project `p`, input key `k`, and the number `n` of their new (class, category,
 * rule, qualifying), whose values every row of that number carries), an insert of them into `rowsTable`,
 * `prepare`, `mutate(targets)` (one mutation of the events table, with `mutateSettings`; `kill` stops it if it
 * fails), `clearStates(table)` (for each table of visitor states the database has: deletes the project's, with
 * `mutateSettings`, before the store makes them again from the rewritten events), `drop`. The statements hold only
 * the store's own names and numbers — no request value, no query parameter — so they can go ON CLUSTER (a host
 * runs the text it is sent, without the initiator's parameters).
 *
 * Single node: the rows go into a Join table and the mutation sets each row's classes with joinGet, one pass.
 * On a cluster the mutation targets the shard-local `events_local` ON CLUSTER (a Distributed table takes no
 * mutation), and every host must read the new classes. A per-host Join table would have to be filled by
 * CREATE … ON CLUSTER … AS SELECT, which servers have not run reliably (ClickHouse issue 95170), and a dictionary
 * by a source with credentials in its DDL; so the rows table itself is read: it is a ReplicatedMergeTree whose
 * path has no {shard} (one table shared by every host; the insert on this node replicates), SYNC REPLICA ON
 * CLUSTER waits until every host holds all of it, and the mutation has one UPDATE per target number, each taking
 * its values from scalar subqueries and its inputs from an IN subquery (about 2x the single node's time through
 * chdb). Subqueries in a replicated table's mutation need `allow_nondeterministic_mutations`; every replica reads
 * the same rows. The initiator waits until every host has finished (`mutations_sync = 2`, no DDL timeout: a slow
 * mutation must not look failed and be killed).
 */
export function reclassifyDdl(o: { database: string; table: string; cluster?: string }) {
  const db = name(o.database);
  const t = name(o.table);
  const on = o.cluster ? ` ON CLUSTER ${name(o.cluster)}` : '';
  const events = o.cluster ? 'events_local' : 'events';
  const engine = o.cluster ? `ReplicatedMergeTree('/clickhouse/tables/all/{database}/${t}', '{shard}-{replica}')` : 'MergeTree';
  const rows = `${db}.${t}`;
  const join = `${db}.${t}_join`;
  // The Join key: the project, then the input key (32 hex digits: the pair is unambiguous).
  const key = `concat(project, ${INPUT_KEY})`;
  const get = (column: string) => `joinGet('${join}', '${column}', ${key})`;
  return {
    rowsTable: t,
    createRows: `CREATE TABLE ${rows}${on} (p String, k String, n UInt32, cls String, category Nullable(String), rule Nullable(String), qualifying UInt8)
      ENGINE = ${engine} ORDER BY (n, p, k)`,
    prepare: o.cluster
      ? [`SYSTEM SYNC REPLICA${on} ${rows}`]
      : [`CREATE TABLE ${join} ENGINE = Join(ANY, LEFT, pk) AS SELECT concat(p, k) AS pk, cls, category, rule, qualifying FROM ${rows}`],
    /** The mutation, for target numbers 0 … targets - 1. */
    mutate(targets: number): string {
      if (!o.cluster)
        return `ALTER TABLE ${db}.${events} UPDATE cls = ${get('cls')}, category = ${get('category')}, rule = ${get('rule')}, qualifying = ${get('qualifying')}
      WHERE project IN (SELECT p FROM ${rows}) AND ${key} IN (SELECT pk FROM ${join})`;
      const updates: string[] = [];
      for (let n = 0; n < targets; n++) {
        const value = (column: string) => `(SELECT any(${column}) FROM ${rows} WHERE n = ${Math.trunc(n)})`;
        updates.push(
          `UPDATE cls = ${value('cls')}, category = ${value('category')}, rule = ${value('rule')}, qualifying = ${value('qualifying')}
        WHERE project IN (SELECT p FROM ${rows}) AND (project, ${INPUT_KEY}) IN (SELECT p, k FROM ${rows} WHERE n = ${Math.trunc(n)})`,
        );
      }
      return `ALTER TABLE ${db}.${events}${on}\n      ${updates.join(',\n      ')}`;
    },
    clearStates: (states: StateTable) => `ALTER TABLE ${db}.${name(states)}${o.cluster ? '_local' : ''}${on} DELETE WHERE project IN (SELECT p FROM ${rows})`,
    mutateSettings: (o.cluster
      ? { mutations_sync: 2, allow_nondeterministic_mutations: 1, distributed_ddl_task_timeout: -1 }
      : { mutations_sync: 2 }) as Settings,
    kill: `KILL MUTATION${on} WHERE database = '${db}' AND table = '${events}' AND position(command, '${t}') > 0`,
    drop: [...(o.cluster ? [] : [`DROP TABLE IF EXISTS ${join} SYNC`]), `DROP TABLE IF EXISTS ${rows}${on} SYNC`],
  };
}
