// Two Ajv instances: request bodies are validated strictly (no type coercion, unknown fields refused),
// query strings and path parameters are coerced from strings. Ajv errors become coded 400s.
import AjvModule, { type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaValidationError } from 'fastify';
import { AppError, type ErrorDetail } from '../errors.ts';
import { textProblem } from '../lib/text.ts';

const Ajv = AjvModule.default ?? AjvModule;
const addFormats = addFormatsModule.default ?? addFormatsModule;

function makeAjv(coerce: boolean) {
  const ajv = new Ajv({ allErrors: false, coerceTypes: coerce, removeAdditional: false, useDefaults: true, strict: false });
  addFormats(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const paramAjv = makeAjv(true);

type Schema = Record<string, unknown>;

/** A string problem found by a TextCheck: where (a JSON pointer, as Ajv reports) and what. */
interface TextError {
  instancePath: string;
  message: string;
}

/** Checks the strings a schema declares inside a validated value; null when none is wrong. */
type TextCheck = (value: unknown, pointer: string) => TextError | null;

const pointerPart = (key: string) => `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/**
 * Builds the check for every value a schema types as a string (properties, array items, additional or
 * pattern properties, union members): each must be text a database can store (src/lib/text.ts). Parts
 * typed as anything (`{}`, e.g. ingest events, validated one by one later) are not looked into. Returns
 * null when the schema declares no string at all, so such routes pay nothing.
 */
function textCheckOf(schema: unknown, depth = 0): TextCheck | null {
  if (depth > 32 || schema === null || typeof schema !== 'object') return null;
  const s = schema as Schema;
  const checks: TextCheck[] = [];
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('string')) {
    checks.push((value, pointer) => {
      if (typeof value !== 'string') return null;
      const problem = textProblem(value);
      return problem ? { instancePath: pointer, message: problem } : null;
    });
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const variants = s[key];
    if (Array.isArray(variants)) for (const v of variants) pushIf(checks, textCheckOf(v, depth + 1));
  }
  const props = s.properties && typeof s.properties === 'object' ? (s.properties as Record<string, unknown>) : {};
  const propChecks = Object.entries(props)
    .map(([name, sub]) => [name, textCheckOf(sub, depth + 1)] as const)
    .filter((e): e is readonly [string, TextCheck] => e[1] !== null);
  const extraSchemas = [s.additionalProperties, ...Object.values((s.patternProperties as Record<string, unknown> | undefined) ?? {})];
  const extraChecks = extraSchemas.map((x) => textCheckOf(x, depth + 1)).filter((c): c is TextCheck => c !== null);
  if (propChecks.length > 0 || extraChecks.length > 0) {
    checks.push((value, pointer) => {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
      const obj = value as Record<string, unknown>;
      for (const [name, check] of propChecks) {
        if (obj[name] === undefined) continue;
        const e = check(obj[name], pointer + pointerPart(name));
        if (e) return e;
      }
      if (extraChecks.length > 0) {
        for (const name of Object.keys(obj)) {
          if (name in props) continue;
          for (const check of extraChecks) {
            const e = check(obj[name], pointer + pointerPart(name));
            if (e) return e;
          }
        }
      }
      return null;
    });
  }
  const itemCheck = textCheckOf(s.items, depth + 1);
  if (itemCheck) {
    checks.push((value, pointer) => {
      if (!Array.isArray(value)) return null;
      for (let i = 0; i < value.length; i++) {
        const e = itemCheck(value[i], `${pointer}/${i}`);
        if (e) return e;
      }
      return null;
    });
  }
  if (checks.length === 0) return null;
  if (checks.length === 1) return checks[0] as TextCheck;
  return (value, pointer) => {
    for (const check of checks) {
      const e = check(value, pointer);
      if (e) return e;
    }
    return null;
  };
}

function pushIf<T>(list: T[], item: T | null): void {
  if (item !== null) list.push(item);
}

/** An Ajv-compiled validator, as Fastify calls it (it passes the parent when `schemaEnv` is set). */
type Validator = ((data: unknown, dataCtx?: unknown) => boolean) & { errors?: FastifySchemaValidationError[] | null; schemaEnv?: unknown };

/**
 * Ajv's validator for the schema, then the text check: every string the schema declares must be
 * well-formed Unicode without NUL (a lone surrogate or NUL would reach a hash or the database, and
 * PostgreSQL refuses NUL), else a 400 naming the field, like any other validation error.
 */
export function validatorCompiler({ schema, httpPart }: { schema: object; httpPart?: string }) {
  const validate = (httpPart === 'body' ? bodyAjv : paramAjv).compile(schema) as unknown as Validator;
  const check = textCheckOf(schema);
  if (!check) return validate;
  const wrapped: Validator = (data, dataCtx) => {
    if (!validate(data, dataCtx)) {
      wrapped.errors = validate.errors;
      return false;
    }
    const e = check(data, '');
    if (!e) return true;
    wrapped.errors = [{ keyword: 'text', instancePath: e.instancePath, schemaPath: '#', params: {}, message: e.message }];
    return false;
  };
  wrapped.schemaEnv = validate.schemaEnv;
  return wrapped;
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
