// Batchable reusable queries (src/db/reusable.ts): on PostgreSQL, concurrent calls are combined into one
// statement; every caller must still get exactly the rows the query gives it alone, see every change
// committed before the call, and only its own errors. The same tests run on SQLite, which runs each call
// directly (no batching), so both dialects give the same answers.
import { type Kysely, sql } from 'kysely';
import { afterEach, expect, it } from 'vitest';
import { batchStats, reusableQuery } from '../../src/db/reusable.ts';
import type { DB } from '../../src/db/schema.ts';
import { describeEachDialect, openTestDb, projectRow, type TestDb } from '../helpers/db.ts';

interface Row {
  id: string;
  name: string;
  created_at: number;
}

// Several rows per call (ordered), a constant bound parameter (`ref`), a text and an integer argument, and
// a function that fails for names starting with "bad" (an error caused by one caller's arguments).
const byNameAfter = reusableQuery<[name: string, after: number], Row>(
  'test_batch_by_name_after',
  2,
  (db: Kysely<DB>, name, after) =>
    db
      .selectFrom('projects')
      .select(['id', 'name', 'created_at'])
      .where('ref', '=', 'main')
      .where('name', '=', sql<string>`inkwell_test_check(${name})`)
      .where('created_at', '>', after)
      .orderBy('created_at', 'desc')
      .orderBy('id'),
  ['text', 'int8'],
);

// Which server process (connection) ran the statement, per caller.
const backendOf = reusableQuery<[name: string], { name: string; pid: number }>(
  'test_batch_backend_of',
  1,
  (db: Kysely<DB>, name) =>
    db
      .selectFrom('projects')
      .select(['name', sql<number>`pg_backend_pid()`.as('pid')])
      .where('name', '=', name),
  ['text'],
);

/** What `byNameAfter` must return, computed by a query built on the spot (no reuse, no batching). */
const reference = (db: Kysely<DB>, name: string, after: number) =>
  db
    .selectFrom('projects')
    .select(['id', 'name', 'created_at'])
    .where('ref', '=', 'main')
    .where('name', '=', name)
    .where('created_at', '>', after)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();

/** Lets the calls made so far be sent (they go after the I/O callbacks of the current turn). */
const nextTurn = () => new Promise((r) => setImmediate(r));

