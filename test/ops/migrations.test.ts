// Migrations on start: idempotent, safe when several processes start at once, and (PostgreSQL) confined
// to the schema the service works in even when another schema of the database has Kysely's tables.
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, migrationsApplied } from '../../src/db/index.ts';
import { MIGRATIONS } from '../../src/db/migrations/index.ts';
import { runCli } from '../cli/run-cli.ts';
import { describeEachDialect, openTestDb, pgUrl, type TestDb } from '../helpers/db.ts';

const opened: TestDb[] = [];
afterEach(async () => {
  for (const t of opened.splice(0)) await t.cleanup();
});

describeEachDialect('migrate on start', (dialect) => {
  it('two processes starting at once on a fresh database apply each migration exactly once', async () => {
    const t = await openTestDb(dialect, { migrated: false });
    opened.push(t);
    const [a, b] = await Promise.all([runCli(['project', 'list', '--json'], t.env), runCli(['project', 'list', '--json'], t.env)]);
    for (const r of [a, b]) {
      expect(r.stderr).toMatch(/^inkwell: using database \S+\n$/); // which one, and nothing else
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ projects: [] });
    }
    expect(await migrationsApplied(t.db)).toBe(true);
    const applied = await t.db.kysely
      .selectFrom('kysely_migration' as any)
      .select('name')
      .execute();
    expect(applied.map((r: any) => r.name).sort()).toEqual(Object.keys(MIGRATIONS).sort());
    expect(await migrate(t.db)).toEqual([]);
  });
});

describe.skipIf(!pgUrl())('PostgreSQL schemas', () => {
  it("migrates a fresh schema while another schema already has Kysely's migration tables", async () => {
    const first = await openTestDb('postgres');
    opened.push(first);
    const second = await openTestDb('postgres', { migrated: false });
    opened.push(second);
    expect(await migrationsApplied(second.db)).toBe(false);
    expect(await migrate(second.db)).toEqual(Object.keys(MIGRATIONS));
    expect(await migrationsApplied(second.db)).toBe(true);
    // The second schema has its own tables.
    await second.db.kysely
      .insertInto('projects')
      .values({ id: 'prj_s', name: 'n', repository: 'r', ref: 'main', model: null, settings: '{}', visitor_secret: 's', created_at: 1 })
      .execute();
    expect(await first.db.kysely.selectFrom('projects').selectAll().execute()).toEqual([]);
  });
});
