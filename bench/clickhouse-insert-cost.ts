// Scratch measurement of what migration 7's states view adds to an insert (chdb): the first rows of a bench:scale
// dataset inserted in batches into two `events` tables of migration 6's layout, one with the view and its table,
// alternating, medians of the insert times. No fsync here (the store's tables fsync each insert), no HTTP, no
// numbering: compare the two with each other.
//
//   npx tsx bench/clickhouse-insert-cost.ts <dataset.csv> [rows per insert = 20000] [inserts = 25]
import { createChdbExecutor, dropChdbDatabase } from '../src/analytics/clickhouse/chdb-executor.ts';
import { EVENTS_COLUMNS_6, EVENTS_ORDER_6, EVENTS_PARTITION, VISITOR_STATES_COLUMNS, visitorStatesSelect } from '../src/analytics/clickhouse/migrations.ts';

const csv = process.argv[2] as string;
const batch = Number(process.argv[3] ?? 20000);
const batches = Number(process.argv[4] ?? 25);
const db = `ingest_cost_${Date.now()}`;
const ch = createChdbExecutor(db);
try {
  await ch.command(
    `CREATE TABLE src ENGINE = MergeTree ORDER BY tuple() AS SELECT *, rowNumberInAllBlocks() AS rn FROM file('${csv}', 'CSVWithNames') LIMIT ${batch * batches}`,
  );
  await ch.command(
    `CREATE TABLE vn ENGINE = Join(ANY, LEFT, visitor) AS SELECT visitor, toUInt32(row_number() OVER (ORDER BY min(ts), visitor)) AS num FROM src GROUP BY visitor`,
  );
  const times: Record<string, number[]> = { plain: [], states: [] };
  for (const v of ['plain', 'states']) {
    await ch.command(`CREATE DATABASE IF NOT EXISTS ${db}_${v}`);
    await ch.command(`CREATE TABLE ${db}_${v}.events (${EVENTS_COLUMNS_6}) ENGINE = MergeTree PARTITION BY ${EVENTS_PARTITION} ORDER BY ${EVENTS_ORDER_6}`);
    if (v === 'states') {
      await ch.command(
        `CREATE TABLE ${db}_${v}.visitor_states (${VISITOR_STATES_COLUMNS}) ENGINE = AggregatingMergeTree PARTITION BY ${EVENTS_PARTITION} ORDER BY (project, path, day)`,
      );
      await ch.command(
        `CREATE MATERIALIZED VIEW ${db}_${v}.visitor_states_mv TO ${db}_${v}.visitor_states AS ${visitorStatesSelect().replace('FROM events', `FROM ${db}_${v}.events`)}`,
      );
    }
  }
  for (let b = 0; b < batches; b++) {
    for (const v of b % 2 === 0 ? ['plain', 'states'] : ['states', 'plain']) {
      const t0 = performance.now();
      await ch.command(`INSERT INTO ${db}_${v}.events (project, day, ts, path, raw_path, visitor, cls, qualifying, view_shape, source, method, status)
        SELECT 'prj', toInt32(toDate(day)), toUnixTimestamp64Milli(toDateTime64(ts, 3)), path, raw, joinGet('${db}.vn', 'num', visitor), class, q, q, 'api', method, status
        FROM src WHERE rn >= ${b * batch} AND rn < ${(b + 1) * batch}`);
      times[v]?.push(performance.now() - t0);
    }
  }
  const med = (x: number[]) => [...x].sort((a, b) => a - b)[Math.floor(x.length / 2)] as number;
  console.log(
    `batches of ${batch}: plain ${med(times.plain as number[]).toFixed(0)} ms, with the states view ${med(times.states as number[]).toFixed(0)} ms (medians of ${batches})`,
  );
} finally {
  await ch.close();
  for (const d of [db, `${db}_plain`, `${db}_states`]) await dropChdbDatabase(d);
}