describeEachDialect('batched reusable queries', (dialect) => {
  let t: TestDb | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  // Kept results (PostgreSQL) are off unless a test asks for them: these tests count statements.
  async function setup({ keepResults = false } = {}): Promise<Kysely<DB>> {
    t = await openTestDb(dialect, { keepResults });
    const db = t.db.kysely;
    if (t.db.sqliteHandle) {
      t.db.sqliteHandle.function('inkwell_test_check', (v: unknown) => {
        if (String(v).startsWith('bad')) throw new Error(`bad input: ${String(v)}`);
        return v;
      });
    } else {
      await sql`create function inkwell_test_check(v text) returns text language plpgsql as $$
        begin
          if v like 'bad%' then raise exception 'bad input: %', v; end if;
          return v;
        end $$`.execute(db);
    }
    await db
      .insertInto('projects')
      .values([
        projectRow('prj_a1', 'alpha', 10),
        projectRow('prj_a2', 'alpha', 20),
        projectRow('prj_a3', 'alpha', 20),
        projectRow('prj_b1', 'beta', 30),
        projectRow('prj_d1', 'alpha', 40, 'dev'),
        projectRow('prj_g1', 'gamma', 50),
      ])
      .execute();
    return db;
  }

  const stats = (db: Kysely<DB>) => batchStats(db) ?? { calls: 0, statements: 0, checks: 0, kept: 0 };

  it('concurrent calls each get exactly their own rows, in the order of the query alone', async () => {
    const db = await setup();
    const args: [string, number][] = [];
    for (const name of ['alpha', 'beta', 'gamma', 'delta', 'alpha']) for (const after of [0, 10, 15, 20, 99]) args.push([name, after]);
    const before = stats(db);
    const results = await Promise.all(args.map(([name, after]) => byNameAfter(db, name, after)));
    for (const [i, [name, after]] of args.entries()) {
      expect(results[i], `${name} > ${after}`).toEqual(await reference(db, name, after));
    }
    // Spot checks, independent of the reference query: order (created_at desc, id), the constant filter.
    expect(results[0]).toEqual([
      { id: 'prj_a2', name: 'alpha', created_at: 20 },
      { id: 'prj_a3', name: 'alpha', created_at: 20 },
      { id: 'prj_a1', name: 'alpha', created_at: 10 },
    ]);
    expect(results[3]).toEqual([]);
    expect(results.filter((r) => r.length === 0)).toHaveLength(11);
    const after = stats(db);
    if (dialect === 'postgres') {
      // All 25 calls were made in one turn of the event loop: one statement read them all.
      expect(after).toEqual({ ...before, calls: before.calls + 25, statements: before.statements + 1 });
    } else {
      expect(batchStats(db)).toBeUndefined();
    }
  });

  it("an error caused by one caller's arguments reaches only that caller", async () => {
    const db = await setup();
    const names = ['alpha', 'beta', 'bad-1', 'gamma', 'alpha', 'nobody'];
    const before = stats(db);
    const settled = await Promise.allSettled(names.map((n) => byNameAfter(db, n, 0)));
    for (const [i, name] of names.entries()) {
      const s = settled[i] as PromiseSettledResult<Row[]>;
      if (name === 'bad-1') {
        expect(s.status).toBe('rejected');
        expect(String((s as PromiseRejectedResult).reason)).toMatch(/bad input: bad-1/);
      } else {
        expect(s).toEqual({ status: 'fulfilled', value: await reference(db, name, 0) });
      }
    }
    if (dialect === 'postgres') {
      // The combined statement failed; each call then ran alone.
      expect(stats(db)).toEqual({ ...before, calls: before.calls + 6, statements: before.statements + 1 + 6 });
    }
  });

  it('a failing batch does not touch the batch in flight beside it, nor the next one', async () => {
    const db = await setup();
    const first = ['alpha', 'bad-2', 'beta', 'bad-3'].map((n) => byNameAfter(db, n, 0));
    const firstSettled = Promise.allSettled(first);
    await nextTurn(); // the first batch is sent
    const second = ['gamma', 'alpha', 'beta'].map((n) => byNameAfter(db, n, 15));
    const secondRows = await Promise.all(second);
    expect(secondRows).toEqual([await reference(db, 'gamma', 15), await reference(db, 'alpha', 15), await reference(db, 'beta', 15)]);
    const s = await firstSettled;
    expect(s.map((x) => x.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect((s[0] as PromiseFulfilledResult<Row[]>).value).toEqual(await reference(db, 'alpha', 0));
    expect((s[2] as PromiseFulfilledResult<Row[]>).value).toEqual(await reference(db, 'beta', 0));
    expect(String((s[1] as PromiseRejectedResult).reason)).toMatch(/bad-2/);
    expect(String((s[3] as PromiseRejectedResult).reason)).toMatch(/bad-3/);
    // And the next batch, after both, is whole again.
    const before = stats(db);
    expect(await Promise.all(['alpha', 'gamma'].map((n) => byNameAfter(db, n, 0)))).toEqual([await reference(db, 'alpha', 0), await reference(db, 'gamma', 0)]);
    if (dialect === 'postgres') expect(stats(db)).toEqual({ ...before, calls: before.calls + 2, statements: before.statements + 1 });
  });

  it.each([false, true])('a call sees every change committed before it, even while an earlier batch is in flight (kept results: %s)', async (keepResults) => {
    const db = await setup({ keepResults });
    const other = t!.reopen().kysely; // another connection (pool), as another process would be
    for (let round = 0; round < 5; round++) {
      const name = `fresh-${round}`;
      const early = byNameAfter(db, name, 0); // sent before the insert: may see it or not
      await nextTurn();
      await other
        .insertInto('projects')
        .values(projectRow(`prj_f${round}`, name, 100 + round))
        .execute();
      const late = await Promise.all([byNameAfter(db, name, 0), byNameAfter(db, name, 0)]);
      expect(late).toEqual([[{ id: `prj_f${round}`, name, created_at: 100 + round }], [{ id: `prj_f${round}`, name, created_at: 100 + round }]]);
      expect((await early).length).toBeLessThanOrEqual(1);
      await other
        .updateTable('projects')
        .set({ name: `${name}-renamed` })
        .where('id', '=', `prj_f${round}`)
        .execute();
      expect(await byNameAfter(db, name, 0)).toEqual([]);
    }
  });

  it('inside a transaction a batchable query runs alone and sees the transaction’s own rows', async () => {
    const db = await setup();
    await expect(
      db.transaction().execute(async (trx) => {
        await trx
          .insertInto('projects')
          .values(projectRow('prj_tx', 'in-tx', 1))
          .execute();
        const rows = await Promise.all([byNameAfter(trx, 'in-tx', 0), byNameAfter(trx, 'alpha', 15)]);
        expect(rows).toEqual([[{ id: 'prj_tx', name: 'in-tx', created_at: 1 }], await reference(trx, 'alpha', 15)]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await byNameAfter(db, 'in-tx', 0)).toEqual([]);
  });

  if (dialect === 'postgres') {
    it('a lookup connection that dies fails no later call: the next statements run on a new connection', async () => {
      const db = await setup();
      const first = await Promise.all(['alpha', 'beta'].map((n) => backendOf(db, n)));
      const pid = first[0]?.[0]?.pid as number;
      expect(first.map((rows) => rows.map((r) => r.pid))).toEqual([[pid, pid, pid, pid], [pid]]);
      await sql`select pg_terminate_backend(${pid})`.execute(db);
      // The pool drops the closed idle connection; the calls that follow get their rows on another one.
      await new Promise((r) => setTimeout(r, 100));
      const next = await Promise.all(['alpha', 'beta', 'gamma'].map((n) => backendOf(db, n)));
      expect(next.map((rows) => rows.map((r) => r.name))).toEqual([['alpha', 'alpha', 'alpha', 'alpha'], ['beta'], ['gamma']]);
      expect(next[0]?.[0]?.pid).not.toBe(pid);
    });
  }

  if (dialect === 'postgres') {
    it('kept results answer a batch while nothing has been committed: the same rows, frozen, for one check and no read', async () => {
      const db = await setup({ keepResults: true });
      const args: [string, number][] = [
        ['alpha', 0],
        ['beta', 0],
        ['alpha', 15],
        ['nobody', 0],
      ];
      const expected = await Promise.all(args.map(([name, after]) => reference(db, name, after)));
      expect(await Promise.all(args.map(([name, after]) => byNameAfter(db, name, after)))).toEqual(expected);
      // Other tests share this server and commit now and then (which moves the snapshot): try a few times.
      let hit: { before: ReturnType<typeof stats>; after: ReturnType<typeof stats>; rows: Row[][] } | undefined;
      for (let attempt = 0; attempt < 50 && !hit; attempt++) {
        const before = stats(db);
        const rows = await Promise.all(args.map(([name, after]) => byNameAfter(db, name, after)));
        expect(rows).toEqual(expected);
        const after = stats(db);
        if (after.kept > before.kept) hit = { before, after, rows };
      }
      expect(hit, 'no batch was answered from kept results in 50 attempts').toBeDefined();
      const { before, after, rows } = hit as NonNullable<typeof hit>;
      expect(after).toEqual({ calls: before.calls + 4, statements: before.statements, checks: before.checks + 1, kept: before.kept + 4 });
      expect(Object.isFrozen(rows[0])).toBe(true);
      expect(Object.isFrozen(rows[0]?.[0])).toBe(true);
    });

    it('when every batch follows a commit, each call sees it and the checks back off', async () => {
      const db = await setup({ keepResults: true });
      const other = t!.reopen().kysely;
      const before = stats(db);
      for (let i = 0; i < 100; i++) {
        await other
          .insertInto('projects')
          .values(projectRow(`prj_c${i}`, 'churn', 1000 + i))
          .execute();
        const rows = await byNameAfter(db, 'churn', 0);
        expect(rows.map((r) => r.id)).toEqual(Array.from({ length: i + 1 }, (_, k) => `prj_c${i - k}`));
      }
      const after = stats(db);
      expect(after.kept).toBe(before.kept);
      expect(after.statements - before.statements).toBe(100);
      // A check failed after batches 1, 3, 7, 15, 31 and 63; after each failure twice as many batches (up to
      // 63) went without one.
      expect(after.checks - before.checks).toBe(6);
    });
  }

  it('many calls at once (more than one statement holds) all get their rows', async () => {
    const db = await setup();
    const n = 600;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => byNameAfter(db, ['alpha', 'beta', 'gamma', 'zeta'][i % 4] as string, i % 3 === 0 ? 0 : 15)),
    );
    for (let i = 0; i < n; i++) {
      expect(results[i]).toEqual(await reference(db, ['alpha', 'beta', 'gamma', 'zeta'][i % 4] as string, i % 3 === 0 ? 0 : 15));
    }
  });
});
