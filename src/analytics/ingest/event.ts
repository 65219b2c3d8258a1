// The shape of one ingest event (SPEC 4.1) and its per-event validation. Pure: no I/O.
//
// Used by POST /v1/analytics/{projectId}/events (each element of `events`), POST /v1/collect and the JSON-lines
// import. Validate each event on its own with validateIngestEvent so one bad event is a per-event rejection,
// not a 400 for the batch.
import { type Static, Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { MAX_PATH_LENGTH, normalizePath } from '../classify/normalize.ts';
import { parseDateOrDateTime } from '../dates.ts';

/** An event as a log line or request gives it, before validation (logparse.ts's parsers return it). */
export interface RawEvent {
  path?: string;
  url?: string;
  timestamp?: string;
  userAgent?: string;
  ip?: string;
  visitorId?: string;
  accept?: string;
  status?: number;
  method?: string;
  referrer?: string;
}

/** ISO 8601 date or date-time (the forms dates.ts parses; a date-time without offset is UTC). */
export const ISO_TIMESTAMP_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(?:[Tt]\\d{2}:\\d{2}(?::\\d{2}(?:\\.\\d{1,9})?)?(?:[Zz]|[+-]\\d{2}(?::?\\d{2})?)?)?$';

export const EVENT_LIMITS = {
  /** Raw path or URL (query strings included); the normalised path must still fit MAX_PATH_LENGTH. */
  path: 8192,
  userAgent: 2048,
  ip: 100,
  visitorId: 128,
  accept: 1024,
  method: 16,
  referrer: 4096,
  timestamp: 40,
} as const;

export const IngestEventSchema = Type.Object(
  {
    path: Type.Optional(Type.String({ minLength: 1, maxLength: EVENT_LIMITS.path, description: 'Requested path (query and fragment are dropped)' })),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: EVENT_LIMITS.path, description: 'Requested absolute URL (alternative to path)' })),
    timestamp: Type.Optional(
      Type.String({ maxLength: EVENT_LIMITS.timestamp, pattern: ISO_TIMESTAMP_PATTERN, description: 'ISO 8601 time of the request; default now' }),
    ),
    userAgent: Type.Optional(Type.String({ maxLength: EVENT_LIMITS.userAgent, description: 'User-Agent header ("" = the request had none)' })),
    ip: Type.Optional(Type.String({ maxLength: EVENT_LIMITS.ip, description: 'Client IP; hashed, never stored' })),
    visitorId: Type.Optional(Type.String({ minLength: 1, maxLength: EVENT_LIMITS.visitorId, description: 'First-party visitor id' })),
    accept: Type.Optional(Type.String({ maxLength: EVENT_LIMITS.accept, description: 'Accept header of the request' })),
    status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599, description: 'HTTP response status' })),
    method: Type.Optional(Type.String({ minLength: 1, maxLength: EVENT_LIMITS.method, pattern: '^[A-Za-z]+$', description: 'HTTP method' })),
    referrer: Type.Optional(Type.String({ maxLength: EVENT_LIMITS.referrer, description: 'Referer header' })),
  },
  { additionalProperties: false, anyOf: [{ required: ['path'] }, { required: ['url'] }] },
);

export type IngestEvent = Static<typeof IngestEventSchema>;

const compiled = Compile(IngestEventSchema);

export type EventValidation = { ok: true; event: IngestEvent; path: string; timestampMs: number } | { ok: false; error: string; field: string };

function describe(field: string): string {
  switch (field) {
    case 'status':
      return 'must be an integer from 100 to 599';
    case 'timestamp':
      return 'must be an ISO 8601 date-time such as 2025-01-31T12:00:00Z';
    case 'method':
      return `must be an HTTP method (letters only, at most ${EVENT_LIMITS.method})`;
    case 'visitorId':
      return `must be a string of 1–${EVENT_LIMITS.visitorId} characters`;
    case 'path':
    case 'url':
      return `must be a string of 1–${EVENT_LIMITS.path} characters`;
    default: {
      const max = EVENT_LIMITS[field as keyof typeof EVENT_LIMITS];
      return max === undefined ? 'is invalid' : `must be a string of at most ${max} characters`;
    }
  }
}

/**
 * Validates one event: the schema, then the meaning (a real calendar timestamp, a path that normalises).
 * Returns the normalised path and the timestamp (nowMs when absent). Error messages name the field.
 * `normalize` must behave as normalizePath (ingest passes a memoised one).
 */
export function validateIngestEvent(value: unknown, nowMs: number, normalize: (pathOrUrl: string) => string | null = normalizePath): EventValidation {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, field: '', error: 'event must be an object' };
  if (!compiled.Check(value)) {
    const errors = [...compiled.Errors(value)];
    const unknown = Object.keys(value).find((k) => !(k in IngestEventSchema.properties));
    if (unknown !== undefined) return { ok: false, field: unknown, error: `unknown field ${JSON.stringify(unknown.slice(0, 64))}` };
    for (const e of errors) {
      const field = e.instancePath.replace(/^\//, '').split('/')[0];
      if (field) return { ok: false, field, error: `${field} ${describe(field)}` };
    }
    return { ok: false, field: 'path', error: 'path or url is required' };
  }
  const event = value as IngestEvent;
  let timestampMs = nowMs;
  if (event.timestamp !== undefined) {
    const ms = parseDateOrDateTime(event.timestamp);
    if (ms === null) return { ok: false, field: 'timestamp', error: `timestamp ${describe('timestamp')}` };
    timestampMs = ms;
  }
  const field = event.path !== undefined ? 'path' : 'url';
  const path = normalize((event.path ?? event.url)!);
  if (path === null) return { ok: false, field, error: `${field} is not a page path (empty, or longer than ${MAX_PATH_LENGTH} characters once normalised)` };
  return { ok: true, event, path, timestampMs };
}
