// Migrations 0018 and 0019: the visitor dictionary's text keys become bytes, then chunks of consecutive ordinals per
// project; every visitor keeps its ordinal.

import crypto from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { analyticsStore as store, VISITOR_CHUNK_BYTES } from '../../src/analytics/store/store.ts';
import { decodeVisitorKey } from '../../src/analytics/store/visitor-key.ts';
import { createBulkWriter } from '../../src/db/bulk.ts';
import { migrate } from '../../src/db/index.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';

describeEachDialect('migrations 0018 and 0019 (visitor keys as bytes, in chunks)', (dialect) => {
  let t: TestDb | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  it('converts stored text keys into chunks and keeps every ordinal', async () => {
    t = await openTestDb(dialect);
    const k = t.db.kysely as any;
    // Back to the table as it was before 0018 (text keys), with rows of two projects: runs of consecutive ordinals
    // of one project (which become chunks, cut where the key's width changes or a chunk is full) and gaps.
    await k.schema.dropTable('analytics_visitor_chunks').execute();
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
      // Blocks of 500 ordinals alternate between the projects; every 7th ordinal is skipped (a rolled-back insert).
      const ord = 1 + i + Math.floor(i / 7);
      const kindOf = Math.floor(i / 40) % 3 === 0 ? 1 : kind;
      const finalKey = kindOf === kind ? key : `h:${crypto.randomBytes(17).toString('base64url').slice(0, 22)}`;
      rows.push({ ord, project_ord: 1 + (Math.floor(i / 500) % 2), visitor_key: finalKey });
    }
    for (let i = 0; i < rows.length; i += 1000)
      await k
        .insertInto('analytics_visitors')
        .values(rows.slice(i, i + 1000))
        .execute();
    await k.deleteFrom('kysely_migration').where('name', 'in', ['0018_analytics_visitor_bytes', '0019_analytics_visitor_chunks']).execute();

    expect(await migrate(t.db)).toEqual(['0018_analytics_visitor_bytes', '0019_analytics_visitor_chunks']);

    const chunks = await t.db.kysely.selectFrom('analytics_visitor_chunks').selectAll().orderBy('project_ord').orderBy('first_ord').execute();
    for (const c of chunks) {
      expect(c.keys.length % c.width).toBe(0);
      expect(c.keys.length).toBeLessThanOrEqual(VISITOR_CHUNK_BYTES);
    }
    // Chunks are as long as they can be: no two neighbours of a project could have been one.
    for (let i = 1; i < chunks.length; i++) {
      const [a, b] = [chunks[i - 1]!, chunks[i]!];
      if (a.project_ord !== b.project_ord) continue;
      const mergeable =
        a.width === b.width && Number(a.first_ord) + a.keys.length / a.width === Number(b.first_ord) && a.keys.length + b.keys.length <= VISITOR_CHUNK_BYTES;
      expect(mergeable).toBe(false);
    }
    expect(Math.max(...chunks.map((c) => c.keys.length / c.width))).toBe(7);
    for (const project of [1, 2]) {
      const mine = rows.filter((r) => r.project_ord === project);
      const stored = await store.selectVisitorsAfter(t.db.kysely, project, 0);
      expect(stored).toEqual(mine.map((r) => ({ ord: r.ord, visitor_key: r.visitor_key })));
      // Each key is found by its ordinal, at its chunk's offset.
      const starts = chunks.filter((c) => c.project_ord === project).map((c) => Number(c.first_ord));
      const some = mine.filter((_, i) => i % 97 === 0);
      const found = await store.selectVisitorsByOrd(
        createBulkWriter(t.db),
        t.db.kysely,
        project,
        some.map((r) => ({ first: Math.max(...starts.filter((s) => s <= r.ord)), ord: r.ord })),
      );
      expect(found.sort((a, b) => a.ord - b.ord)).toEqual(some.map((r) => ({ ord: r.ord, visitor_key: r.visitor_key })));
    }
    expect(decodeVisitorKey(chunks[0]!.keys.subarray(0, chunks[0]!.width))).toBe(rows[0]!.visitor_key);
  });
});
