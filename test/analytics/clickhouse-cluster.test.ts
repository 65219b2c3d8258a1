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
import { clusteredDdl, clusterStatesUpgrade, reclassifyDdl, SHARD_KEYS } from '../../src/analytics/clickhouse/cluster-ddl.ts';
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
    // Some people's views carry a crawler's user agent (stored as human, as under older rules): reclassifying them
    // takes their visitors out of the human states.
    const userAgent = human && rnd(8) === 0 ? 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' : null;
    out.push([
      day * 86_400_000 + rnd(86_400_000),
      day,
      path,
      path,
      `v${rnd(400)}`,
      userAgent,
      null,
      'GET',
      status,
      referrer,
      cls,
      category,
      rule,
      qualifying,
      null,
    ]);
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

/**
 * A clustered statement as the stand-in shards run it: without ON CLUSTER, plain engines for Replicated ones, and a
 * Merge table over the shards' local tables for a Distributed one (made in the stand-in's initiator database).
 */
function standIn(sql: string, base: string): string {
  return sql
    .replace(' ON CLUSTER inkwell', '')
    .replace(/Replicated(\w*MergeTree)\('[^']*', '[^']*'(?:, )?/, '$1(')
    .replace(
      /AS (\w+_local)\s+ENGINE = Distributed\(inkwell, currentDatabase\(\), (\w+_local), .*\)$/s,
      (_, as: string, local: string) => `AS ${base}_shard0.${as} ENGINE = Merge(REGEXP('^${base}_shard'), '^${local}$')`,
    );
}

/** Whether a clustered statement makes a Distributed table (run once, on the initiator) rather than a shard-local one. */
const isDistributed = (sql: string) => sql.includes('ENGINE = Distributed(');

/**
 * Two stand-in shards (databases `<base>_shard0/1`) holding the shard-local DDL (`states`: with the visitor states'
 * tables), the events of database `from` split between them by `shardBy`, and the initiator `<base>_dist` with the
 * stand-ins of the Distributed tables.
 */
async function standInCluster(base: string, from: string, shardBy: 'project' | 'visitor', states: boolean) {
  const shards = [0, 1].map((i) => createChdbExecutor(`${base}_shard${i}`));
  const dist = createChdbExecutor(`${base}_dist`);
  const ddl = clusteredDdl({ cluster: 'inkwell', shardBy }).filter((sql) => states || !/visitor_(state|day)/.test(sql));
  for (const [i, shard] of shards.entries()) {
    for (const sql of ddl.filter((q) => !isDistributed(q))) await shard.command(standIn(sql, base));
    await shard.command(
      `INSERT INTO events_local (${SINGLE_COLUMNS}) SELECT ${SINGLE_COLUMNS} FROM ${from}.events WHERE ${SHARD_KEYS[shardBy]} % 2 = {i:UInt8}`,
      {
        i,
      },
    );
  }
  for (const sql of ddl.filter(isDistributed)) await dist.command(standIn(sql, base));
  return { shards, dist, drop: () => Promise.all([`${base}_dist`, `${base}_shard0`, `${base}_shard1`].map((db) => dropChdbDatabase(db))) };
}

/** An answer's visitor counts alone: a series without its crawler requests. */
const visitorCounts = (answer: unknown) => JSON.parse(JSON.stringify(answer), (k, v) => (k === 'crawlerRequests' ? undefined : v)) as unknown;

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

  /** The keys of `got` whose answers differ from the single node's. */
  const changed = (got: Record<string, unknown>) => Object.keys(expected).filter((k) => JSON.stringify(got[k]) !== JSON.stringify(expected[k]));

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
    const all = [ddl.createRows, ...ddl.prepare, ddl.mutate(3), ddl.clearStates('visitor_states'), ddl.clearStates('visitor_days'), ddl.kill, ...ddl.drop];
    for (const sql of all) {
      expect(sql).toContain(' ON CLUSTER inkwell');
      const [row] = await single.ch.query<{ f: string }>('SELECT formatQuery({q:String}) AS f', { q: sql });
      expect(row?.f).toMatch(/^(CREATE|ALTER|SYSTEM|KILL|DROP) /);
    }
    expect(ddl.mutate(3)).toMatch(/^ALTER TABLE inkwell\.events_local ON CLUSTER inkwell\s+UPDATE /);
    expect(ddl.mutate(3).match(/UPDATE cls = /g)).toHaveLength(3);
    expect(ddl.kill).toContain("table = 'events_local'");
    expect(ddl.clearStates('visitor_states')).toBe(
      'ALTER TABLE inkwell.visitor_states_local ON CLUSTER inkwell DELETE WHERE project IN (SELECT p FROM inkwell.reclass_0123)',
    );
    // One rows table for every host of the cluster (no {shard} in its path), synced everywhere before the mutation reads it.
    expect(ddl.createRows).toContain("ReplicatedMergeTree('/clickhouse/tables/all/{database}/reclass_0123', '{shard}-{replica}')");
    expect(ddl.prepare).toEqual(['SYSTEM SYNC REPLICA ON CLUSTER inkwell inkwell.reclass_0123']);
    expect(ddl.mutateSettings).toMatchObject({ mutations_sync: 2, allow_nondeterministic_mutations: 1, distributed_ddl_task_timeout: -1 });
    expect(all.join('\n')).not.toMatch(/\{[a-z]+:[A-Za-z]/); // no query parameters: a host runs the text alone
    expect(all.join('\n')).not.toMatch(/AS SELECT|joinGet|dictGet/); // nothing a host would have to fill for itself
    const local = reclassifyDdl({ database: 'inkwell', table: 'reclass_0123' });
    expect(local.mutate(1)).toMatch(/^ALTER TABLE inkwell\.events\s+UPDATE /);
    expect([local.createRows, ...local.prepare, local.mutate(2), local.clearStates('visitor_days'), local.kill, ...local.drop].join('\n')).not.toContain(
      'ON CLUSTER',
    );
    expect(local.clearStates('visitor_states')).toMatch(/^ALTER TABLE inkwell\.visitor_states DELETE /);
    expect(() => reclassifyDdl({ database: 'inkwell', table: 'r', cluster: "x'; DROP" })).toThrow(/identifier/);
  });

  for (const shardBy of ['project', 'visitor'] as const)
    it(`reclassifies the shards' events and rebuilds their states as the single node does (split by ${shardBy}; ON CLUSTER run on each stand-in shard)`, async () => {
      const base = `inkwell_cluster_${Date.now()}_reclass_${shardBy}`;
      const reference = await openChdb();
      const refStore = await openClickHouseAnalyticsStore({ ch: reference.ch, numbering: reference.numbering, now: Date.now });
      for (const [k, projectId] of PROJECTS.entries()) await refStore.append(projectId, 'api', packEvents(events(k + 1, 1500)));
      const { shards, dist, drop } = await standInCluster(base, reference.ch.database, shardBy, true);
      const shardDbs = shards.map((s) => s.database);
      try {
        // What ON CLUSTER does, in one process: the statements on shard-local tables run on every shard; the others once
        // (every stand-in host sees the initiator's tables); SYNC REPLICA has nothing to wait for; an insert into a
        // Distributed table lands on a shard.
        const toShard0 = (table: string) => (sql: string) =>
          sql.replace(`INSERT INTO ${table} `, `INSERT INTO ${shardDbs[0]}.${table}_local `).replace(/ FROM events\b/, ` FROM ${dist.database}.events`);
        const onCluster: ClickHouseExecutor = {
          ...dist,
          async command(sql, params, settings) {
            for (const table of ['data_days', 'visitor_states', 'visitor_days'])
              if (sql.startsWith(`INSERT INTO ${table} `)) return shards[0]!.command(toShard0(table)(sql), params, settings);
            if (!sql.includes(' ON CLUSTER inkwell')) return dist.command(sql, params, settings);
            const local = standIn(sql, base);
            if (local.startsWith('SYSTEM SYNC REPLICA')) return;
            if (!/\w_local\b/.test(local)) return dist.command(local, params, settings);
            for (const [i, shard] of shards.entries())
              await shard.command(
                local.replace(new RegExp(`${dist.database}\\.(\\w+_local)\\b`, 'g'), `${shardDbs[i]}.$1`).replaceAll(`'${dist.database}'`, `'${shardDbs[i]}'`),
                params,
                settings,
              );
          },
          insert(table, rows, settings) {
            return table === 'visitor_state_rebuilds' ? shards[0]!.insert(`${table}_local`, rows, settings) : dist.insert(table, rows, settings);
          },
        };
        const clustered = createClickHouseAnalyticsStore({ ch: onCluster, numbering: reference.numbering, now: Date.now, cluster: 'inkwell' });
        const statesBefore = await Promise.all(shards.map(async (s) => (await s.query<{ n: string }>('SELECT count() AS n FROM visitor_states_local'))[0]?.n));
        for (const projectId of PROJECTS) {
          const want = await refStore.reclassify(projectId);
          expect(want.changed).toBeGreaterThan(0);
          expect(await clustered.reclassify(projectId)).toEqual(want);
        }
        // Every rebuild was marked done, and the shards' states were deleted and made again.
        const open = await dist.query<{ n: string }>('SELECT count() AS n FROM (SELECT id FROM visitor_state_rebuilds GROUP BY id HAVING max(done) = 0)');
        expect(Number(open[0]?.n)).toBe(0);
        expect(Number((await dist.query<{ n: string }>('SELECT uniqExact(id) AS n FROM visitor_state_rebuilds'))[0]?.n)).toBe(PROJECTS.length);
        const statesAfter = await Promise.all(shards.map(async (s) => (await s.query<{ n: string }>('SELECT count() AS n FROM visitor_states_local'))[0]?.n));
        expect(statesAfter).not.toEqual(statesBefore);
        const got = await answers(clustered);
        expect(got).toEqual(await answers(refStore));
        expect(got).not.toEqual(expected);
        // And both equal the answers of the rewritten raw events (a store that finds no states reads them).
        await reference.ch.command('RENAME TABLE visitor_states TO visitor_states_aside, visitor_days TO visitor_days_aside');
        expect(got).toEqual(await answers(createClickHouseAnalyticsStore({ ch: reference.ch, numbering: reference.numbering, now: Date.now })));
        await refStore.close();
      } finally {
        await reference.cleanup();
        await drop();
      }
    });

  for (const shardBy of ['project', 'visitor'] as const) {
    it(`gives the single node's answers with the events split between two shards by ${shardBy}, from the shards' states`, async () => {
      const base = `inkwell_cluster_${Date.now()}_${shardBy}`;
      const { shards, dist, drop } = await standInCluster(base, single.ch.database, shardBy, true);
      try {
        const counts = await Promise.all(shards.map(async (s) => Number((await s.query<{ n: string }>('SELECT count() AS n FROM events_local'))[0]?.n)));
        expect(counts.every((n) => n > 0)).toBe(true);
        expect(counts[0]! + counts[1]!).toBe(4500);
        // Each shard's view made the states of its own events.
        for (const shard of shards)
          expect(Number((await shard.query<{ n: string }>('SELECT count() AS n FROM visitor_states_local'))[0]?.n)).toBeGreaterThan(0);
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
        // The visitors export and the series read the states: without one shard's, their answers change (the others' do not).
        await shards[1]!.command('TRUNCATE TABLE visitor_states_local');
        const without = await answers(createClickHouseAnalyticsStore({ ch: dist, numbering: single.numbering, now: Date.now }));
        expect(changed(without).every((k) => k.includes(' visitors '))).toBe(true);
        await shards[1]!.command('TRUNCATE TABLE visitor_days_local');
        const withoutDays = changed(await answers(createClickHouseAnalyticsStore({ ch: dist, numbering: single.numbering, now: Date.now })));
        expect(withoutDays.every((k) => k.includes(' visitors ') || k.includes(' series '))).toBe(true);
        expect(withoutDays.some((k) => k.includes(' series '))).toBe(true);
        expect(without).not.toEqual(expected);
      } finally {
        await drop();
      }
    });
  }

  it('adds the states to a cluster made without them (create, fill per shard, publish), same answers', async () => {
    const base = `inkwell_cluster_${Date.now()}_upgrade`;
    const { shards, dist, drop } = await standInCluster(base, single.ch.database, 'project', false);
    try {
      const before = createClickHouseAnalyticsStore({ ch: dist, numbering: single.numbering, now: Date.now });
      expect(await answers(before)).toEqual(expected); // from the raw events: no `visitor_states` here yet
      const upgrade = clusterStatesUpgrade({ cluster: 'inkwell' });
      for (const sql of [...upgrade.create, ...upgrade.perShard, ...upgrade.publish]) {
        const [row] = await single.ch.query<{ f: string }>('SELECT formatQuery({q:String}) AS f', { q: sql });
        expect(row?.f).toMatch(/^(CREATE|INSERT|SYSTEM) /);
      }
      expect(upgrade.create.every((q) => q.includes(' ON CLUSTER inkwell'))).toBe(true);
      expect(upgrade.publish.at(-1)).toMatch(/^CREATE TABLE IF NOT EXISTS visitor_states ON CLUSTER/);
      for (const shard of shards) for (const sql of upgrade.create) await shard.command(standIn(sql, base));
      // The view and the fill may both make a row's states: a union counts each number once.
      await shards[0]!.command(`INSERT INTO events_local (${SINGLE_COLUMNS}) SELECT ${SINGLE_COLUMNS} FROM events_local LIMIT 200`);
      for (const shard of shards) for (const sql of upgrade.perShard.filter((q) => !q.startsWith('SYSTEM SYNC REPLICA'))) await shard.command(sql);
      for (const sql of upgrade.publish) await dist.command(standIn(sql, base));
      const after = createClickHouseAnalyticsStore({ ch: dist, numbering: single.numbering, now: Date.now });
      const got = await answers(after);
      // The 200 repeated rows add views and crawler requests, never visitors.
      for (const k of Object.keys(expected))
        if (k.includes(' visitors ') || k.includes(' series ')) expect(visitorCounts(got[k])).toEqual(visitorCounts(expected[k]));
      for (const table of ['visitor_states_local', 'visitor_days_local']) await shards[0]!.command(`TRUNCATE TABLE ${table}`);
      const without = changed(await answers(createClickHouseAnalyticsStore({ ch: dist, numbering: single.numbering, now: Date.now })));
      expect(without.some((k) => k.includes(' visitors '))).toBe(true);
      expect(without.some((k) => k.includes(' series '))).toBe(true);
    } finally {
      await drop();
    }
  });
});
