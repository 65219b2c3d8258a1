// The dashboard's only way to the API: same-origin fetch with the session cookie (the clients' request
// handling, src/client/http.ts), the session's CSRF token on every change, and the API's `{error, code,
// details}` as an ApiError whose message the page shows.
import { ApiError, createHttpCall } from '../client/http.ts';
import type { paths } from '../client/openapi.ts';

export { ApiError };

/** The JSON body of a path's successful answer (200, else 201), from the generated OpenAPI types. */
export type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': infer T } } };
}
  ? T
  : paths[P][M] extends { responses: { 201: { content: { 'application/json': infer T } } } }
    ? T
    : never;

export type SessionInfo = Ok<'/v1/session', 'post'>;
export type Project = Ok<'/v1/projects/{projectId}', 'get'>;

let csrfToken: string | null = null;
let onUnauthorized: (() => void) | null = null;

/** The session's CSRF token, sent as `x-csrf-token` on every request that is not GET/HEAD. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when the API answers 401 to a signed-in request (session expired, signed out, key revoked). */
export function whenUnauthorized(callback: () => void): void {
  onUnauthorized = callback;
}

// Same origin, no key: the browser sends the session cookie.
const call = createHttpCall({ baseUrl: '' });

export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
  try {
    return (await call<T>(method, path, body, method !== 'GET' && csrfToken ? { 'x-csrf-token': csrfToken } : {})).body;
  } catch (err) {
    if (!(err instanceof ApiError)) throw new ApiError(0, 'network_error', 'The server could not be reached: is Inkwell running?');
    if (err.status === 401 && !path.startsWith('/v1/session')) onUnauthorized?.();
    throw err;
  }
}

/** A query string from the defined values, in order: `?a=1&b=x`. */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
