// Schemas documented more precisely than the route validates them. An ingest batch validates each event
// on its own in the handler (one bad event is a `rejected` entry, not a 400 for the batch), so the route's
// body schema accepts any item; the OpenAPI document still shows the item's real schema, the same object
// the handler validates with. The route marks the item with `documentedAs(name)` (a standard `$comment`,
// accepted by every validator); the swagger transform puts the registered schema in its place.
import { type TSchema, Type } from 'typebox';
import { ERRORS, type ErrorCode } from '../errors.ts';

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

/** Each error code's meaning where the registry's message says less than a client needs. */
const CODE_MEANINGS: Partial<Record<ErrorCode, string>> = {
  invalid_request: 'a parameter, header or body field breaks its rule (named in `details[].path`)',
  unknown_field: 'a body field or query parameter the operation does not take (named in `details[].path`)',
  unauthorized: 'missing, malformed, unknown or revoked key',
  forbidden: 'an ingest key (`ink_pub_…`, `ink_ing_…`) on an endpoint that needs an admin key',
  csrf_token_invalid: 'made with the dashboard session cookie but without its `x-csrf-token` header (or with another one)',
  project_not_found: 'no such project, or the key belongs to another one',
  not_found: 'the path holds a NUL byte',
  uri_too_long: 'a path parameter is longer than 100 characters',
  request_timeout: 'the request did not fully arrive in time; the connection is closed',
  payload_too_large: 'the body is over the limit',
  unsupported_media_type: 'the body is not JSON',
  headers_too_large: 'the request headers are over the limit; the connection is closed',
  internal_error: 'a fault of the server (the body is only `error`, `code` and `requestId`)',
  database_unavailable: 'the database cannot be reached (with Retry-After)',
  storage_full: 'the disk is full (with Retry-After)',
  shutting_down: 'the server is closing (with Retry-After)',
  not_ready: 'the database is unreachable, its migrations are not applied, or requests failed recently for lack of database or disk',
};

const ERROR_FIELDS = {
  error: Type.String({ description: 'For a person' }),
  code: Type.String({ description: 'Stable snake_case code' }),
  details: Type.Optional(Type.Array(Type.Object({ message: Type.String(), path: Type.Optional(Type.String()) }))),
  requestId: Type.Optional(Type.String()),
};

/** The error body of one status of one operation (5xx bodies carry only `error`, `code` and `requestId`): `code` is one of `codes`, each described. */
function errorSchema(codes: readonly ErrorCode[]) {
  const unique = [...new Set(codes)];
  return Type.Object(
    { ...ERROR_FIELDS, code: Type.Unsafe<ErrorCode>({ type: 'string', enum: unique, description: 'Stable snake_case code' }) },
    { description: unique.map((c) => `\`${c}\`: ${CODE_MEANINGS[c] ?? ERRORS[c].message}`).join('; ') },
  );
}

/**
 * The error answers of an operation, one per status, each listing the codes it may carry (the statuses come
 * from the registry). The answers every operation shares (the request layer's, the infrastructure's) are
 * added to the document by `withCommonResponses`; list here the operation's own.
 */
export function errorResponses(...codes: ErrorCode[]): Record<number, ReturnType<typeof errorSchema>> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) byStatus.set(ERRORS[c].status, [...(byStatus.get(ERRORS[c].status) ?? []), c]);
  return Object.fromEntries([...byStatus].map(([status, list]) => [status, errorSchema(list)]));
}

interface OperationTraits {
  method: string;
  url: string;
  secured: boolean;
  hasPathParams: boolean;
}

const isApi = (op: OperationTraits) => /^\/v[12]\//.test(op.url);

