// Migration 0018: the visitor dictionary's text keys become bytes, every row keeping its ordinal.
import crypto from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { analyticsStore as store } from '../../src/analytics/store/store.ts';
import { decodeVisitorKey } from '../../src/analytics/store/visitor-key.ts';
import { migrate } from '../../src/db/index.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';

describeEachDialect('migration 0018 (visitor keys as bytes)', (dialect) => {
  let t: TestDb | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  it('converts stored text keys in chunks, keeps every ordinal, and new visitors continue after them', async () => {
    t = await openTestDb(dialect);
    const k = t.db.kysely as any;
    // Back to the table as it was before 0018 (text keys), with rows of two projects and gaps in the ordinals.
    await k.schema.dropTable('analytics_visitors').execute();
    await t.db.caps
      .autoIdColumn(k.schema.createTable('analytics_visitors'), 'ord')
      .addColumn('project_ord', 'integer', (c: any) => c.notNull())
      .addColumn('visitor_key', 'text', (c: any) => c.notNull())
      .execute();
    const rows: { ord: number; project_ord: number; visitor_key: string }[] = [];
    for (let i = 0; i < 12_000; i++) {
      const kind = i % 4;
      const key =
        kind === 0
          ? `v:${crypto.randomUUID()}`
          : kind === 1
            ? `h:${crypto.randomBytes(17).toString('base64url').slice(0, 22)}`
            : kind === 2
              ? `v:id-${i}-ü`
              : `v:${crypto.randomUUID().toUpperCase()}`;
      rows.push({ ord: 3 * i + 1, project_ord: 1 + (i % 2), visitor_key: key });
    }
    for (let i = 0; i < rows.length; i += 1000)
      await k
        .insertInto('analytics_visitors')
        .values(rows.slice(i, i + 1000))
        .execute();
    await k.deleteFrom('kysely_migration').where('name', '=', '0018_analytics_visitor_bytes').execute();

    expect(await migrate(t.db)).toEqual(['0018_analytics_visitor_bytes']);

    const stored = await t.db.kysely.selectFrom('analytics_visitors').select(['ord', 'project_ord', 'visitor_key']).orderBy('ord').execute();
    expect(stored.map((r) => ({ ord: Number(r.ord), project_ord: r.project_ord, visitor_key: decodeVisitorKey(r.visitor_key) }))).toEqual(rows);
    // The store finds converted keys, and a new visitor gets an ordinal after every copied one.
    const some = rows.slice(0, 8).filter((r) => r.project_ord === 1);
    const found = await store.selectVisitorOrds(
      t.db.kysely,
      1,
      some.map((r) => r.visitor_key),
    );
    expect(found.sort((a, b) => a.ord - b.ord)).toEqual(some.map((r) => ({ ord: r.ord, visitor_key: r.visitor_key })));
    await store.insertVisitors(t.db.kysely, [{ project_ord: 1, visitor_key: 'v:new' }]);
    const [fresh] = await store.selectVisitorOrds(t.db.kysely, 1, ['v:new']);
    expect(fresh?.ord).toBeGreaterThan((rows[rows.length - 1] as { ord: number }).ord);
  });
});
