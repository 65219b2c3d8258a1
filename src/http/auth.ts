// Bearer-key authentication and the project-scope rules of SPEC §1.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';
import type { KeyKind } from '../lib/ids.ts';
import type { AuthenticatedKey, PresentedKey, ProjectService } from '../projects/service.ts';
import type { KeyAuthRow } from '../projects/store.ts';

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthenticatedKey;
  }
}

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
export function requireKey(projects: ProjectService, allowed: readonly KeyKind[]) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const token = bearerToken(request.headers.authorization);
    admit(request, token ? await projects.authenticate(token) : null, allowed);
  };
}

/**
 * The same rules as `requireKey` for a route whose key lookup is combined with the route's own read (one
 * query instead of two): `lookup` gets the presented key (kind and hash) and returns the key's stored row
 * (undefined: unknown) and whatever else it read, which is passed to `keep` once the key is admitted.
 */
export function requireKeyWith<T>(
  projects: ProjectService,
  allowed: readonly KeyKind[],
  lookup: (presented: PresentedKey, request: FastifyRequest) => Promise<{ key: KeyAuthRow; value: T } | undefined>,
  keep: (request: FastifyRequest, value: T) => void,
) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
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
