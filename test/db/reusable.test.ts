import { type Kysely, sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { SQLITE_STATEMENT_CACHE_SIZE } from '../../src/db/index.ts';
import { reusableQuery } from '../../src/db/reusable.ts';
import type { DB } from '../../src/db/schema.ts';
import { describeEachDialect, openTestDb, projectRow, type TestDb } from '../helpers/db.ts';

// A constant inside the query (the `ref` filter) stays fixed; the arguments are bound afresh each call.
const byNameAndTime = reusableQuery<[name: string, after: number], { id: string; created_at: number }>(
  'test_projects_by_name',
  2,
  (db: Kysely<DB>, name, after) =>
    db.selectFrom('projects').select(['id', 'created_at']).where('ref', '=', 'main').where('name', '=', name).where('created_at', '>', after).orderBy('id'),
);

describeEachDialect('reusable queries and statement reuse', (dialect) => {
  let t: TestDb | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  it('runs one compiled query with fresh arguments, equal to the built query, also inside a transaction', async () => {
    t = await openTestDb(dialect);
    const db = t.db.kysely;
    await db
      .insertInto('projects')
      .values([projectRow('prj_a', 'alpha', 10), projectRow('prj_b', 'alpha', 20), projectRow('prj_c', 'beta', 30)])
      .execute();
    await db
      .insertInto('projects')
      .values({ ...projectRow('prj_d', 'alpha', 40), ref: 'dev' })
      .execute();

    expect(await byNameAndTime(db, 'alpha', 0)).toEqual([
      { id: 'prj_a', created_at: 10 },
      { id: 'prj_b', created_at: 20 },
    ]);
    expect(await byNameAndTime(db, 'alpha', 15)).toEqual([{ id: 'prj_b', created_at: 20 }]);
    expect(await byNameAndTime(db, 'beta', 0)).toEqual([{ id: 'prj_c', created_at: 30 }]);
    expect(await byNameAndTime(db, 'gamma', 0)).toEqual([]);
    // The same answer as building the query each time.
    const built = await db.selectFrom('projects').select(['id', 'created_at']).where('ref', '=', 'main').where('name', '=', 'alpha').orderBy('id').execute();
    expect(await byNameAndTime(db, 'alpha', -1)).toEqual(built);

    // In a transaction it sees the transaction's own uncommitted rows; after a rollback they are gone.
    await expect(
      db.transaction().execute(async (trx) => {
        await trx
          .insertInto('projects')
          .values(projectRow('prj_e', 'gamma', 50))
          .execute();
        expect(await byNameAndTime(trx, 'gamma', 0)).toEqual([{ id: 'prj_e', created_at: 50 }]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await byNameAndTime(db, 'gamma', 0)).toEqual([]);
  });

  it("never sees another caller's uncommitted rows: a read issued during an open transaction waits or reads committed data", async () => {
    t = await openTestDb(dialect);
    const db = t.db.kysely;
    let during: Promise<unknown[]> | undefined;
    await expect(
      db.transaction().execute(async (trx) => {
        await trx
          .insertInto('projects')
          .values(projectRow('prj_u', 'uncommitted', 1))
          .execute();
        during = byNameAndTime(db, 'uncommitted', 0);
        await new Promise((r) => setTimeout(r, 20));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await during).toEqual([]);
    // Committed rows are seen at once by the next read.
    await db
      .insertInto('projects')
      .values(projectRow('prj_v', 'uncommitted', 2))
      .execute();
    expect(await byNameAndTime(db, 'uncommitted', 0)).toEqual([{ id: 'prj_v', created_at: 2 }]);
  });

  it('refuses a query that does not bind every argument', async () => {
    t = await openTestDb(dialect);
    const bad = reusableQuery<[name: string], { id: string }>('test_unbound', 1, (db: Kysely<DB>, _name) => db.selectFrom('projects').select('id'));
    await expect(bad(t.db.kysely, 'x')).rejects.toThrow(/every argument must be a bound parameter/);
  });

  it('keeps working past the statement cache size and across schema changes', async () => {
    t = await openTestDb(dialect);
    const db = t.db.kysely;
    await sql`create table reuse_t (a integer, b text)`.execute(db);
    await db
      .insertInto('reuse_t' as any)
      .values({ a: 1, b: 'x' })
      .execute();
    // More distinct statements than the cache holds, each run twice (evicted ones are prepared again).
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < SQLITE_STATEMENT_CACHE_SIZE + 20; i++) {
        const rows = await db
          .selectFrom('reuse_t' as any)
          .select(sql<number>`a + ${sql.lit(i)}`.as('v'))
          .execute();
        expect(rows).toEqual([{ v: 1 + i }]);
      }
    }
    const read = () =>
      db
        .selectFrom('reuse_t' as any)
        .selectAll()
        .execute();
    expect(await read()).toEqual([{ a: 1, b: 'x' }]);
    // A cached statement does not block DDL on its table, and follows the table's new shape.
    await sql`drop table reuse_t`.execute(db);
    await sql`create table reuse_t (a integer, b text, c text)`.execute(db);
    await db
      .insertInto('reuse_t' as any)
      .values({ a: 2, b: 'y', c: 'z' })
      .execute();
    expect(await read()).toEqual([{ a: 2, b: 'y', c: 'z' }]);
  });

  if (dialect === 'postgres') {
    it('runs reusable queries as named prepared statements on PostgreSQL, other queries unnamed', async () => {
      t = await openTestDb(dialect);
      const names = await t.db.kysely.transaction().execute(async (trx) => {
        await byNameAndTime(trx, 'alpha', 0);
        await byNameAndTime(trx, 'beta', 5);
        await trx.selectFrom('projects').select('id').where('name', '=', 'alpha').execute();
        const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements order by name`.execute(trx);
        return rows.map((r) => r.name);
      });
      expect(names).toHaveLength(1);
      expect(names[0]).toMatch(/^inkwell_test_projects_by_name_[0-9a-f]{12}$/);
    });
  }
});
