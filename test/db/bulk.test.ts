// The bulk writer on both dialects: flat and per-row inserts, every row count that splits into multi-row
// statements differently, conflict handling and RETURNING.
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BulkLookup, type BulkTable, createBulkWriter, sortFlatRows } from '../../src/db/bulk.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';

const SPEC: BulkTable = {
  table: 'bulk_probe',
  columns: [
    { name: 'k', type: 'integer' },
    { name: 'label', type: 'text' },
    { name: 'n', type: 'bigint' },
  ],
  onConflict: 'ignore',
};
const COUNTER: BulkTable = { ...SPEC, onConflict: { key: ['k'], add: ['n'] } };
/** The label of row k and n + add, by (k, add) pairs. */
const LOOKUP: BulkLookup = {
  keys: [
    { name: 'id', type: 'integer' },
    { name: 'plus', type: 'bigint' },
  ],
  join: 'join bulk_probe p on p.k = k.id',
  select: 'k.id as k, p.label as label, p.n + k.plus as total',
};

describeEachDialect('bulk writer', (dialect) => {
  let t: TestDb;
  beforeEach(async () => {
    t = await openTestDb(dialect);
    await sql`create table bulk_probe (k integer primary key, label text, n bigint not null)`.execute(t.db.kysely);
  });
  afterEach(() => t.cleanup());

  const stored = async () =>
    (await sql<{ k: number; label: string | null; n: number }>`select k, label, n from bulk_probe order by k`.execute(t.db.kysely)).rows.map((r) => [
      Number(r.k),
      r.label,
      Number(r.n),
    ]);

  it('inserts flat values of every row count from 0 to 200 exactly once, nulls and text intact', async () => {
    const bulk = createBulkWriter(t.db);
    let next = 0;
    const expected: unknown[][] = [];
    for (let rows = 0; rows <= 200; rows += rows < 70 ? 1 : 13) {
      const values: unknown[] = [];
      for (let r = 0; r < rows; r++) {
        const k = next++;
        const row = [k, k % 5 === 0 ? null : `row ${k} — ü`, k * 3];
        values.push(...row);
        expected.push(row);
      }
      const n = await t.db.kysely.transaction().execute((trx) => bulk.insertFlat(trx, SPEC, values));
      expect(n, `${rows} rows`).toBe(rows);
    }
    expect(await stored()).toEqual(expected);
  });

  it('looks rows up by many keys: one row per key found, keys not found left out, the same key twice found twice', async () => {
    const bulk = createBulkWriter(t.db);
    await t.db.kysely.transaction().execute((trx) =>
      bulk.insert(trx, SPEC, [
        [1, 'a', 10],
        [2, null, 20],
        [3, 'c — ü', 30],
      ]),
    );
    const rows = await t.db.kysely.transaction().execute((trx) => bulk.lookup(trx, LOOKUP, [3, 1, 9, 0, 1, 5, 3, 2]));
    const got = rows
      .map((r) => [Number(r.k), r.label, Number(r.total)])
      .sort((a, b) => (a[0] as number) - (b[0] as number) || (a[2] as number) - (b[2] as number));
    expect(got).toEqual([
      [1, 'a', 15],
      [3, 'c — ü', 31],
      [3, 'c — ü', 32],
    ]);
    expect(await bulk.lookup(t.db.kysely, LOOKUP, [])).toEqual([]);
    await expect(bulk.lookup(t.db.kysely, LOOKUP, [1])).rejects.toThrow(/whole keys/);
  });

  it('skips conflicting rows with onConflict ignore, and counts only those inserted', async () => {
    const bulk = createBulkWriter(t.db);
    await t.db.kysely.transaction().execute((trx) => bulk.insert(trx, SPEC, [[1, 'a', 1]]));
    const n = await t.db.kysely.transaction().execute((trx) => bulk.insertFlat(trx, SPEC, [1, 'b', 2, 2, 'c', 3]));
    expect(n).toBe(1);
    expect(await stored()).toEqual([
      [1, 'a', 1],
      [2, 'c', 3],
    ]);
  });

  it('adds to the stored counters with an { key, add } conflict rule', async () => {
    const bulk = createBulkWriter(t.db);
    const values = Array.from({ length: 100 }, (_, k) => [k, null, 1]).flat();
    await t.db.kysely.transaction().execute(async (trx) => {
      await bulk.insertFlat(trx, COUNTER, values);
      await bulk.insertFlat(trx, COUNTER, values);
    });
    const rows = await stored();
    expect(rows).toHaveLength(100);
    expect(rows.every((r) => r[2] === 2)).toBe(true);
  });

  it('returns the requested columns of the rows inserted', async () => {
    const bulk = createBulkWriter(t.db);
    const rows = Array.from({ length: 77 }, (_, k) => [k, `l${k}`, k]);
    const out = await t.db.kysely.transaction().execute((trx) => bulk.insertReturning(trx, SPEC, rows, ['k', 'label']));
    expect(out.map((r) => [Number(r.k), r.label]).sort((a, b) => (a[0] as number) - (b[0] as number))).toEqual(rows.map((r) => [r[0], r[1]]));
  });

  it('refuses values that are not whole rows, naming the table', async () => {
    const bulk = createBulkWriter(t.db);
    await expect(t.db.kysely.transaction().execute((trx) => bulk.insertFlat(trx, SPEC, [1, 'a']))).rejects.toThrow(
      /bulk_probe: 2 values are not whole rows of 3/,
    );
  });
});

describe('sortFlatRows', () => {
  it('orders flat rows by their columns in turn and keeps every row whole', () => {
    const rows = [
      [2, 1, 9],
      [1, 5, 0],
      [2, 1, 3],
      [1, 5, 0],
      [1, 2, 7],
    ];
    expect(sortFlatRows(rows.flat(), 3)).toEqual([1, 2, 7, 1, 5, 0, 1, 5, 0, 2, 1, 3, 2, 1, 9]);
    expect(sortFlatRows([], 5)).toEqual([]);
  });
});
