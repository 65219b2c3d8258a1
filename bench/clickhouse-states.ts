// Scratch comparison for issue 20's 30-day target: raw `events` layouts without the insertion-order column
// (`seq`) and with other codecs, and per-day visitor states beside them, through chdb on the scale benchmark's
// dataset. Rows are made in SQL from the CSV as in bench/clickhouse-layouts.ts (dense visitor numbers in order
// of first visit), so compare the variants with each other, not with bench:scale's figures. Bytes per event of
// each table after OPTIMIZE … FINAL (active parts), then the visitors export's query over the last 30 and 365
// days from the raw table and from the states, medians of rotating rounds, and a check that they agree; then the
// daily series from the raw path-first table, from the per-(day, path) states and from per-day states (migration 8).
//
//   npx tsx bench/clickhouse-states.ts [--events 1M] [--days 365] [--rounds 7]
import { createChdbExecutor, dropChdbDatabase } from '../src/analytics/clickhouse/chdb-executor.ts';
import { EVENTS_COLUMNS_5, EVENTS_PARTITION } from '../src/analytics/clickhouse/migrations.ts';
import { genArgs, intArg, parseArgs } from './lib/args.ts';
import { loadScratchSource } from './lib/chdb-scratch.ts';
import { dayString, ensureDataset, genOptions, START_DAY } from './lib/dataset.ts';
import { median } from './lib/stats.ts';

const args = parseArgs(process.argv.slice(2));
const events = intArg(args, 'events') ?? 1_000_000;
const days = intArg(args, 'days') ?? 365;
const rounds = intArg(args, 'rounds') ?? 7;
const only = (args.get('only') ?? '').split(',').filter(Boolean);
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const { meta, csv } = ensureDataset(genOptions({ ...genArgs(args), events, days, startDay: dayString(START_DAY, -days) }), log);
const database = `bench_states_${Date.now()}`;
const ch = createChdbExecutor(database);
const n = meta.counts.events;
const ALL = ['project', 'day', 'seq', 'ts', 'path', 'raw_path', 'visitor', 'user_agent', 'accept', 'method', 'status', 'referrer', 'ref_host'];
const REST = ['cls', 'category', 'rule', 'qualifying', 'view_shape', 'source', 'dedup_key'];

const fill = (t: string, withSeq: boolean) => {
  const cols = [...ALL, ...REST].filter((c) => withSeq || c !== 'seq');
  const values: Record<string, string> = {
    project: "'prj_bench'",
    day: 'toInt32(toDate(day))',
    seq: '1764000000000000 + rowNumberInAllBlocks() * 3',
    ts: 'toUnixTimestamp64Milli(toDateTime64(ts, 3))',
    path: 'path',
    raw_path: 'raw',
    visitor: `joinGet('${database}.visitor_nums', 'num', visitor)`,
    user_agent: `joinGet('${database}.uas', 's', toInt64(ua))`,
    accept: "if(accept_md = 1, 'text/markdown', NULL)",
    method: 'method',
    status: 'status',
    referrer: 'NULL',
    ref_host: 'NULL',
    cls: 'class',
    category: "if(class = 'crawler', 'search', NULL)",
    rule: "if(class IN ('ai', 'crawler'), concat('Bot', toString(ua)), NULL)",
    qualifying: 'q',
    view_shape: 'q',
    source: "'api'",
    dedup_key: 'NULL',
  };
  return `INSERT INTO ${t} (${cols.join(', ')}) SELECT ${cols.map((c) => values[c]).join(', ')} FROM src`;
};

async function bytesOf(t: string, label: string): Promise<number> {
  await ch.command(`OPTIMIZE TABLE ${t} FINAL`);
  const cols = await ch.query<{ name: string; b: string }>(
    `SELECT column AS name, sum(column_data_compressed_bytes) AS b FROM system.parts_columns WHERE database = currentDatabase() AND table = '${t}' AND active GROUP BY name ORDER BY b DESC`,
  );
  const [tot] = await ch.query<{ b: string; r: string }>(
    `SELECT sum(bytes_on_disk) AS b, sum(rows) AS r FROM system.parts WHERE database = currentDatabase() AND table = '${t}' AND active`,
  );
  const perEvent = Number(tot?.b ?? 0) / n;
  log(
    `${label}: ${perEvent.toFixed(2)} B/event (${Number(tot?.r ?? 0).toLocaleString('en')} rows); ${cols.map((c) => `${c.name} ${(Number(c.b) / n).toFixed(2)}`).join(', ')}`,
  );
  return perEvent;
}

