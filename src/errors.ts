// The one registry of coded errors, shared by the services (which throw them) and the HTTP layer (which
// answers with them, src/http/errors.ts). Codes are stable API; never reuse or rename one. Each code's
// status is the HTTP status it is answered with; services choose the code, never the status.
export const ERRORS = {
  invalid_json: { status: 400, message: 'Request body is not valid JSON' },
  invalid_request: { status: 400, message: 'Invalid request' },
  unknown_field: { status: 400, message: 'Unknown field in request body' },
  field_not_allowed: { status: 400, message: 'A field in the request body is not allowed with this key' },
  model_not_configured: { status: 400, message: 'The model provider has no credentials configured' },
  unauthorized: { status: 401, message: 'Unauthorized' },
  forbidden: { status: 403, message: 'This key cannot use this endpoint' },
  csrf_token_invalid: { status: 403, message: "A change made with the session cookie needs the session's x-csrf-token header" },
  repository_not_allowed: { status: 403, message: "The repository is neither the project's repository nor on its allow-list" },
  project_not_found: { status: 404, message: 'Project not found' },
  job_not_found: { status: 404, message: 'Job not found' },
  key_not_found: { status: 404, message: 'Key not found' },
  not_found: { status: 404, message: 'Not found' },
  method_not_allowed: { status: 405, message: 'Method not allowed' },
  request_timeout: { status: 408, message: 'Request timeout' },
  job_archived: { status: 409, message: 'Job is archived' },
  conflict: { status: 409, message: 'Conflict' },
  payload_too_large: { status: 413, message: 'Request body is too large' },
  uri_too_long: { status: 414, message: 'A path parameter is too long' },
  unsupported_media_type: { status: 415, message: 'Content-Type must be application/json' },
  idempotency_mismatch: { status: 422, message: 'Idempotency-Key was already used with a different request body' },
  rate_limited: { status: 429, message: 'Rate limit exceeded' },
  headers_too_large: { status: 431, message: 'Request headers are too large' },
  internal_error: { status: 500, message: 'Internal error' },
  not_ready: { status: 503, message: 'Service not ready' },
  code_host_unavailable: { status: 503, message: 'The code host could not be reached; deliver the event again later' },
  database_unavailable: { status: 503, message: 'The database is unavailable; retry later' },
  storage_full: { status: 507, message: 'The storage is full; retry later' },
  shutting_down: { status: 503, message: 'Service is shutting down' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorDetail {
  message: string;
  path?: string;
}

/** An error with a registered code; its message is safe to show a client. */
export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message ?? ERRORS[code].message);
    this.name = 'AppError';
    this.status = ERRORS[code].status;
  }
}