/** Codes any operation may answer besides its own (the request layer's and the infrastructure's), by trait. */
const COMMON_CODES: { code: ErrorCode; when: (op: OperationTraits) => boolean }[] = [
  { code: 'invalid_request', when: isApi },
  { code: 'unknown_field', when: isApi },
  { code: 'invalid_json', when: (op) => isApi(op) && op.method === 'POST' },
  { code: 'unauthorized', when: (op) => op.secured },
  { code: 'csrf_token_invalid', when: (op) => op.secured && op.method !== 'GET' },
  { code: 'not_found', when: (op) => op.hasPathParams },
  { code: 'request_timeout', when: (op) => op.method === 'POST' },
  { code: 'payload_too_large', when: (op) => op.method === 'POST' },
  { code: 'uri_too_long', when: (op) => op.hasPathParams },
  { code: 'unsupported_media_type', when: (op) => op.method === 'POST' },
  { code: 'headers_too_large', when: () => true },
  { code: 'internal_error', when: () => true },
  { code: 'database_unavailable', when: isApi },
  { code: 'shutting_down', when: () => true },
  { code: 'storage_full', when: isApi },
];

const REQUEST_ID = {
  'x-request-id': { type: 'string', required: true, description: 'The id of this request (the one sent in X-Request-ID when well-formed)' },
};
const RATE_LIMIT_HEADERS = (required: boolean) => ({
  'ratelimit-limit': { type: 'integer', required, description: 'Requests (or events, for ingest) allowed per window for this project and rate family' },
  'ratelimit-remaining': { type: 'integer', required, description: 'What is left of it in the current window' },
  'ratelimit-reset': { type: 'integer', required, description: 'Seconds until the window resets' },
});
const RETRY_AFTER = (required: boolean) => ({ 'retry-after': { type: 'integer', required, description: 'Seconds to wait before retrying' } });
const REPLAYED = {
  'idempotent-replayed': {
    type: 'string',
    enum: ['true'],
    description: 'Present when this is the stored answer to an earlier request with the same Idempotency-Key',
  },
};
const WWW_AUTHENTICATE = { 'www-authenticate': { type: 'string', enum: ['Bearer'], required: true, description: 'The key goes in `Authorization: Bearer …`' } };

/** The response headers an answer carries, by operation traits, status and the codes it may carry. */
function headersFor(status: string, codes: readonly string[], op: { rateLimited: boolean; idempotent: boolean; secured: boolean }): Record<string, unknown> {
  const h: Record<string, unknown> = { ...REQUEST_ID };
  // Not on an idempotent replay (not charged), so not required on a success.
  if (op.rateLimited && status.startsWith('2')) Object.assign(h, RATE_LIMIT_HEADERS(false));
  if (status === '429') Object.assign(h, RATE_LIMIT_HEADERS(true), RETRY_AFTER(true));
  // Every 503 and 507 code but readiness's own `not_ready` says when to retry.
  if (status === '503' || status === '507') Object.assign(h, RETRY_AFTER(!codes.includes('not_ready')));
  if (op.idempotent && status.startsWith('2')) Object.assign(h, REPLAYED);
  if (status === '401' && op.secured) Object.assign(h, WWW_AUTHENTICATE);
  return h;
}

/** An error body as the server sends it for `code` (5xx bodies: the fixed message, the code and the request id). */
function errorExample(code: ErrorCode): Record<string, string> {
  if (ERRORS[code].status >= 500) return { error: 'Internal error', code, requestId: '7c1e0b8a-3f52-4d39-9a41-2b6f0e8d5c17' };
  return { error: ERRORS[code].message, code };
}

/** The codes an error response schema lists (its `code` enum), or null for another schema. */
function codesOf(response: unknown): string[] | null {
  const e = (response as { properties?: { code?: { enum?: unknown } } } | null)?.properties?.code?.enum;
  return Array.isArray(e) ? (e as string[]) : null;
}

/**
 * A route schema with, for the document: the common error answers merged into its responses (a status it
 * already lists gains the common codes), and the headers of each answer. Pure.
 */
