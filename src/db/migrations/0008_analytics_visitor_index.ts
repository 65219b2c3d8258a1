import type { Kysely } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// On the embedded database (one writer at a time) the visitor dictionary loses its unique index on
// (project, visitor key): the ingest writer keeps an in-memory hash index of it instead and adds visitors
// append-only while it holds the write lock, catching up on visitors other processes added first (see
// src/analytics/visitor-index.ts). A unique B-tree on random keys dirtied about one page per new visitor —
// most of what ingest wrote to the WAL. PostgreSQL (concurrent writers) keeps the index: there it is what
// makes two writers agree on a new visitor's ordinal.
export async function up(db: Kysely<any>, caps: DialectCaps): Promise<void> {
  if (caps.concurrentWriters) return;
  await db.schema.dropIndex('analytics_visitors_key').execute();
}
