// Two Ajv instances: request bodies are validated strictly (no type coercion, unknown fields refused),
// query strings and path parameters are coerced from strings. Ajv errors become coded 400s.
import AjvModule, { type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaValidationError } from 'fastify';
import { AppError, type ErrorDetail } from './errors.ts';

const Ajv = AjvModule.default ?? AjvModule;
const addFormats = addFormatsModule.default ?? addFormatsModule;

function makeAjv(coerce: boolean) {
  const ajv = new Ajv({ allErrors: false, coerceTypes: coerce, removeAdditional: false, useDefaults: true, strict: false });
  addFormats(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

export function validatorCompiler({ schema, httpPart }: { schema: object; httpPart?: string }) {
  return (httpPart === 'body' ? bodyAjv : paramAjv).compile(schema);
}

type AjvError = ErrorObject | FastifySchemaValidationError;

function fieldPath(context: string, e: AjvError): string {
  const base = (e.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'required') return base ? `${base}.${params.missingProperty}` : String(params.missingProperty);
  if (e.keyword === 'additionalProperties') return base ? `${base}.${params.additionalProperty}` : String(params.additionalProperty);
  return base || context;
}

/** Turns a Fastify validation failure into `unknown_field` or `invalid_request` with details naming the field. */
export function validationToAppError(context: string, errors: AjvError[]): AppError {
  const where = context === 'querystring' ? 'query parameter' : context === 'params' ? 'path parameter' : context === 'headers' ? 'header' : 'field';
  const Where = where[0]?.toUpperCase() + where.slice(1);
  const details: ErrorDetail[] = errors.map((e) => {
    const path = fieldPath(context, e);
    const params = e.params as Record<string, unknown>;
    let message: string;
    switch (e.keyword) {
      case 'additionalProperties':
        message = `Unknown ${where} "${path}"`;
        break;
      case 'required':
        message = `Missing required ${where} "${path}"`;
        break;
      case 'enum':
        message = `${Where} "${path}" must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
        break;
      default:
        message =
          path === 'body' && (e.instancePath ?? '') === '' ? `Request body ${e.message ?? 'is invalid'}` : `${Where} "${path}" ${e.message ?? 'is invalid'}`;
    }
    return { message, path };
  });
  const unknown = errors.some((e) => e.keyword === 'additionalProperties');
  const first = details[0]?.message ?? 'Invalid request';
  return new AppError(unknown ? 'unknown_field' : 'invalid_request', first, details);
}
