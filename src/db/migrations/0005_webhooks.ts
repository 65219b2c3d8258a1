import type { Kysely } from 'kysely';
import type { DialectCaps } from '../dialect.ts';

// Reserved for its area; filled in by that work. Migrations are append-only once released.
export async function up(_db: Kysely<any>, _caps: DialectCaps): Promise<void> {}
