// The embedded database's direct reads and their kept results (src/db/sqlite-reads.ts): a kept result is
// only returned while nothing has been committed since it was read, whoever committed.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KEPT_RESULTS_PER_STATEMENT } from '../../src/db/kept-results.ts';
import { type SqliteDirectReader, sqliteDirectReader } from '../../src/db/sqlite-reads.ts';
import { openTestDb, projectRow, type TestDb } from '../helpers/db.ts';

const SELECT = 'select id, name, created_at from projects where name = ? and created_at > ? order by id';

describe('SQLite direct reads with kept results', async () => {
  let t: TestDb;
  let read: SqliteDirectReader;
  /** A read as the store makes it: a kept-result read answers after the turn's check. */
  const get = async (text: string, parameters: readonly unknown[]) => await read(text, parameters);
  beforeEach(async () => {
    t = await openTestDb('sqlite');
    read = sqliteDirectReader(t.db.sqliteHandle as NonNullable<TestDb['db']['sqliteHandle']>);
    await t.db.kysely
      .insertInto('projects')
      .values([projectRow('prj_a', 'alpha', 10), projectRow('prj_b', 'alpha', 20), projectRow('prj_c', 'beta', 30)])
      .execute();
  });
  afterEach(async () => t.cleanup());

  it('answers a repeated read from its kept result, as frozen rows equal to a fresh read', async () => {
    const first = await get(SELECT, ['alpha', 0]);
    expect(first).toEqual([
      { id: 'prj_a', name: 'alpha', created_at: 10 },
      { id: 'prj_b', name: 'alpha', created_at: 20 },
    ]);
    expect(read.stats).toEqual({ reads: 1, kept: 0, checks: 1 });
    const again = await get(SELECT, ['alpha', 0]);
    expect(again).toBe(first);
    expect(read.stats).toEqual({ reads: 1, kept: 1, checks: 2 });
    expect(Object.isFrozen(again) && again?.every((r) => Object.isFrozen(r))).toBe(true);
    expect(() => {
      (again?.[0] as { name: string }).name = 'changed';
    }).toThrow(TypeError);
    // Other arguments are another result.
    expect(await get(SELECT, ['alpha', 15])).toEqual([{ id: 'prj_b', name: 'alpha', created_at: 20 }]);
    expect(await get(SELECT, ['gamma', 0])).toEqual([]);
    expect(read.stats).toEqual({ reads: 3, kept: 1, checks: 4 });
    expect(await get(SELECT, ['gamma', 0])).toEqual([]);
    expect(read.stats).toEqual({ reads: 3, kept: 2, checks: 5 });
  });

  it('sees a write of its own connection at once (insert, update, delete; through Kysely or the handle)', async () => {
    const db = t.db.kysely;
    expect(await get(SELECT, ['alpha', 0])).toHaveLength(2);
    await db
      .insertInto('projects')
      .values(projectRow('prj_d', 'alpha', 40))
      .execute();
    expect((await get(SELECT, ['alpha', 0]))?.map((r) => (r as { id: string }).id)).toEqual(['prj_a', 'prj_b', 'prj_d']);
    await db.updateTable('projects').set({ created_at: 5 }).where('id', '=', 'prj_b').execute();
    expect((await get(SELECT, ['alpha', 0]))?.map((r) => (r as { created_at: number }).created_at)).toEqual([10, 5, 40]);
    t.db.sqliteHandle?.prepare('delete from projects where id = ?').run('prj_a');
    expect((await get(SELECT, ['alpha', 0]))?.map((r) => (r as { id: string }).id)).toEqual(['prj_b', 'prj_d']);
    // A committed transaction, and one rolled back.
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('projects').set({ name: 'beta' }).where('id', '=', 'prj_d').execute();
    });
    expect((await get(SELECT, ['alpha', 0]))?.map((r) => (r as { id: string }).id)).toEqual(['prj_b']);
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.updateTable('projects').set({ name: 'alpha' }).where('id', '=', 'prj_c').execute();
        // Inside an open transaction the reader declines (the read goes through Kysely and waits its turn).
        expect(read(SELECT, ['alpha', 0])).toBeUndefined();
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await get(SELECT, ['alpha', 0]))?.map((r) => (r as { id: string }).id)).toEqual(['prj_b']);
  });

  it('sees a commit of another connection (another process, the ingest writer) at once', async () => {
    expect(await get(SELECT, ['beta', 0])).toEqual([{ id: 'prj_c', name: 'beta', created_at: 30 }]);
    expect(await get(SELECT, ['beta', 0])).toHaveLength(1);
    const other = t.reopen();
    for (let i = 0; i < 3; i++) {
      await other.kysely
        .updateTable('projects')
        .set({ created_at: 100 + i })
        .where('id', '=', 'prj_c')
        .execute();
      expect(await get(SELECT, ['beta', 0])).toEqual([{ id: 'prj_c', name: 'beta', created_at: 100 + i }]);
    }
    await other.kysely
      .insertInto('projects')
      .values(projectRow('prj_e', 'beta', 50))
      .execute();
    expect((await get(SELECT, ['beta', 0]))?.map((r) => (r as { id: string }).id)).toEqual(['prj_c', 'prj_e']);
    // A transaction still open on the other connection is not seen; its commit is.
    const handle = other.sqliteHandle as NonNullable<TestDb['db']['sqliteHandle']>;
    handle.exec('begin immediate');
    handle.prepare('delete from projects where id = ?').run('prj_e');
    expect(await get(SELECT, ['beta', 0])).toHaveLength(2);
    handle.exec('commit');
    expect((await get(SELECT, ['beta', 0]))?.map((r) => (r as { id: string }).id)).toEqual(['prj_c']);
  });

  it('reads asked for in one turn share one check, made after all of them were asked for', async () => {
    const before = { ...read.stats };
    const rows = await Promise.all([get(SELECT, ['alpha', 0]), get(SELECT, ['beta', 0]), get(SELECT, ['alpha', 0])]);
    expect(rows[0]).toHaveLength(2);
    expect(rows[2]).toBe(rows[0]); // the second alpha read is answered by the first one's result
    expect(read.stats).toEqual({ reads: before.reads + 2, kept: before.kept + 1, checks: before.checks + 1 });
    // Asked for, then another connection commits before the turn's check: the answer has the commit.
    const other = t.reopen().sqliteHandle as NonNullable<TestDb['db']['sqliteHandle']>;
    const asked = get(SELECT, ['alpha', 0]);
    other.prepare('delete from projects where id = ?').run('prj_a');
    expect((await asked)?.map((r) => (r as { id: string }).id)).toEqual(['prj_b']);
    // Asked for, then this connection opens a transaction before the turn: the read is handed back (it goes
    // through Kysely, after the transaction), never run inside it.
    const handle = t.db.sqliteHandle as NonNullable<TestDb['db']['sqliteHandle']>;
    const late = read(SELECT, ['alpha', 0]);
    handle.exec('begin');
    handle.prepare('delete from projects').run();
    expect(await late).toBeUndefined();
    handle.exec('rollback');
    expect(await get(SELECT, ['alpha', 0])).toHaveLength(1);
  });

  it('keys kept results by argument type and boundaries, and does not keep reads with other argument types', async () => {
    const byId = 'select id from projects where id = ? or id = ?';
    expect(await get(byId, ['prj_a', 'prj_b'])).toHaveLength(2);
    // 'prj_a' + 'prj_b' and 'prj_ap' + 'rj_b' must not share a key.
    expect(await get(byId, ['prj_ap', 'rj_b'])).toEqual([]);
    expect(await get('select ? as v', [1])).toEqual([{ v: 1 }]);
    expect(await get('select ? as v', ['1'])).toEqual([{ v: '1' }]);
    expect(await get('select ? as v', [null])).toEqual([{ v: null }]);
    const reads = read.stats.reads;
    expect(await get('select length(?) as n', [Buffer.from('abc')])).toEqual([{ n: 3 }]);
    expect(await get('select length(?) as n', [Buffer.from('abc')])).toEqual([{ n: 3 }]);
    expect(read.stats.reads).toBe(reads + 2);
  });

  it('keeps a bounded number of results per statement', async () => {
    const byTime = 'select count(*) as n from projects where created_at > ?';
    for (let i = 0; i < KEPT_RESULTS_PER_STATEMENT + 10; i++) expect(await get(byTime, [i])).toEqual([{ n: i < 10 ? 3 : i < 20 ? 2 : i < 30 ? 1 : 0 }]);
    expect(read.keptResults()).toBeLessThanOrEqual(KEPT_RESULTS_PER_STATEMENT);
    expect(read.keptResults()).toBeGreaterThan(0);
  });

  it('does not run writes, and with keep: false runs every read', async () => {
    expect(read('delete from projects', [])).toBeUndefined();
    expect(await get(SELECT, ['alpha', 0])).toHaveLength(2);
    const plain = sqliteDirectReader(t.db.sqliteHandle as NonNullable<TestDb['db']['sqliteHandle']>, { keep: false });
    await plain(SELECT, ['alpha', 0]);
    await plain(SELECT, ['alpha', 0]);
    expect(plain.stats).toEqual({ reads: 2, kept: 0, checks: 0 });
    expect(plain.keptResults()).toBe(0);
  });
});
