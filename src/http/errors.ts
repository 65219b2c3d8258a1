// Coded errors as replies: the body every error response has. The registry of codes, their statuses and
// AppError live in src/errors.ts, shared with the services.
import { ERRORS, type ErrorCode, type ErrorDetail } from '../errors.ts';

export interface ErrorBody {
  error: string;
  code: string;
  details?: ErrorDetail[];
  requestId?: string;
}

export function errorBody(code: ErrorCode, message?: string, details?: ErrorDetail[]): ErrorBody {
  const body: ErrorBody = { error: message ?? ERRORS[code].message, code };
  if (details && details.length > 0) body.details = details;
  return body;
}
