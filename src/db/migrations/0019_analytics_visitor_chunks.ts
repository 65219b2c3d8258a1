import type { Kysely } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// The visitor dictionary moves from one row per visitor to chunks of consecutive ordinals of one project
// (`analytics_visitor_chunks`, src/analytics/store/tables.ts). On PostgreSQL a visitor row was ~60 bytes of heap
// (tuple header, ordinal, project, key) plus ~20 of primary-key index, against the key's 17–18 bytes: the largest
// part of the database (bench/README.md, Decisions, "Visitor dictionary in chunks"). Every visitor keeps its ordinal: segments and day summaries
// refer to visitors by it. Ordinals become per project: new ones continue after the project's largest (the ingest
// writer assigns them under the project's write lock), so there is no sequence any more.
//
// The old rows are read in ordinal order, CHUNK at a time (bounded memory whatever the dictionary's size), and
// each project's run of consecutive ordinals whose keys have the same width becomes a chunk row, cut at
// VISITOR_CHUNK_BYTES; a gap in a project's ordinals (another project's visitors, a rolled-back insert) starts a
// new row. The first statement renames the old table, which on PostgreSQL takes its exclusive lock until this
// migration commits, so no visitor written by another process meanwhile can be missed (on SQLite the whole
// migration run holds the write lock).
const CHUNK = 10_000;
// The store's VISITOR_CHUNK_BYTES when this migration was written, frozen here: a later change to the store's
// constant must not change what this migration writes (readers take any row's width and length as they are).
const VISITOR_CHUNK_BYTES = 1984;

interface Run {
  first: number;
  last: number;
  width: number;
  keys: Buffer[];
}

export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  await db.schema.alterTable('analytics_visitors').renameTo('analytics_visitors_rows').execute();
  // Column order for the smallest PostgreSQL row: the 8-byte ordinal first, then 4, 2, and the bytes.
  await db.schema
    .createTable('analytics_visitor_chunks')
    .addColumn('first_ord', caps.bigintType, (c) => c.notNull())
    .addColumn('project_ord', 'integer', (c) => c.notNull())
    .addColumn('width', 'smallint', (c) => c.notNull())
    .addColumn('keys', caps.blobType, (c) => c.notNull())
    .addPrimaryKeyConstraint('analytics_visitor_chunks_pk', ['project_ord', 'first_ord'])
    .execute();

  const runs = new Map<number, Run>();
  let pending: { first_ord: number; project_ord: number; width: number; keys: Buffer }[] = [];
  const write = async () => {
    for (let i = 0; i < pending.length; i += 200)
      await db
        .insertInto('analytics_visitor_chunks')
        .values(pending.slice(i, i + 200))
        .execute();
    pending = [];
  };
  const close = (project: number, run: Run) => {
    pending.push({ first_ord: run.first, project_ord: project, width: run.width, keys: Buffer.concat(run.keys) });
    runs.delete(project);
  };

  let after = 0;
  for (;;) {
    const rows: { ord: number | string; project_ord: number; visitor_key: Uint8Array }[] = await db
      .selectFrom('analytics_visitors_rows')
      .select(['ord', 'project_ord', 'visitor_key'])
      .where('ord', '>', after)
      .orderBy('ord')
      .limit(CHUNK)
      .execute();
    if (rows.length === 0) break;
    for (const r of rows) {
      const ord = Number(r.ord);
      const project = Number(r.project_ord);
      const key = Buffer.from(r.visitor_key);
      let run = runs.get(project);
      if (run && (run.last + 1 !== ord || run.width !== key.length || (run.keys.length + 1) * run.width > VISITOR_CHUNK_BYTES)) {
        close(project, run);
        run = undefined;
      }
      if (!run) {
        run = { first: ord, last: ord, width: key.length, keys: [] };
        runs.set(project, run);
      }
      run.keys.push(key);
      run.last = ord;
    }
    after = Number(rows[rows.length - 1]?.ord);
    await write();
    if (rows.length < CHUNK) break;
  }
  for (const [project, run] of [...runs]) close(project, run);
  await write();
  // Nothing else refers to the old table; its ordinal sequence (PostgreSQL) goes with it.
  await db.schema.dropTable('analytics_visitors_rows').execute();
}
