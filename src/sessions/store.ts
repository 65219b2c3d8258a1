// SQL for dashboard sessions and sign-in links: one function per query.
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { SessionsTables } from './tables.ts';

export type SessionRow = SessionsTables['dashboard_sessions'];
export type SigninLinkRow = SessionsTables['dashboard_signin_links'];

/** A live session: unexpired, and its key not revoked. */
export type LiveSession = Pick<SessionRow, 'id' | 'project_id' | 'key_id' | 'csrf_token' | 'expires_at'>;

export function createSessionsStore(db: Kysely<DB>) {
  return {
    async insertSession(row: SessionRow): Promise<void> {
      await db.insertInto('dashboard_sessions').values(row).execute();
    },

    /** The session with this token hash if it is unexpired at `now` and its key is not revoked. */
    async findLiveSession(tokenHash: string, now: number): Promise<LiveSession | undefined> {
      return db
        .selectFrom('dashboard_sessions as s')
        .innerJoin('api_keys as k', 'k.id', 's.key_id')
        .select(['s.id', 's.project_id', 's.key_id', 's.csrf_token', 's.expires_at'])
        .where('s.token_hash', '=', tokenHash)
        .where('s.expires_at', '>', now)
        .where('k.revoked_at', 'is', null)
        .executeTakeFirst();
    },

    async deleteSession(id: string): Promise<void> {
      await db.deleteFrom('dashboard_sessions').where('id', '=', id).execute();
    },

    /** Removes sessions and links that expired before `now`. */
    async deleteExpired(now: number): Promise<void> {
      await db.deleteFrom('dashboard_sessions').where('expires_at', '<=', now).execute();
      await db.deleteFrom('dashboard_signin_links').where('expires_at', '<=', now).execute();
    },

    async insertLink(row: SigninLinkRow): Promise<void> {
      await db.insertInto('dashboard_signin_links').values(row).execute();
    },

    /**
     * Marks the link used if it is unused and unexpired at `now`, and returns it when this call was the one
     * that used it and its key is not revoked. The conditional update is what makes a link single-use: of two
     * concurrent uses, one updates the row and the other finds it used.
     */
    async consumeLink(tokenHash: string, now: number): Promise<Pick<SigninLinkRow, 'project_id' | 'key_id'> | undefined> {
      const res = await db
        .updateTable('dashboard_signin_links')
        .set({ used_at: now })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return undefined;
      return db
        .selectFrom('dashboard_signin_links as l')
        .innerJoin('api_keys as k', 'k.id', 'l.key_id')
        .select(['l.project_id', 'l.key_id'])
        .where('l.token_hash', '=', tokenHash)
        .where('k.revoked_at', 'is', null)
        .executeTakeFirst();
    },
  };
}

export type SessionsStore = ReturnType<typeof createSessionsStore>;