export function withCommonResponses<T extends object>(schema: T, method: string, url: string): T {
  if (method === 'HEAD' || method === 'OPTIONS') return schema;
  const s = schema as { response?: Record<string, unknown>; security?: unknown; params?: { properties?: object }; hide?: boolean };
  if (s.hide) return schema;
  const response: Record<string, unknown> = { ...(s.response ?? {}) };
  const op: OperationTraits = {
    method,
    url,
    secured: Array.isArray(s.security) && s.security.length > 0,
    hasPathParams: Object.keys(s.params?.properties ?? {}).length > 0,
  };
  const common = new Map<string, ErrorCode[]>();
  for (const { code, when } of COMMON_CODES) {
    if (!when(op)) continue;
    const status = String(ERRORS[code].status);
    common.set(status, [...(common.get(status) ?? []), code]);
  }
  for (const [status, codes] of common) {
    const existing = response[status];
    if (existing === undefined) response[status] = errorSchema(codes);
    else {
      const listed = codesOf(existing);
      const headers = (existing as { headers?: object }).headers;
      if (listed) response[status] = { ...errorSchema([...(listed as ErrorCode[]), ...codes]), ...(headers ? { headers } : {}) };
    }
  }
  const traits = {
    rateLimited: '429' in response,
    idempotent: Object.keys((s as { headers?: { properties?: object } }).headers?.properties ?? {}).includes('idempotency-key'),
    secured: op.secured,
  };
  const produces = (s as { produces?: string[] }).produces ?? [];
  for (const [status, r] of Object.entries(response)) {
    if (typeof r !== 'object' || r === null) continue;
    const { headers: own, ...body } = r as { headers?: object; description?: string };
    const headers = { ...(own ?? {}), ...headersFor(status, codesOf(body) ?? [], traits) };
    // Errors are JSON whatever the operation produces; a live stream is a stream of frames, not that JSON.
    if (Number(status) >= 400) {
      const codes = codesOf(body);
      const example = codes?.[0] ? { example: errorExample(codes[0] as ErrorCode) } : {};
      response[status] = { description: body.description, headers, content: { 'application/json': { schema: body, ...example } } };
    } else if (status.startsWith('2') && produces.some((type) => type in TEXT_BODIES)) {
      // The text forms first (each with its own schema), then the JSON one with the route's.
      const content: Record<string, unknown> = {};
      for (const type of produces) if (TEXT_BODIES[type]) content[type] = { schema: TEXT_BODIES[type] };
      for (const type of produces) if (!TEXT_BODIES[type]) content[type] = { schema: body };
      response[status] = { description: body.description ?? 'The events', headers, content };
    } else response[status] = { ...body, headers };
  }
  return { ...schema, response };
}

/** What an operation answers in a text media type it `produces` besides JSON. */
const TEXT_BODIES: Record<string, object> = {
  'text/event-stream': {
    type: 'string',
    description:
      'Server-Sent Events: `retry: 1000`, then one frame per event, `id: <seq>`, `event: <type>`, `data: <the event as JSON, as in the JSON answer>`; `: heartbeat` comments while idle.',
  },
  'text/x-diff': {
    type: 'string',
    description: "The unified diff alone (the JSON answer's `diff`), for `git apply`; empty while nothing was pushed.",
    examples: [
      'diff --git a/docs/intro.mdx b/docs/intro.mdx\nindex 3b18e51..8c7e5a6 100644\n--- a/docs/intro.mdx\n+++ b/docs/intro.mdx\n@@ -1,3 +1,3 @@\n # Intro\n \n-Hello from Acme.\n+Welcome to Acme.\n',
    ],
  },
};

/**
 * The generated document with each response header's `required` where OpenAPI has it: on the header, not in
 * its schema (where the route schemas above put it, the only place the swagger plugin carries it through).
 */
export function withHeaderRequirements<T>(doc: T): T {
  const paths = (doc as { paths?: Record<string, Record<string, { responses?: Record<string, { headers?: Record<string, Record<string, any>> }> }>> }).paths;
  for (const item of Object.values(paths ?? {})) {
    for (const op of Object.values(item)) {
      for (const response of Object.values(op?.responses ?? {})) {
        for (const header of Object.values(response?.headers ?? {})) {
          if (header.schema?.required !== true) continue;
          delete header.schema.required;
          header.required = true;
        }
      }
    }
  }
  return doc;
}
