// Bearer-key authentication and the project-scope rules of SPEC §1, and the dashboard's session cookie,
// which stands for an admin key on requests that carry no Authorization header.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import type { KeyKind } from '../lib/ids.ts';
import type { AuthenticatedKey, PresentedKey } from '../projects/service.ts';
import type { KeyAuthRow } from '../projects/store.ts';
import { csrfMatches, type DashboardSession, SESSION_COOKIE } from '../sessions/service.ts';
import type { AppContext } from './context.ts';

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthenticatedKey;
    /** Set when the request was authenticated by the dashboard's session cookie. */
    dashboardSession?: DashboardSession;
  }
}

/** What authenticates a request: API keys, and dashboard sessions. */
export type Credentials = Pick<AppContext, 'projects' | 'sessions'>;

/** Methods that change nothing: the only ones a cookie-authenticated request may make without the CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

// The scheme name is case-insensitive (RFC 9110 §11.1); the key is one token.
const BEARER_RE = /^Bearer +(\S+)$/i;

/** Reads `Authorization: Bearer <key>`; null when absent or malformed (`Basic …`, `Bearer` alone, two tokens). */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = BEARER_RE.exec(header.trim());
  return m ? (m[1] as string) : null;
}

/**
 * An onRequest hook (so that authentication is decided before the body is read) that admits keys of the allowed kinds for the `projectId` path parameter:
 * bad key → 401; valid key on another project's path → 404; ingest key where only admin is allowed → 403.
 */
export function requireKey(creds: Credentials, allowed: readonly KeyKind[]) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    if (request.headers.authorization === undefined && allowed.includes('admin')) {
      admit(request, await sessionKey(creds, request), allowed);
      return;
    }
    const token = bearerToken(request.headers.authorization);
    admit(request, token ? await creds.projects.authenticate(token) : null, allowed);
  };
}

/**
 * The admin key a request's session cookie stands for, or null without a live session. A cookie-authenticated
 * state change must carry the session's CSRF token in `x-csrf-token` (403 `csrf_token_invalid`): the cookie is
 * SameSite=Strict, and the token is a second defence that no cross-site page can read.
 */
export async function sessionKey(creds: Pick<Credentials, 'sessions'>, request: FastifyRequest): Promise<AuthenticatedKey | null> {
  const token = sessionToken(request);
  const session = token ? await creds.sessions.authenticate(token) : null;
  if (!session) return null;
  if (!SAFE_METHODS.has(request.method)) {
    const presented = request.headers['x-csrf-token'];
    if (!csrfMatches(typeof presented === 'string' ? presented : undefined, session.csrfToken)) throw new AppError('csrf_token_invalid');
  }
  request.dashboardSession = session;
  return { keyId: session.keyId, projectId: session.projectId, kind: 'admin' };
}

/** The session token of the request's cookie header, or null. */
export function sessionToken(request: FastifyRequest): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  return request.server.parseCookie(header)[SESSION_COOKIE] ?? null;
}

/**
 * The same rules as `requireKey` for a route whose key lookup is combined with the route's own read (one
 * query instead of two): `lookup` gets the presented key (kind and hash) and returns the key's stored row
 * (undefined: unknown) and whatever else it read, which is passed to `keep` once the key is admitted.
 */
export function requireKeyWith<T>(
  creds: Credentials,
  allowed: readonly KeyKind[],
  lookup: (presented: PresentedKey, request: FastifyRequest) => Promise<{ key: KeyAuthRow; value: T } | undefined>,
  keep: (request: FastifyRequest, value: T) => void,
  /** What `lookup` reads besides the key, for a request authenticated by the session cookie. */
  lookupForSession: (request: FastifyRequest) => Promise<T>,
) {
  const { projects } = creds;
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    if (request.headers.authorization === undefined && allowed.includes('admin')) {
      admit(request, await sessionKey(creds, request), allowed);
      keep(request, await lookupForSession(request));
      return;
    }
    const token = bearerToken(request.headers.authorization);
    const presented = token ? projects.presentedKey(token) : null;
    const found = presented ? await lookup(presented, request) : undefined;
    admit(request, presented && found ? await projects.admitKey(presented, found.key) : null, allowed);
    keep(request, (found as { value: T }).value);
  };
}

/** bad key → 401; valid key on another project's path → 404; a key of a kind not allowed → 403. */
function admit(request: FastifyRequest, key: AuthenticatedKey | null, allowed: readonly KeyKind[]): void {
  if (!key) throw new AppError('unauthorized', undefined, undefined, { 'www-authenticate': 'Bearer' });
  const projectId = (request.params as { projectId?: string }).projectId;
  if (projectId !== undefined && projectId !== key.projectId) throw new AppError('project_not_found');
  if (!allowed.includes(key.kind)) throw new AppError('forbidden', `This endpoint needs an ${allowed.join(' or ')} key`);
  request.auth = key;
}
