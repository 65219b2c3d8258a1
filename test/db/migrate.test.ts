import { afterEach, describe, expect, it } from 'vitest';
import { migrate, migrationsApplied } from '../../src/db/index.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';

describeEachDialect('migrations', (dialect) => {
  let t: TestDb | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  it('apply every migration once and are idempotent on a second run', async () => {
    t = await openTestDb(dialect, { migrated: false });
    expect(await migrationsApplied(t.db)).toBe(false);
    const first = await migrate(t.db);
    expect(first).toEqual(Object.keys(MIGRATIONS));
    expect(await migrationsApplied(t.db)).toBe(true);
    expect(await migrate(t.db)).toEqual([]);
  });

  it('keeps data across a close and reopen of the same database', async () => {
    t = await openTestDb(dialect);
    await t.db.kysely
      .insertInto('projects')
      .values({ id: 'prj_x', name: 'n', repository: 'r', ref: 'main', model: null, settings: '{}', visitor_secret: 's', created_at: 1 })
      .execute();
    await t.db.close();
    const again = t.reopen();
    expect(await migrate(again)).toEqual([]);
    const row = await again.kysely.selectFrom('projects').selectAll().where('id', '=', 'prj_x').executeTakeFirstOrThrow();
    expect(row.created_at).toBe(1);
  });
});

describe('migration names', () => {
  it('are numbered and ordered', () => {
    const names = Object.keys(MIGRATIONS);
    expect(names).toEqual([...names].sort());
    for (const n of names) expect(n).toMatch(/^\d{4}_[a-z_]+$/);
  });
});