async function raw(t: string, label: string, columns: string, o: { order?: string; partition?: string; seq?: boolean } = {}) {
  if (only.length > 0 && !only.includes(t)) return;
  await ch.command(
    `CREATE TABLE ${t} (${columns}) ENGINE = MergeTree PARTITION BY ${o.partition ?? EVENTS_PARTITION} ORDER BY ${o.order ?? '(project, day, path, visitor)'}`,
  );
  await ch.command(fill(t, o.seq ?? false));
  return bytesOf(t, label);
}

const noSeq = EVENTS_COLUMNS_5.replace('        seq UInt64 CODEC(T64, ZSTD(3)),\n', '');

/** The store's visitors query (clickhouse-store.ts) over `t`. */
const rawQuery = (t: string) => `SELECT e.1 AS g, e.2 AS path, countIf(bitAnd(e.3, 1) != 0) AS human, countIf(bitAnd(e.3, 2) != 0) AS ai, count() AS total
  FROM (SELECT arrayJoin(arrayPushBack(arrayMap(x -> (0, x.1, x.2), pf), (1, '', vf))) AS e
    FROM (SELECT visitor, groupArray((path, f)) AS pf, groupBitOr(f) AS vf
      FROM (SELECT visitor, path, groupBitOr(if(cls = 'human', 1, 2)) AS f FROM ${t}
        WHERE project = {p:String} AND qualifying = 1 AND day >= {from:Int32} AND day < {to:Int32} GROUP BY visitor, path)
      GROUP BY visitor))
  GROUP BY g, path`;
/** From per-(day, path) bitmaps of human and other visitors. */
const statesQuery = (t: string) => `SELECT grouping(path) AS g, path, bitmapCardinality(groupBitmapOrState(h) AS H) AS human,
    bitmapCardinality(groupBitmapOrState(a) AS A) AS ai, bitmapCardinality(bitmapOr(H, A)) AS total
  FROM ${t} WHERE project = {p:String} AND day >= {from:Int32} AND day < {to:Int32}
  GROUP BY GROUPING SETS ((path), ())`;
type Row = { g: number | string; path: string; human: string | number; ai: string | number; total: string | number };
const digest = (rows: Row[]) =>
  rows
    .map((r) => `${Number(r.g)}|${r.path}|${Number(r.human)}|${Number(r.ai)}|${Number(r.total)}`)
    .sort()
    .join('\n');

