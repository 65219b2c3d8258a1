import type { Kysely } from 'kysely';
import { encodeVisitorKey } from '../../analytics/store/visitor-key.ts';
import type { DialectCaps } from '../dialect.ts';

// The visitor dictionary stores its keys as bytes (src/analytics/store/visitor-key.ts) instead of text, in a table
// whose columns are ordered for the smallest PostgreSQL row (8-byte ordinal first, then the 4-byte project, then
// the key: no alignment padding). Every row keeps its ordinal: segments and day summaries refer to visitors by it.
//
// The rows are copied in ordinal order, CHUNK at a time (bounded memory whatever the dictionary's size), into a
// new table, and the old one is dropped. The first statement renames the old table, which on PostgreSQL takes its
// exclusive lock until this migration commits, so no visitor written by another process meanwhile can be missed
// (on SQLite the whole migration run holds the write lock). New ordinals continue after the largest copied one.
// On PostgreSQL the new table's key index and sequence get names with a suffix (the old ones were still taken
// when they were made); nothing refers to them by name.
const CHUNK = 5000;

export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  await db.schema.alterTable('analytics_visitors').renameTo('analytics_visitors_text').execute();
  await caps
    .autoIdColumn(db.schema.createTable('analytics_visitors'), 'ord')
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('visitor_key', caps.blobType, (c) => c.notNull())
    .execute();
  let after = 0;
  for (;;) {
    const rows: { ord: number | string; project_ord: number; visitor_key: string }[] = await db
      .selectFrom('analytics_visitors_text')
      .select(['ord', 'project_ord', 'visitor_key'])
      .where('ord', '>', after)
      .orderBy('ord')
      .limit(CHUNK)
      .execute();
    if (rows.length === 0) break;
    await db
      .insertInto('analytics_visitors')
      .values(rows.map((r) => ({ ord: Number(r.ord), project_ord: r.project_ord, visitor_key: encodeVisitorKey(r.visitor_key) })))
      .execute();
    after = Number((rows[rows.length - 1] as { ord: number | string }).ord);
    if (rows.length < CHUNK) break;
  }
  await db.schema.dropTable('analytics_visitors_text').execute();
  await caps.continueAutoIds(db, 'analytics_visitors', 'ord');
}
