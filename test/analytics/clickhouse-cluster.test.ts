// The clustered DDL (src/analytics/clickhouse/cluster-ddl.ts) against the single-node tables, as far as chdb
// allows: chdb has no Keeper (no Replicated* tables) and no cluster (no Distributed table), so the replicated DDL
// is checked to parse, and the shards are stood in for by two databases holding the shard-local DDL with plain
// engines, read through Merge tables named as the Distributed ones. The same events — single node, or split
// between the shards by project, or by project and visitor — give every read the same answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChdbExecutor, dropChdbDatabase } from '../../src/analytics/clickhouse/chdb-executor.ts';
import {
  type ClickHouseAnalyticsStore,
  createClickHouseAnalyticsStore,
  openClickHouseAnalyticsStore,
} from '../../src/analytics/clickhouse/clickhouse-store.ts';
import { clusteredDdl, reclassifyDdl, SHARD_KEYS, shardLocalDdl } from '../../src/analytics/clickhouse/cluster-ddl.ts';
import type { ClickHouseExecutor } from '../../src/analytics/clickhouse/executor.ts';
import { INTERVALS } from '../../src/analytics/export/series.ts';
import { packEvents, type WriteEvent } from '../../src/analytics/ingest/write-batch.ts';
import type { RangeQuery } from '../../src/analytics/store/analytics-store.ts';
import { openChdb, type TestClickHouse } from '../helpers/clickhouse.ts';

/** The single node's columns since migration 6 (the shard-local tables also have `seq`, always 0). */
const SINGLE_COLUMNS = [
  'project',
  'day',
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
].join(', ');
const BASE_DAY = 20_500;
const PROJECTS = ['prj_a', 'prj_b', 'prj_c'];
const AGENTS: [cls: 'ai' | 'crawler', rule: string, category: string | null][] = [
  ['ai', 'ChatGPT-User', null],
  ['crawler', 'Googlebot', 'search'],
  ['crawler', 'GPTBot', 'training'],
];

/** A deterministic pseudo-random history: pages, assets, classes, referrers, statuses over 40 days. */
function events(seed: number, n: number): WriteEvent[] {
  let x = seed;
  const rnd = (k: number) => {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    return x % k;
  };
  const out: WriteEvent[] = [];
  for (let i = 0; i < n; i++) {
    const day = BASE_DAY + rnd(40);
    const path = `/p${rnd(30)}${rnd(10) === 0 ? '.png' : ''}`;
    const human = rnd(3) > 0;
    const [cls, rule, category] = human ? (['human', null, null] as const) : (AGENTS[rnd(AGENTS.length)] as (typeof AGENTS)[number]);
    const status = [200, 200, 304, 404][rnd(4)] as number;
    const qualifying = cls !== 'crawler' && status !== 404 && !path.endsWith('.png') ? 1 : 0;
    const referrer = ['https://www.google.com/', null, 'https://news.example/x'][rnd(3)] ?? null;
    out.push([day * 86_400_000 + rnd(86_400_000), day, path, path, `v${rnd(400)}`, null, null, 'GET', status, referrer, cls, category, rule, qualifying, null]);
  }
  return out;
}

const RANGES: RangeQuery[] = [
  { fromDay: null, toDay: null },
  { fromDay: BASE_DAY + 5, toDay: BASE_DAY + 30 },
  { fromDay: BASE_DAY + 10, toDay: null },
];

async function answers(store: ClickHouseAnalyticsStore) {
  const out: Record<string, unknown> = {};
  for (const projectId of PROJECTS)
    for (const [i, r] of RANGES.entries()) {
      for (const kind of ['visitors', 'views'] as const)
        out[`${projectId} ${kind} ${i}`] = await store[kind]({ projectId, walkId: `w${i}`, ...r, offset: 0, limit: 1000 });
      for (const interval of INTERVALS) out[`${projectId} series ${interval} ${i}`] = await store.series(projectId, { ...r, interval });
      out[`${projectId} agents ${i}`] = await store.agents(projectId, { ...r, offset: 0, limit: 100 });
      out[`${projectId} referrers ${i}`] = await store.referrers(projectId, { ...r, offset: 0, limit: 100 });
    }
  return out;
}

