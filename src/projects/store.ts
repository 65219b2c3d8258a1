// SQL for projects and API keys: one function per query.
import type { Kysely } from 'kysely';
import { reusableQuery } from '../db/reusable.ts';
import type { DB } from '../db/schema.ts';
import type { ProjectsTables } from './tables.ts';

export type ProjectRow = ProjectsTables['projects'];
export type KeyRow = ProjectsTables['api_keys'];

/** What authentication needs of a key. */
export type KeyAuthRow = Pick<KeyRow, 'id' | 'project_id' | 'kind' | 'last_used_at' | 'revoked_at'>;

// The per-request key lookup, compiled once; concurrent lookups are combined into one statement where the
// database batches lookups (src/db/reusable.ts).
const keyByHash = reusableQuery<[hash: string], KeyAuthRow>(
  'key_auth_by_hash',
  1,
  (db: Kysely<DB>, hash) => db.selectFrom('api_keys').select(['id', 'project_id', 'kind', 'last_used_at', 'revoked_at']).where('hash', '=', hash),
  ['text'],
);

export function createProjectsStore(db: Kysely<DB>) {
  return {
    async insertProject(row: ProjectRow): Promise<void> {
      await db.insertInto('projects').values(row).execute();
    },
    async getProject(id: string): Promise<ProjectRow | undefined> {
      return db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
    },
    async listProjects(): Promise<ProjectRow[]> {
      return db.selectFrom('projects').selectAll().orderBy('created_at').orderBy('id').execute();
    },
    async updateProjectSettings(id: string, settings: string): Promise<void> {
      await db.updateTable('projects').set({ settings }).where('id', '=', id).execute();
    },
    async insertKey(row: KeyRow): Promise<void> {
      await db.insertInto('api_keys').values(row).execute();
    },
    async findKeyByHash(hash: string): Promise<KeyAuthRow | undefined> {
      return (await keyByHash(db, hash))[0];
    },
    async getKey(id: string): Promise<KeyRow | undefined> {
      return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    },
    async listKeys(projectId: string): Promise<KeyRow[]> {
      return db.selectFrom('api_keys').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute();
    },
    async revokeKey(id: string, at: number): Promise<boolean> {
      const r = await db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
      return Number(r.numUpdatedRows) > 0;
    },
    async touchKey(id: string, at: number): Promise<void> {
      await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
    },
  };
}

export type ProjectsStore = ReturnType<typeof createProjectsStore>;
