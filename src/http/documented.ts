// Schemas documented more precisely than the route validates them. An ingest batch validates each event
// on its own in the handler (one bad event is a `rejected` entry, not a 400 for the batch), so the route's
// body schema accepts any item; the OpenAPI document still shows the item's real schema, the same object
// the handler validates with. The route marks the item with `documentedAs(name)` (a standard `$comment`,
// accepted by every validator); the swagger transform puts the registered schema in its place.
import { type TSchema, Type } from 'typebox';

const documented = new Map<string, TSchema>();
const PREFIX = 'documented-as:';

/** A schema that validates anything, shown in the OpenAPI document as `schema` (registered under `name`). */
export function documentedAs(name: string, schema: TSchema) {
  documented.set(name, schema);
  return Type.Unknown({ $comment: `${PREFIX}${name}` });
}

/** `schema` (a route schema) with every `documentedAs` placeholder replaced by its registered schema. Pure. */
export function withDocumentedSchemas<T>(schema: T): T {
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (typeof node !== 'object' || node === null) return node;
    const comment = (node as { $comment?: unknown }).$comment;
    if (typeof comment === 'string' && comment.startsWith(PREFIX)) {
      const found = documented.get(comment.slice(PREFIX.length));
      if (found) return structuredClone(found);
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, visit(v)]));
  };
  return visit(schema) as T;
}

/** The error body every 4xx and 5xx has (5xx bodies carry only `error`, `code` and `requestId`). */
export const ErrorResponseSchema = Type.Object(
  {
    error: Type.String({ description: 'For a person' }),
    code: Type.String({ description: 'Stable snake_case code' }),
    details: Type.Optional(Type.Array(Type.Object({ message: Type.String(), path: Type.Optional(Type.String()) }))),
    requestId: Type.Optional(Type.String()),
  },
  { description: 'Error' },
);

/** Answers any API operation may give besides its own (the request layer's and the infrastructure's). */
const COMMON_RESPONSES: Record<string, { when: (op: { method: string; url: string; secured: boolean }) => boolean; description: string }> = {
  400: { when: (op) => /^\/v[12]\//.test(op.url), description: 'invalid_request / unknown_field (including an unknown query parameter), naming the field' },
  401: { when: (op) => op.secured, description: 'unauthorized: missing, malformed, unknown or revoked key (with WWW-Authenticate: Bearer)' },
  408: { when: (op) => op.method === 'POST', description: 'request_timeout: the request did not fully arrive in time; the connection is closed' },
  413: { when: (op) => op.method === 'POST', description: 'payload_too_large: the body is over the limit' },
  415: { when: (op) => op.method === 'POST', description: 'unsupported_media_type: the body is not JSON' },
  500: { when: (op) => /^\/v[12]\//.test(op.url), description: 'internal_error: a fault of the server (only error, code and requestId)' },
  503: { when: (op) => /^\/v[12]\//.test(op.url), description: 'database_unavailable (with Retry-After) or shutting_down' },
  507: { when: (op) => /^\/v[12]\//.test(op.url), description: 'storage_full (with Retry-After)' },
};

const RATE_LIMIT_HEADERS = {
  'ratelimit-limit': { type: 'integer', description: 'Requests (or events, for ingest) allowed per window for this project and rate family' },
  'ratelimit-remaining': { type: 'integer', description: 'What is left of it in the current window' },
  'ratelimit-reset': { type: 'integer', description: 'Seconds until the window resets' },
};
const RETRY_AFTER = { 'retry-after': { type: 'integer', description: 'Seconds to wait before retrying' } };
const REPLAYED = {
  'idempotent-replayed': {
    type: 'string',
    enum: ['true'],
    description: 'Present when this is the stored answer to an earlier request with the same Idempotency-Key',
  },
};

/** The response headers an answer carries, by operation traits and status. */
function headersFor(status: string, op: { rateLimited: boolean; idempotent: boolean }): Record<string, unknown> | null {
  const h: Record<string, unknown> = {};
  if (op.rateLimited && (status.startsWith('2') || status === '429')) Object.assign(h, RATE_LIMIT_HEADERS);
  if (status === '429' || status === '503' || status === '507') Object.assign(h, RETRY_AFTER);
  if (op.idempotent && status.startsWith('2')) Object.assign(h, REPLAYED);
  return Object.keys(h).length > 0 ? h : null;
}

/** A route schema with the common error answers added to its responses (for the document only). Pure. */
export function withCommonResponses<T extends object>(schema: T, method: string, url: string): T {
  if (method === 'HEAD' || method === 'OPTIONS') return schema;
  const s = schema as { response?: Record<string, unknown>; security?: unknown };
  const response: Record<string, unknown> = { ...(s.response ?? {}) };
  const op = { method, url, secured: Array.isArray(s.security) && s.security.length > 0 };
  let added = false;
  for (const [status, common] of Object.entries(COMMON_RESPONSES)) {
    if (!(status in response) && common.when(op)) {
      response[status] = { ...ErrorResponseSchema, description: common.description };
      added = true;
    }
  }
  const traits = {
    rateLimited: '429' in response,
    idempotent: Object.keys((s as { headers?: { properties?: object } }).headers?.properties ?? {}).includes('idempotency-key'),
  };
  for (const [status, r] of Object.entries(response)) {
    const headers = headersFor(status, traits);
    if (headers && typeof r === 'object' && r !== null) {
      response[status] = { ...r, headers: { ...((r as { headers?: object }).headers ?? {}), ...headers } };
      added = true;
    }
  }
  return added ? { ...schema, response } : schema;
}
