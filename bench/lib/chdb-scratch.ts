// The source tables of the ClickHouse scratch comparisons (bench/clickhouse-layouts.ts, bench/clickhouse-states.ts):
// the scale benchmark's CSV as `src`, and its user-agent table as the Join table `uas` (joinGet by index), from which
// each script makes its variants' rows in SQL.
import type { ClickHouseExecutor } from '../../src/analytics/clickhouse/executor.ts';
import type { DatasetMeta } from './dataset.ts';

export async function loadScratchSource(ch: ClickHouseExecutor, csv: string, meta: DatasetMeta): Promise<void> {
  await ch.command(`CREATE TABLE src ENGINE = MergeTree ORDER BY tuple() AS SELECT * FROM file('${csv}', 'CSVWithNames')`);
  await ch.command('CREATE TABLE uas (i Int64, s String) ENGINE = Join(ANY, LEFT, i)');
  await ch.insert(
    'uas',
    meta.userAgents.map((s, i) => ({ i, s })),
  );
}