describe('clustered DDL', () => {
  let single: TestClickHouse;
  let singleStore: ClickHouseAnalyticsStore;
  let expected: Record<string, unknown>;
  beforeAll(async () => {
    single = await openChdb();
    singleStore = await openClickHouseAnalyticsStore({ ch: single.ch, numbering: single.numbering, now: Date.now });
    for (const [k, projectId] of PROJECTS.entries()) await singleStore.append(projectId, 'api', packEvents(events(k + 1, 1500)));
    expected = await answers(singleStore);
  });
  afterAll(async () => {
    await single?.cleanup();
  });

  it('parses (as ClickHouse reads it): replicated shard-local tables, Distributed tables, TTL', async () => {
    for (const ddl of [clusteredDdl({ cluster: 'inkwell' }), clusteredDdl({ cluster: 'inkwell', shardBy: 'visitor', retentionDays: 400 })]) {
      for (const sql of ddl) {
        const [row] = await single.ch.query<{ f: string }>('SELECT formatQuery({q:String}) AS f', { q: sql });
        expect(row?.f).toMatch(/^(CREATE|ALTER) /);
      }
      expect(ddl.join('\n')).toMatch(/ReplicatedMergeTree\('\/clickhouse\/tables\/\{shard\}\/\{database\}\/events_local', '\{replica\}'\)/);
      expect(ddl.join('\n')).toMatch(/Distributed\(inkwell, currentDatabase\(\), events_local, cityHash64\(project/);
    }
    expect(clusteredDdl({ cluster: 'c', retentionDays: 400 })[0]).toContain('TTL toDate(greatest(day, 0)) + INTERVAL 400 DAY DELETE');
    expect(() => clusteredDdl({ cluster: 'x; DROP' })).toThrow(/identifier/);
  });

  it('reclassifies on a cluster through the shard-local tables ON CLUSTER, with no request value in the text', async () => {
    const ddl = reclassifyDdl({ database: 'inkwell', table: 'reclass_0123', cluster: 'inkwell' });
    const all = [ddl.createRows, ...ddl.prepare, ddl.mutate(3), ddl.kill, ...ddl.drop];
    for (const sql of all) {
      expect(sql).toContain(' ON CLUSTER inkwell');
      const [row] = await single.ch.query<{ f: string }>('SELECT formatQuery({q:String}) AS f', { q: sql });
      expect(row?.f).toMatch(/^(CREATE|ALTER|SYSTEM|KILL|DROP) /);
    }
    expect(ddl.mutate(3)).toMatch(/^ALTER TABLE inkwell\.events_local ON CLUSTER inkwell\s+UPDATE /);
    expect(ddl.mutate(3).match(/UPDATE cls = /g)).toHaveLength(3);
    expect(ddl.kill).toContain("table = 'events_local'");
    // One rows table for every host of the cluster (no {shard} in its path), synced everywhere before the mutation reads it.
    expect(ddl.createRows).toContain("ReplicatedMergeTree('/clickhouse/tables/all/{database}/reclass_0123', '{shard}-{replica}')");
    expect(ddl.prepare).toEqual(['SYSTEM SYNC REPLICA ON CLUSTER inkwell inkwell.reclass_0123']);
    expect(ddl.mutateSettings).toMatchObject({ mutations_sync: 2, allow_nondeterministic_mutations: 1, distributed_ddl_task_timeout: -1 });
    expect(all.join('\n')).not.toMatch(/\{[a-z]+:[A-Za-z]/); // no query parameters: a host runs the text alone
    expect(all.join('\n')).not.toMatch(/AS SELECT|joinGet|dictGet/); // nothing a host would have to fill for itself
    const local = reclassifyDdl({ database: 'inkwell', table: 'reclass_0123' });
    expect(local.mutate(1)).toMatch(/^ALTER TABLE inkwell\.events\s+UPDATE /);
    expect([local.createRows, ...local.prepare, local.mutate(2), local.kill, ...local.drop].join('\n')).not.toContain('ON CLUSTER');
    expect(() => reclassifyDdl({ database: 'inkwell', table: 'r', cluster: "x'; DROP" })).toThrow(/identifier/);
  });

  it("reclassifies the shards' events as the single node does (ON CLUSTER run on each stand-in shard)", async () => {
    const base = `inkwell_cluster_${Date.now()}_reclass`;
    const shardDbs = [0, 1].map((i) => `${base}_shard${i}`);
    const shards = shardDbs.map((db) => createChdbExecutor(db));
    const dist = createChdbExecutor(`${base}_dist`);
    const reference = await openChdb();
    try {
      const refStore = await openClickHouseAnalyticsStore({ ch: reference.ch, numbering: reference.numbering, now: Date.now });
      for (const [k, projectId] of PROJECTS.entries()) await refStore.append(projectId, 'api', packEvents(events(k + 1, 1500)));
      for (const [i, shard] of shards.entries()) {
        for (const sql of shardLocalDdl({ replicated: false })) await shard.command(sql);
        await shard.command(
          `INSERT INTO events_local (${SINGLE_COLUMNS}) SELECT ${SINGLE_COLUMNS} FROM ${reference.ch.database}.events WHERE ${SHARD_KEYS.project} % 2 = {i:UInt8}`,
          { i },
        );
      }
      await dist.command(`CREATE TABLE events AS ${base}_shard0.events_local ENGINE = Merge(REGEXP('^${base}_shard'), '^events_local$')`);
      await dist.command(`CREATE TABLE data_days AS ${base}_shard0.data_days_local ENGINE = Merge(REGEXP('^${base}_shard'), '^data_days_local$')`);
      // What ON CLUSTER does, in one process: the statements on the events tables run on every shard; the others once
      // (every stand-in host sees the initiator's tables); SYNC REPLICA has nothing to wait for; a Distributed insert
      // into data_days lands on a shard.
      const onCluster: ClickHouseExecutor = {
        ...dist,
        async command(sql, params, settings) {
          if (sql.startsWith('INSERT INTO data_days '))
            return shards[0]!.command(
              sql.replace('INSERT INTO data_days ', `INSERT INTO ${shardDbs[0]}.data_days_local `).replace(' FROM events', ` FROM ${dist.database}.events`),
              params,
              settings,
            );
          if (!sql.includes(' ON CLUSTER inkwell')) return dist.command(sql, params, settings);
          const local = sql.replace(' ON CLUSTER inkwell', '').replace(/ReplicatedMergeTree\('[^']*', '[^']*'\)/, 'MergeTree');
          if (local.startsWith('SYSTEM SYNC REPLICA')) return;
          if (!local.includes('events_local')) return dist.command(local, params, settings);
          for (const [i, shard] of shards.entries())
            await shard.command(
              local.replaceAll(`${dist.database}.events_local`, `${shardDbs[i]}.events_local`).replaceAll(`'${dist.database}'`, `'${shardDbs[i]}'`),
              params,
              settings,
            );
        },
      };
      const clustered = createClickHouseAnalyticsStore({ ch: onCluster, numbering: reference.numbering, now: Date.now, cluster: 'inkwell' });
      for (const projectId of PROJECTS) {
        const want = await refStore.reclassify(projectId);
        expect(want.changed).toBeGreaterThan(0);
        expect(await clustered.reclassify(projectId)).toEqual(want);
      }
      expect(await answers(clustered)).toEqual(await answers(refStore));
      expect(await answers(refStore)).not.toEqual(expected);
      await refStore.close();
    } finally {
      await reference.cleanup();
      for (const db of [`${base}_dist`, ...shardDbs]) await dropChdbDatabase(db);
    }
  });

  for (const shardBy of ['project', 'visitor'] as const) {
    it(`gives the single node's answers with the events split between two shards by ${shardBy}`, async () => {
      const base = `inkwell_cluster_${Date.now()}_${shardBy}`;
      const shards = [0, 1].map((i) => createChdbExecutor(`${base}_shard${i}`));
      const dist = createChdbExecutor(`${base}_dist`);
      try {
        for (const [i, shard] of shards.entries()) {
          for (const sql of shardLocalDdl({ replicated: false })) await shard.command(sql);
          await shard.command(
            `INSERT INTO events_local (${SINGLE_COLUMNS}) SELECT ${SINGLE_COLUMNS} FROM ${single.ch.database}.events WHERE ${SHARD_KEYS[shardBy]} % 2 = {i:UInt8}`,
            { i },
          );
        }
        const counts = await Promise.all(shards.map(async (s) => Number((await s.query<{ n: string }>('SELECT count() AS n FROM events_local'))[0]?.n)));
        expect(counts.every((n) => n > 0)).toBe(true);
        expect(counts[0]! + counts[1]!).toBe(4500);
        // The stand-in for the Distributed tables: the shards' tables read as one.
        await dist.command(`CREATE TABLE events AS ${base}_shard0.events_local ENGINE = Merge(REGEXP('^${base}_shard'), '^events_local$')`);
        await dist.command(`CREATE TABLE data_days AS ${base}_shard0.data_days_local ENGINE = Merge(REGEXP('^${base}_shard'), '^data_days_local$')`);
        expect(await answers(createClickHouseAnalyticsStore({ ch: dist, numbering: single.numbering, now: Date.now }))).toEqual(expected);
        // What a Distributed query does: each shard's partial state (a uniqExact set), merged at the initiator.
        for (const p of PROJECTS) {
          const [merged] = await dist.query<{ n: string }>(
            `SELECT uniqExactMerge(s) AS n FROM (
               SELECT uniqExactState(visitor) AS s FROM ${base}_shard0.events_local WHERE project = {p:String} AND qualifying = 1
               UNION ALL SELECT uniqExactState(visitor) AS s FROM ${base}_shard1.events_local WHERE project = {p:String} AND qualifying = 1)`,
            { p },
          );
          const [whole] = await single.ch.query<{ n: string }>('SELECT uniqExact(visitor) AS n FROM events WHERE project = {p:String} AND qualifying = 1', {
            p,
          });
          expect(merged?.n).toBe(whole?.n);
        }
      } finally {
        for (const db of [`${base}_dist`, `${base}_shard0`, `${base}_shard1`]) await dropChdbDatabase(db);
      }
    });
  }
});
