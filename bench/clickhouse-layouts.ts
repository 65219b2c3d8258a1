// Scratch comparison of ClickHouse layouts for the `events` table (issue 20's storage target): the scale
// benchmark's dataset loaded through chdb into tables that differ in one choice each, then bytes per event of
// each after OPTIMIZE … FINAL (active parts, and per column). Not the store's ingest path: the rows are made from
// the CSV in SQL (visitor keys `v:<id>` as the API makes them, the dataset's real User-Agent strings; referrers
// and dedup keys empty), so compare layouts with each other, not with bench:scale's figures.
//
//   npx tsx bench/clickhouse-layouts.ts [--events 1M] [--days 365]   (the dataset of bench:scale with those flags)
import { createChdbExecutor, dropChdbDatabase } from '../src/analytics/clickhouse/chdb-executor.ts';
import { EVENTS_CODECS, EVENTS_COLUMNS, EVENTS_PARTITION, EVENTS_TYPES_4 } from '../src/analytics/clickhouse/migrations.ts';
import { genArgs, intArg, parseArgs } from './lib/args.ts';
import { loadScratchSource } from './lib/chdb-scratch.ts';
import { dayString, ensureDataset, genOptions, START_DAY } from './lib/dataset.ts';

const args = parseArgs(process.argv.slice(2));
const events = intArg(args, 'events') ?? 1_000_000;
const days = intArg(args, 'days') ?? 365;
const log = (m: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${m}`);
const { meta, csv } = ensureDataset(genOptions({ ...genArgs(args), events, days, startDay: dayString(START_DAY, -days) }), log);
const database = `bench_layouts_${Date.now()}`;
const ch = createChdbExecutor(database);
const n = meta.counts.events;
const VKEY = "assumeNotNull(concat('v:', visitor))";

const fill = (t: string, visitor = VKEY) => `INSERT INTO ${t} (project, day, seq, ts, path, raw_path, visitor, user_agent, accept, method, status,
    referrer, ref_host, cls, category, rule, qualifying, view_shape, source, dedup_key)
  SELECT 'prj_bench', toInt32(toDate(day)), 1764000000000000 + rowNumberInAllBlocks() * 3, toUnixTimestamp64Milli(toDateTime64(ts, 3)), path, raw,
    ${visitor}, joinGet('${database}.uas', 's', toInt64(ua)), if(accept_md = 1, 'text/markdown', NULL), method, status, NULL, NULL, class,
    if(class = 'crawler', 'search', NULL), if(class IN ('ai', 'crawler'), concat('Bot', toString(ua)), NULL), q, q, 'api', NULL
  FROM src`;

async function report(t: string, label: string): Promise<number> {
  await ch.command(`OPTIMIZE TABLE ${t} FINAL`);
  const cols = await ch.query<{ name: string; b: string }>(
    `SELECT name, sum(data_compressed_bytes) AS b FROM system.columns WHERE database = currentDatabase() AND table = '${t}' GROUP BY name ORDER BY b DESC`,
  );
  const [tot] = await ch.query<{ b: string }>(
    `SELECT sum(bytes_on_disk) AS b FROM system.parts WHERE database = currentDatabase() AND table = '${t}' AND active`,
  );
  const perEvent = Number(tot?.b ?? 0) / n;
  log(`${label}: ${perEvent.toFixed(2)} B/event; ${cols.map((c) => `${c.name} ${(Number(c.b) / n).toFixed(2)}`).join(', ')}`);
  return perEvent;
}

async function variant(t: string, label: string, columns: string, order = '(project, day, path, visitor)', visitor = VKEY): Promise<number> {
  await ch.command(`CREATE TABLE ${t} (${columns}) ENGINE = MergeTree PARTITION BY ${EVENTS_PARTITION} ORDER BY ${order}`);
  await ch.command(`ALTER TABLE ${t} ${EVENTS_CODECS}`);
  await ch.command(fill(t, visitor));
  return report(t, label);
}

try {
  await loadScratchSource(ch, csv, meta);
  const lc = (c: string) => c.replace('user_agent Nullable(String) CODEC(ZSTD(3))', EVENTS_TYPES_4.replace('MODIFY COLUMN ', ''));
  await variant('m3', 'migrations 1-3', EVENTS_COLUMNS);
  await variant('m4', 'migration 4 (user agents LowCardinality)', lc(EVENTS_COLUMNS));
  await variant('byvisitor', 'migration 4, sorted by (project, visitor, day, path)', lc(EVENTS_COLUMNS), '(project, visitor, day, path)');
  await variant('pathlc', 'migration 4, path LowCardinality', lc(EVENTS_COLUMNS).replace('path String CODEC(ZSTD(3)),\n', 'path LowCardinality(String),\n'));
  await variant(
    'zstd9',
    'migration 4, ZSTD(9) for path and visitor',
    lc(EVENTS_COLUMNS)
      .replace('path String CODEC(ZSTD(3)),\n', 'path String CODEC(ZSTD(9)),\n')
      .replace('visitor String CODEC(ZSTD(3))', 'visitor String CODEC(ZSTD(9))'),
  );
  // Dense per-project visitor numbers in order of first visit, from a key-to-number table.
  await ch.command(
    `CREATE TABLE visitors ENGINE = MergeTree ORDER BY (project, key) AS
     SELECT 'prj_bench' AS project, ${VKEY} AS key, toUInt32(row_number() OVER (ORDER BY min(ts), visitor)) AS num FROM src GROUP BY visitor`,
  );
  await ch.command(`CREATE TABLE visitor_nums ENGINE = Join(ANY, LEFT, key) AS SELECT key, num FROM visitors`);
  const dict = await report('visitors', 'key-to-number table');
  const dense = await variant(
    'dense',
    'migration 4, dense visitor numbers (UInt32, T64 + ZSTD)',
    lc(EVENTS_COLUMNS).replace('visitor String CODEC(ZSTD(3))', 'visitor UInt32 CODEC(T64, ZSTD(3))'),
    '(project, day, path, visitor)',
    `joinGet('${database}.visitor_nums', 'num', ${VKEY})`,
  );
  log(`dense numbers with their table: ${(dense + dict).toFixed(2)} B/event`);
} finally {
  await ch.close();
  await dropChdbDatabase(database);
}
