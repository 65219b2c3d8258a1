// Bearer-key authentication and the project-scope rules of SPEC §1.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyKind } from '../lib/ids.ts';
import type { AuthenticatedKey, ProjectService } from '../projects/service.ts';
import { AppError } from './errors.ts';

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
    const key = token ? await projects.authenticate(token) : null;
    if (!key) throw new AppError('unauthorized', undefined, undefined, { 'www-authenticate': 'Bearer' });
    const projectId = (request.params as { projectId?: string }).projectId;
    if (projectId !== undefined && projectId !== key.projectId) throw new AppError('project_not_found');
    if (!allowed.includes(key.kind)) throw new AppError('forbidden', `This endpoint needs an ${allowed.join(' or ')} key`);
    request.auth = key;
  };
}
