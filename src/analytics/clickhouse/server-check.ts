// The start-up check of a ClickHouse server: its version and every function the analytics store's SQL uses.
// A server that is too old fails the start with a message naming the minimum version.
import type { ClickHouseExecutor } from './executor.ts';

/** The oldest ClickHouse the store is tested to need (insert_deduplication_token on MergeTree, joinGet in mutations). */
export const MIN_CLICKHOUSE_VERSION = '23.8';

/** Every ordinary function the store's queries call (clickhouse-store.ts, migrations.ts). */
export const REQUIRED_FUNCTIONS = [
  'uniqExact',
  'count',
  'min',
  'max',
  'argMin',
  'greatest',
  'multiIf',
  'toDate',
  'toYYYYMM',
  'toStartOfMonth',
  'toInt32',
  'sipHash128',
  'hex',
  'ifNull',
  'isNull',
  'joinGet',
  'arrayJoin',
  'arrayMap',
  'arrayPushBack',
  'groupArray',
  'groupBitOr',
  'bitAnd',
  'tupleElement',
  'assumeNotNull',
  'groupBitmap',
  'groupBitmapOr',
  'bitmapCardinality',
  'bitmapOr',
  'version',
] as const;
/** Aggregate function combinators the queries use (uniqExactIf, countIf; groupBitmapStateIf, groupBitmapOrState). */
export const REQUIRED_COMBINATORS = ['If', 'State'] as const;

/** The analytics store could not start on its ClickHouse server (the message names the server, never credentials). */
export class ClickHouseStartError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ClickHouseStartError';
  }
}

export class ClickHouseVersionError extends ClickHouseStartError {
  constructor(message: string) {
    super(message);
    this.name = 'ClickHouseVersionError';
  }
}

function versionAtLeast(version: string, min: string): boolean {
  const a = version.split('.').map((x) => Number.parseInt(x, 10));
  const b = min.split('.').map((x) => Number.parseInt(x, 10));
  for (let i = 0; i < b.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (Number.isNaN(x)) return false;
    if (x !== y) return x > y;
  }
  return true;
}

/** Throws ClickHouseVersionError when the server is older than MIN_CLICKHOUSE_VERSION or lacks a function; returns its version. */
export async function checkClickHouseServer(ch: ClickHouseExecutor, min = MIN_CLICKHOUSE_VERSION): Promise<string> {
  const [row] = await ch.query<{ v: string }>('SELECT version() AS v');
  const version = String(row?.v ?? '');
  // The version first, alone: the function lists below are read with query parameters, which servers before 19.x
  // refuse ("Unknown setting param_names"), and that must not hide the one thing the operator needs to know.
  if (!versionAtLeast(version, min)) throw tooOld(ch, version, min, []);
  const missing = [
    ...(await missingOf(ch, 'system.functions', REQUIRED_FUNCTIONS)),
    ...(await missingOf(ch, 'system.aggregate_function_combinators', REQUIRED_COMBINATORS)).map((c) => `the -${c} combinator`),
  ];
  if (missing.length > 0) throw tooOld(ch, version, min, missing);
  return version;
}

function tooOld(ch: ClickHouseExecutor, version: string, min: string, missing: string[]): ClickHouseVersionError {
  return new ClickHouseVersionError(
    `ClickHouse at ${ch.describe} is version ${version || 'unknown'}; Inkwell's analytics need ClickHouse ${min} or newer` +
      (missing.length > 0 ? ` (missing: ${missing.join(', ')})` : ''),
  );
}

async function missingOf(ch: ClickHouseExecutor, table: string, names: readonly string[]): Promise<string[]> {
  const rows = await ch.query<{ name: string }>(`SELECT name FROM ${table} WHERE name IN {names:Array(String)}`, { names });
  const have = new Set(rows.map((r) => r.name));
  return names.filter((n) => !have.has(n));
}

export const __test = { versionAtLeast };
