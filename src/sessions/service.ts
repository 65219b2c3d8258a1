// Dashboard sign-in: a session is started with an admin key or a one-time link and then carried by an
// HttpOnly cookie holding a random token (only its hash is stored). A session acts as one admin key of one
// project and ends at its expiry, on sign-out, or as soon as that key is revoked (checked on every request).
import crypto from 'node:crypto';
import { AppError } from '../errors.ts';
import { base62, hashKey, newId } from '../lib/ids.ts';
import type { ProjectService } from '../projects/service.ts';
import type { SessionsStore } from './store.ts';

/** The cookie the dashboard's session token travels in. */
export const SESSION_COOKIE = 'inkwell_session';

/**
 * The admin key that sessions started from a one-time link act as, one per project, created by the first link.
 * Its secret is never shown (nobody can present it); revoking it ends every session started from a link.
 */
export const LINK_KEY_NAME = 'dashboard sign-in links';

const SESSION_TOKEN_RE = /^iks_[0-9A-Za-z]{43}$/;
const LINK_TOKEN_RE = /^ikl_[0-9A-Za-z]{43}$/;

export interface DashboardSession {
  sessionId: string;
  projectId: string;
  keyId: string;
  csrfToken: string;
  expiresAt: number;
}

export interface SessionSettings {
  sessionTtlMs: number;
  linkTtlMs: number;
}

export function createSessionService(store: SessionsStore, projects: ProjectService, settings: SessionSettings, now: () => number = Date.now) {
  async function start(projectId: string, keyId: string): Promise<DashboardSession & { token: string }> {
    const t = now();
    // Expired rows are removed here rather than by a timer: sign-ins are rare, and an expired row is never
    // accepted anyway (every lookup compares expires_at).
    await store.deleteExpired(t);
    const token = `iks_${base62(43)}`;
    const session = { sessionId: newId('ses'), projectId, keyId, csrfToken: base62(32), expiresAt: t + settings.sessionTtlMs };
    await store.insertSession({
      id: session.sessionId,
      token_hash: hashKey(token),
      project_id: projectId,
      key_id: keyId,
      csrf_token: session.csrfToken,
      created_at: t,
      expires_at: session.expiresAt,
    });
    return { ...session, token };
  }

  return {
    /** Starts a session with an admin key (401 for an unknown or revoked key, 403 for an ingest key). */
    async signInWithKey(key: string): Promise<DashboardSession & { token: string }> {
      const k = await projects.authenticate(key);
      if (!k) throw new AppError('unauthorized', 'The key is unknown or revoked');
      if (k.kind !== 'admin') throw new AppError('forbidden', 'Sign in with an admin key (ink_…); ingest keys cannot use the dashboard');
      return start(k.projectId, k.keyId);
    },

    /** Starts a session with a one-time link's token; a used, expired or unknown link is a 401. */
    async signInWithLink(linkToken: string): Promise<DashboardSession & { token: string }> {
      const link = LINK_TOKEN_RE.test(linkToken) ? await store.consumeLink(hashKey(linkToken), now()) : undefined;
      if (!link) throw new AppError('unauthorized', 'The sign-in link is unknown, expired or already used: run `inkwell dashboard` for a new one');
      return start(link.project_id, link.key_id);
    },

    /** Makes a one-time sign-in link's token for the project (NotFoundError for an unknown project). */
    async createLink(projectId: string): Promise<{ token: string; expiresAt: number }> {
      const keys = await projects.listKeys(projectId);
      const linkKey =
        keys.find((k) => k.kind === 'admin' && k.name === LINK_KEY_NAME && k.revokedAt === null) ??
        (await projects.createKey({ projectId, kind: 'admin', name: LINK_KEY_NAME }));
      const t = now();
      const token = `ikl_${base62(43)}`;
      const expiresAt = t + settings.linkTtlMs;
      await store.insertLink({ token_hash: hashKey(token), project_id: projectId, key_id: linkKey.id, created_at: t, expires_at: expiresAt, used_at: null });
      return { token, expiresAt };
    },

    /** The live session a cookie's token names, or null (malformed, unknown, expired, signed out, key revoked). */
    async authenticate(token: string): Promise<DashboardSession | null> {
      if (!SESSION_TOKEN_RE.test(token)) return null;
      const s = await store.findLiveSession(hashKey(token), now());
      if (!s) return null;
      return { sessionId: s.id, projectId: s.project_id, keyId: s.key_id, csrfToken: s.csrf_token, expiresAt: Number(s.expires_at) };
    },

    async signOut(sessionId: string): Promise<void> {
      await store.deleteSession(sessionId);
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;

/** Whether a presented CSRF token is the session's (constant time). */
export function csrfMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}
