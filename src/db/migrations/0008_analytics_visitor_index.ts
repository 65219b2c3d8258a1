import type { Kysely } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// The visitor dictionary loses its unique index on (project, visitor key): the ingest writer keeps an
// in-memory hash index of it instead and adds visitors append-only while it holds the project's write lock
// (the data-version row it updates first: SQLite's single writer, a row lock on PostgreSQL), catching up on
// visitors other processes added before (see src/analytics/ingest/writer/visitor-index.ts and ingest-writer.ts). A unique
// B-tree on random keys dirtied about one page per new visitor: most of what ingest wrote to the WAL.
export async function up(db: Kysely<any>, _caps: DialectCaps): Promise<void> {
  await db.schema.dropIndex('analytics_visitors_key').ifExists().execute();
}