try {
  await loadScratchSource(ch, csv, meta);
  await ch.command(
    `CREATE TABLE visitor_nums ENGINE = Join(ANY, LEFT, visitor) AS
     SELECT visitor, toUInt32(row_number() OVER (ORDER BY min(ts), visitor)) AS num FROM src GROUP BY visitor`,
  );
  await raw('v5', 'migration 5 (with seq)', EVENTS_COLUMNS_5, { seq: true });
  await raw('noseq', 'without seq', noSeq);
  const small = (c: string) =>
    c
      .replace('accept LowCardinality(Nullable(String)),', 'accept LowCardinality(Nullable(String)) CODEC(ZSTD(3)),')
      .replace('method LowCardinality(Nullable(String)),', 'method LowCardinality(Nullable(String)) CODEC(ZSTD(3)),')
      .replace('status Nullable(Int32),', 'status Nullable(Int32) CODEC(ZSTD(3)),')
      .replace('cls LowCardinality(String),', 'cls LowCardinality(String) CODEC(ZSTD(3)),')
      .replace('category LowCardinality(Nullable(String)),', 'category LowCardinality(Nullable(String)) CODEC(ZSTD(3)),')
      .replace('rule LowCardinality(Nullable(String)),', 'rule LowCardinality(Nullable(String)) CODEC(ZSTD(3)),')
      .replace('qualifying UInt8,', 'qualifying UInt8 CODEC(ZSTD(3)),')
      .replace('view_shape UInt8,', 'view_shape UInt8 CODEC(ZSTD(3)),')
      .replace('source LowCardinality(String),', 'source LowCardinality(String) CODEC(ZSTD(3)),')
      .replace('user_agent LowCardinality(Nullable(String)) CODEC(ZSTD(3))', 'user_agent LowCardinality(Nullable(String)) CODEC(ZSTD(3))');
  const z9 = (c: string) =>
    c
      .replace('path String CODEC(ZSTD(3))', 'path String CODEC(ZSTD(9))')
      .replace('raw_path String CODEC(ZSTD(3))', 'raw_path String CODEC(ZSTD(9))')
      .replace('ts Int64 CODEC(T64, ZSTD(3))', 'ts Int64 CODEC(T64, ZSTD(9))')
      .replace('visitor UInt32 CODEC(T64, ZSTD(3))', 'visitor UInt32 CODEC(T64, ZSTD(9))');
  const dayCodec = (c: string) => c.replace('day Int32,', 'day Int32 CODEC(Delta, ZSTD(3)),');
  await raw('noseq_small', 'without seq, ZSTD(3) for the small columns too', small(noSeq));
  await raw('pf', 'without seq, small ZSTD(3), day Delta, sorted by (project, path, day, visitor)', dayCodec(small(noSeq)), {
    order: '(project, path, day, visitor)',
  });
  await raw('pf_z9', 'the same with ZSTD(9) for path, raw_path, ts, visitor', z9(dayCodec(small(noSeq))), { order: '(project, path, day, visitor)' });
  // States.
  await ch.command(
    `CREATE TABLE st_bitmap (project LowCardinality(String), day Int32, path String CODEC(ZSTD(3)),
       h AggregateFunction(groupBitmap, UInt32) CODEC(ZSTD(3)), a AggregateFunction(groupBitmap, UInt32) CODEC(ZSTD(3)))
     ENGINE = AggregatingMergeTree PARTITION BY ${EVENTS_PARTITION} ORDER BY (project, day, path)`,
  );
  await ch.command(
    `INSERT INTO st_bitmap SELECT project, day, path, groupBitmapStateIf(visitor, cls = 'human'), groupBitmapStateIf(visitor, cls != 'human')
     FROM noseq WHERE qualifying = 1 GROUP BY project, day, path`,
  );
  await bytesOf('st_bitmap', 'states: per-(day, path) bitmaps h, a');
  await ch.command(
    `CREATE TABLE st_bitmap_pd (project LowCardinality(String), day Int32, path String CODEC(ZSTD(3)),
       h AggregateFunction(groupBitmap, UInt32) CODEC(ZSTD(3)), a AggregateFunction(groupBitmap, UInt32) CODEC(ZSTD(3)))
     ENGINE = AggregatingMergeTree PARTITION BY ${EVENTS_PARTITION} ORDER BY (project, path, day)`,
  );
  await ch.command('INSERT INTO st_bitmap_pd SELECT * FROM st_bitmap');
  await bytesOf('st_bitmap_pd', 'states: per-(day, path) bitmaps h, a, sorted by (project, path, day)');
  await ch.command(
    `CREATE TABLE st_bitmap_z (project LowCardinality(String), day Int32, path String CODEC(ZSTD(9)),
       h AggregateFunction(groupBitmap, UInt32) CODEC(ZSTD(9)), a AggregateFunction(groupBitmap, UInt32) CODEC(ZSTD(9)))
     ENGINE = AggregatingMergeTree PARTITION BY ${EVENTS_PARTITION} ORDER BY (project, path, day)`,
  );
  await ch.command('INSERT INTO st_bitmap_z SELECT * FROM st_bitmap');
  await bytesOf('st_bitmap_z', 'states: per-(day, path) bitmaps h, a, sorted by (project, path, day), ZSTD(9)');
  await ch.command(
    `CREATE TABLE st_pd (project LowCardinality(String), day Int32 CODEC(Delta, ZSTD(3)), path String CODEC(ZSTD(3)),
       h AggregateFunction(groupBitmap, UInt32) CODEC(ZSTD(3)), a AggregateFunction(groupBitmap, UInt32) CODEC(ZSTD(3)))
     ENGINE = AggregatingMergeTree PARTITION BY ${EVENTS_PARTITION} ORDER BY (project, path, day)`,
  );
  await ch.command('INSERT INTO st_pd SELECT * FROM st_bitmap');
  await bytesOf('st_pd', 'states: sorted by (project, path, day), day Delta + ZSTD(3)');

  // Per-day visitor states (no path): what the series reads if it is not to merge a day's path bitmaps.
  await ch.command(
    `CREATE TABLE st_day (project LowCardinality(String), day Int32 CODEC(Delta, ZSTD(3)),
       h AggregateFunction(groupBitmap, UInt32) CODEC(ZSTD(3)), a AggregateFunction(groupBitmap, UInt32) CODEC(ZSTD(3)))
     ENGINE = AggregatingMergeTree PARTITION BY ${EVENTS_PARTITION} ORDER BY (project, day)`,
  );
  await ch.command(
    `INSERT INTO st_day SELECT project, day, groupBitmapStateIf(visitor, cls = 'human'), groupBitmapStateIf(visitor, cls != 'human')
     FROM pf WHERE qualifying = 1 GROUP BY project, day`,
  );
  await bytesOf('st_day', 'states per day (no path): sorted by (project, day)');

  const lastDay = Number((await ch.query<{ d: number }>('SELECT max(day) AS d FROM noseq'))[0]?.d);
  const windows = { '30 days': 30, '365 days': 365 };
  const variants: Record<string, string> = {
    raw: rawQuery('noseq'),
    raw_v5: rawQuery('v5'),
    bitmaps: statesQuery('st_bitmap'),

    raw_pf: rawQuery('pf'),
    states_pd: statesQuery('st_pd'),
  };
  const views = (t: string) =>
    `SELECT grouping(path) AS g, path, countIf(cls = 'human') AS human, countIf(cls != 'human') AS ai, count() AS total FROM ${t}
     WHERE project = {p:String} AND qualifying = 1 AND day >= {from:Int32} AND day < {to:Int32} GROUP BY GROUPING SETS ((path), ())`;
  const series = (t: string) =>
    `SELECT 0 AS g, toString(day) AS path, uniqExactIf(visitor, qualifying = 1 AND cls = 'human') AS human, uniqExactIf(visitor, qualifying = 1 AND cls != 'human') AS ai,
       uniqExactIf(visitor, qualifying = 1) AS total FROM ${t}
     WHERE project = {p:String} AND day >= {from:Int32} AND day < {to:Int32} AND (qualifying = 1 OR (cls = 'crawler' AND rule IS NOT NULL)) GROUP BY day`;
  for (const [w, len] of Object.entries(windows)) {
    const p = { p: 'prj_bench', from: lastDay + 1 - len, to: lastDay + 1 };
    for (const [name, q] of Object.entries({ views, series })) {
      const times: Record<string, number[]> = { day_first: [], path_first: [] };
      for (let r = 0; r < rounds; r++)
        for (const [k, t] of r % 2 === 0
          ? ([
              ['day_first', 'noseq_small'],
              ['path_first', 'pf'],
            ] as const)
          : ([
              ['path_first', 'pf'],
              ['day_first', 'noseq_small'],
            ] as const)) {
          const t0 = performance.now();
          await ch.query<Row>(q(t), p);
          times[k]?.push(performance.now() - t0);
        }
      log(
        `${w} ${name} from raw: ${Object.entries(times)
          .map(([k, t]) => `${k} ${Math.round(median(t))} ms`)
          .join(', ')}`,
      );
    }
  }
  for (const [w, len] of Object.entries(windows)) {
    const p = { p: 'prj_bench', from: lastDay + 1 - len, to: lastDay + 1 };
    const times: Record<string, number[]> = {};
    let ref: string | null = null;
    for (const [k, sql] of Object.entries(variants)) {
      const d = digest(await ch.query<Row>(sql, p));
      if (ref === null) ref = d;
      else if (d !== ref) log(`${w}: ${k} DIFFERS from raw`);
    }
    for (let r = 0; r < rounds; r++) {
      const keys = Object.keys(variants);
      for (let i = 0; i < keys.length; i++) {
        const k = keys[(i + r) % keys.length] as string;
        const t0 = performance.now();
        await ch.query<Row>(variants[k] as string, p);
        const list = times[k] ?? [];
        list.push(performance.now() - t0);
        times[k] = list;
      }
    }
    log(
      `${w}: ${Object.entries(times)
        .map(([k, t]) => `${k} ${Math.round(median(t))} ms`)
        .join(', ')} (medians of ${rounds}; answers equal unless said)`,
    );
  }
  // The daily series over each window: from the raw path-first table (the store's query until now) against the
  // visitor sets from the states beside the crawler requests from the raw table (two queries), answers compared.
  const seriesRaw = `SELECT day AS b, uniqExactIf(visitor, qualifying = 1 AND cls = 'human') AS human,
      uniqExactIf(visitor, qualifying = 1 AND cls != 'human') AS ai, uniqExactIf(visitor, qualifying = 1) AS total,
      countIf(cls = 'crawler' AND rule IS NOT NULL) AS crawler
    FROM pf WHERE project = {p:String} AND day >= {from:Int32} AND day < {to:Int32} AND (qualifying = 1 OR (cls = 'crawler' AND rule IS NOT NULL))
    GROUP BY day`;
  const seriesStates = async (p: Record<string, unknown>, table = 'st_pd') => {
    const [v, c] = await Promise.all([
      ch.query<{ b: number; human: string; ai: string; total: string }>(
        `SELECT day AS b, bitmapCardinality(groupBitmapOrState(h) AS H) AS human, bitmapCardinality(groupBitmapOrState(a) AS A) AS ai,
           bitmapCardinality(bitmapOr(H, A)) AS total
         FROM ${table} WHERE project = {p:String} AND day >= {from:Int32} AND day < {to:Int32} GROUP BY day`,
        p,
      ),
      ch.query<{ b: number; crawler: string }>(
        `SELECT day AS b, count() AS crawler FROM pf
         WHERE project = {p:String} AND day >= {from:Int32} AND day < {to:Int32} AND cls = 'crawler' AND rule IS NOT NULL GROUP BY day`,
        p,
      ),
    ]);
    const crawler = new Map(c.map((r) => [Number(r.b), Number(r.crawler)]));
    const days = new Set([...v.map((r) => Number(r.b)), ...crawler.keys()]);
    const byDay = new Map(v.map((r) => [Number(r.b), r]));
    return [...days].map((d) => {
      const r = byDay.get(d);
      return { b: d, human: r?.human ?? 0, ai: r?.ai ?? 0, total: r?.total ?? 0, crawler: crawler.get(d) ?? 0 };
    });
  };
  type SRow = { b: number; human: string | number; ai: string | number; total: string | number; crawler: string | number };
  const sdigest = (rows: SRow[]) =>
    rows
      .map((r) => `${Number(r.b)}|${Number(r.human)}|${Number(r.ai)}|${Number(r.total)}|${Number(r.crawler)}`)
      .sort()
      .join('\n');
  for (const [w, len] of Object.entries(windows)) {
    const p = { p: 'prj_bench', from: lastDay + 1 - len, to: lastDay + 1 };
    const want = sdigest(await ch.query<SRow>(seriesRaw, p));
    const same = want === sdigest(await seriesStates(p)) && want === sdigest(await seriesStates(p, 'st_day'));
    const order = ['raw', 'states', 'days'];
    const times: Record<string, number[]> = { raw: [], states: [], days: [] };
    for (let r = 0; r < rounds; r++)
      for (const k of [...order.slice(r % 3), ...order.slice(0, r % 3)]) {
        const t0 = performance.now();
        if (k === 'raw') await ch.query<SRow>(seriesRaw, p);
        else await seriesStates(p, k === 'days' ? 'st_day' : 'st_pd');
        times[k]?.push(performance.now() - t0);
      }
    log(
      `${w} daily series: raw (path-first) ${Math.round(median(times.raw ?? []))} ms, per-(day, path) states + crawler rows ${Math.round(median(times.states ?? []))} ms, per-day states + crawler rows ${Math.round(median(times.days ?? []))} ms; answers ${same ? 'equal' : 'DIFFER'}`,
    );
  }
} finally {
  await ch.close();
  await dropChdbDatabase(database);
}
