import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, migrationsApplied } from '../../src/db/index.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { describeEachDialect, openTestDb, pgUrl, type TestDb } from '../helpers/db.ts';

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

// PostgreSQL only: SQLite files are not shared between runs.
describe.skipIf(!pgUrl())('migrations beside a busy PostgreSQL', () => {
  it('succeed while other schemas are created and dropped at the same moment', async () => {
    const churn = await openTestDb('postgres', { migrated: false });
    const url = pgUrl() as string;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    let stop = false;
    // Another "test run" creating and dropping schemas with tables in a tight loop.
    const noise = (async () => {
      for (let i = 0; !stop; i++) {
        const s = `churn_${process.pid}_${i}`;
        await admin.query(`create schema "${s}"; create table "${s}".t (id int)`);
        await admin.query(`drop schema "${s}" cascade`);
      }
    })();
    try {
      const runs: TestDb[] = [];
      for (let i = 0; i < 6; i++) {
        const t = await openTestDb('postgres', { migrated: false });
        runs.push(t);
        expect(await migrate(t.db)).toEqual(Object.keys(MIGRATIONS));
        expect(await migrationsApplied(t.db)).toBe(true);
      }
      for (const t of runs) await t.cleanup();
    } finally {
      stop = true;
      await noise;
      await admin.end();
      await churn.cleanup();
    }
  });
});
