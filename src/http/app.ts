// The app factory: builds a Fastify instance (not listening) from its dependencies.
import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
  type RawServerDefault,
} from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';
import { type Services, wireServices } from '../context.ts';
import { infraFault } from '../db/errors.ts';
import { AppError, ERRORS, type ErrorCode } from '../errors.ts';
import { scrubSecrets } from '../lib/logger.ts';
import { RouteMethods, unknownQueryParams } from './allowed-methods.ts';
import { JSON_CONTENT_TYPE } from './content-type.ts';
import type { AppContext } from './context.ts';
import { withCommonResponses, withDocumentedSchemas, withHeaderRequirements } from './documented.ts';
import { type ErrorBody, errorBody } from './errors.ts';
import { type FaultCode, noteFault } from './faults.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { agentRoutes } from './routes/agent.ts';
import { analyticsRoutes } from './routes/analytics.ts';
import { codeHostHookRoutes } from './routes/code-host-hooks.ts';
import { dashboardRoutes } from './routes/dashboard.ts';
import { opsRoutes } from './routes/ops.ts';
import { projectRoutes } from './routes/projects.ts';
import { sessionRoutes } from './routes/session.ts';
import { webhookRoutes } from './routes/webhooks.ts';
import { validationToAppError, validatorCompiler } from './validation.ts';

/** The app type every route module receives: TypeBox schemas give typed requests and replies. */
export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

/** A registered route, as listed by `routeTable(app)` (tests check the OpenAPI document against it). */
export interface RouteEntry {
  method: string;
  url: string;
  /** Hidden from the OpenAPI document (docs UI assets, CORS preflight). */
  hidden: boolean;
}

const ROUTES = new WeakMap<object, RouteEntry[]>();

/** Every route registered on an app built by buildApp. */
export function routeTable(app: App): RouteEntry[] {
  return ROUTES.get(app) ?? [];
}

/** True when the path part of a request URL carries a NUL byte, raw or percent-encoded. */
export function hasNulInPath(url: string): boolean {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  return path.includes('%00') || path.includes('\u0000');
}

const REQUEST_ID_RE = /^[\w.:-]{1,128}$/;

/**
 * Fastify's own 4xx error codes → our registry. Anything else Fastify raises with a 4xx status falls back
 * to the status-based mapping in `toAppError`.
 */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_BAD_URL: 'invalid_request',
  FST_ERR_INVALID_URL: 'invalid_request',
  FST_ERR_MAX_PARAM_LENGTH: 'uri_too_long',
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: 'unsupported_media_type',
  FST_ERR_ROUTE_MISSING_CONTENT: 'invalid_request',
  FST_ERR_NOT_FOUND: 'not_found',
};

/** Status-only fallback for 4xx errors raised by plugins (static files, swagger UI). */
const STATUS_CODES: Record<number, ErrorCode> = {
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  429: 'rate_limited',
};

/** A safe, messages-we-wrote-ourselves description of the client's mistake (null: a server fault). */
function toAppError(err: FastifyError | AppError, request: FastifyRequest): AppError | null {
  if (err instanceof AppError) return err;
  const fe = err as FastifyError;
  if (fe.validation) return validationToAppError(fe.validationContext ?? 'body', fe.validation);
  const code = typeof fe.code === 'string' ? FASTIFY_CODES[fe.code] : undefined;
  if (code === 'unsupported_media_type') {
    const ct = request.headers['content-type'];
    return new AppError(code, ct ? `Unsupported Content-Type ${JSON.stringify(ct.slice(0, 100))}: send application/json` : undefined);
  }
  if (code === 'invalid_json') return new AppError(code, 'Request body is empty or not valid JSON');
  if (code === 'invalid_request' && fe.code === 'FST_ERR_BAD_URL') return new AppError(code, 'The URL contains an invalid percent-encoding');
  if (code === 'payload_too_large')
    return new AppError(code, `Request body is larger than ${formatBytes(request.server.initialConfig.bodyLimit ?? 1024 * 1024)}`);
  if (code) return new AppError(code);
  const status = typeof fe.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) return new AppError(STATUS_CODES[status] ?? 'invalid_request');
  const fault = infraFault(err);
  if (fault) return new AppError(fault, undefined, undefined, { 'retry-after': String(RETRY_AFTER_S) });
  return null;
}

/** Retry-After of 503 `database_unavailable` and 507 `storage_full`. */
const RETRY_AFTER_S = 5;

/** 5xx bodies carry only the fixed message, the code and the request id (SPEC §1). */
function serverErrorBody(code: ErrorCode, requestId: string): ErrorBody {
  return { error: 'Internal error', code, requestId };
}

function sendError(err: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply, onFault?: (code: FaultCode) => void): void {
  const e = toAppError(err, request);
  let status: number;
  let body: ErrorBody;
  if (e && e.status < 500) {
    status = e.status;
    body = errorBody(e.code, e.message, e.details);
    if (e.headers) reply.headers(e.headers);
  } else {
    status = e ? e.status : 500;
    const code = e ? e.code : 'internal_error';
    if (status === 500) request.log.error({ err, url: scrubSecrets(request.url) }, 'unhandled error');
    else if (e?.headers) reply.headers(e.headers);
    if (e && (e.code === 'database_unavailable' || e.code === 'storage_full')) {
      onFault?.(e.code);
      logFault(request, e.code, err);
    }
    body = serverErrorBody(code, request.id);
  }
  reply.header('x-request-id', request.id).status(status).type('application/json; charset=utf-8').send(body);
}

const lastFaultLog = new Map<string, number>();

/** One line per fault kind every 10 s during an outage, naming the cause (not one per failed request). */
function logFault(request: FastifyRequest, code: string, err: unknown): void {
  const now = Date.now();
  if (now - (lastFaultLog.get(code) ?? 0) < 10_000) return;
  lastFaultLog.set(code, now);
  const cause = scrubSecrets(String((err as Error)?.message ?? err)).slice(0, 300);
  request.log.warn({ code, cause, errorCode: (err as { code?: unknown })?.code }, code === 'storage_full' ? 'storage is full' : 'database is unavailable');
}

/** Malformed HTTP (before Fastify has a request): answer in our error shape, then close. */
function clientErrorHandler(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, text, code]: [number, string, ErrorCode] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'headers_too_large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'request_timeout']
        : [400, 'Bad Request', 'invalid_request'];
  const body = JSON.stringify(errorBody(code, code === 'invalid_request' ? 'Malformed HTTP request' : undefined));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${crypto.randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * How often Node's http server looks for requests past their headers / request timeout: a tenth of the
 * shorter one, between 100 ms and 5 s (Node's default of 30 s would let a 1 s timeout fire after 30 s).
 */
export function connectionsCheckingInterval(headersTimeoutMs: number, requestTimeoutMs: number): number {
  const shortest = requestTimeoutMs > 0 ? Math.min(headersTimeoutMs, requestTimeoutMs) : headersTimeoutMs;
  return Math.min(5000, Math.max(100, Math.floor(shortest / 10)));
}

/** "1 MiB", "64 KiB", or a byte count: the body limit as messages and the OpenAPI document state it. */
export function formatBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

type LogMethod = (...args: unknown[]) => void;
const LOG_METHODS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * `request.log` without the per-request cost of pino's child(): the child (bindings serialised, redaction
 * set up) is made the first time the request logs, which most requests never do.
 */
class LazyRequestLogger {
  #parent: FastifyBaseLogger;
  #bindings: Bindings;
  #opts: ChildLoggerOptions;
  #child: FastifyBaseLogger | undefined;
  declare fatal: LogMethod;
  declare error: LogMethod;
  declare warn: LogMethod;
  declare info: LogMethod;
  declare debug: LogMethod;
  declare trace: LogMethod;
  declare silent: LogMethod;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#opts = opts;
  }

  get real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#opts);
    return this.#child;
  }

  get level(): string {
    return this.#child?.level ?? (typeof this.#opts.level === 'string' ? this.#opts.level : this.#parent.level);
  }

  set level(level: string) {
    this.real.level = level;
  }

  child(bindings: Bindings, opts?: ChildLoggerOptions): FastifyBaseLogger {
    return this.real.child(bindings, opts);
  }
}
for (const m of LOG_METHODS) {
  Object.defineProperty(LazyRequestLogger.prototype, m, {
    value(this: LazyRequestLogger, ...args: unknown[]) {
      (this.real[m] as LogMethod)(...args);
    },
  });
}

/** A JSON body parser that rejects prototype-poisoning keys, reports syntax errors as `invalid_json`, and accepts an empty body on routes that take none. */
function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new AppError('invalid_json', `Request body is not valid JSON: ${(err as Error).message}`);
  }
  if (text.includes('__proto__') || text.includes('constructor')) {
    JSON.parse(text, (key, v) => {
      if (key === '__proto__' || (key === 'constructor' && v !== null && typeof v === 'object' && 'prototype' in v)) {
        throw new AppError('invalid_request', `Object key "${key}" is not allowed in a request body`, [
          { message: `Object key "${key}" is not allowed`, path: key },
        ]);
      }
      return v;
    });
  }
  return value;
}

/** The Fastify instance with the server options: timeouts, limits, request ids, logging, trust in proxies. */
function createFastify(ctx: AppContext): App {
  const http = ctx.config.http;
  return Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    bodyLimit: ctx.config.bodyLimitBytes,
    // Slow or half-sent requests are answered 408 and closed (clientErrorHandler); idle kept-alive connections
    // are closed. Both timeouts count until the request has fully arrived: a long response (an SSE stream) is
    // not cut by them.
    requestTimeout: http.requestTimeoutMs,
    keepAliveTimeout: http.keepAliveTimeoutMs,
    http: {
      headersTimeout: http.headersTimeoutMs,
      requestTimeout: http.requestTimeoutMs,
      keepAliveTimeout: http.keepAliveTimeoutMs,
      maxHeaderSize: http.maxHeaderBytes,
      connectionsCheckingInterval: connectionsCheckingInterval(http.headersTimeoutMs, http.requestTimeoutMs),
    },
    // Request start/end lines are off: onResponse records metrics and logs at debug (5xx at warn).
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID_RE.test(incoming) ? incoming : crypto.randomUUID();
    },
    ajv: { customOptions: { removeAdditional: false } },
    // One static type for Fastify's overloads (boolean | hop count | address list are all accepted).
    trustProxy: ctx.config.trustProxy as boolean,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    clientErrorHandler,
    childLoggerFactory: (logger, bindings, opts) => new LazyRequestLogger(logger, bindings, opts) as unknown as FastifyBaseLogger,
    frameworkErrors: (err, request, reply) => sendError(err, request, reply),
  }).withTypeProvider<TypeBoxTypeProvider>();
}

/**
 * Records every route: its methods by path (a known path asked with another method is 405 with Allow, in
 * the not-found handler; returned), the route table for the tests, and on API endpoints a check that
 * refuses query parameters the schema does not name (before the handler, after auth).
 */
function trackRoutes(app: App): RouteMethods {
  const routeMethods = new RouteMethods();
  app.addHook('onRoute', (route) => {
    routeMethods.add(route.method, route.url);
    // API endpoints reject query parameters their schema does not name (before the handler, after auth).
    if (!/^\/v[12]\//.test(route.url)) return;
    const allowed = Object.keys((route.schema?.querystring as { properties?: object } | undefined)?.properties ?? {});
    const rejectUnknown = async (request: FastifyRequest) => {
      const err = unknownQueryParams(request.query, allowed);
      if (err) throw err;
    };
    const existing = route.preValidation;
    route.preValidation = existing ? [rejectUnknown, ...(Array.isArray(existing) ? existing : [existing])] : [rejectUnknown];
  });

  const routes: RouteEntry[] = [];
  ROUTES.set(app, routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      routes.push({ method, url: route.url, hidden: Boolean((route.schema as { hide?: boolean } | undefined)?.hide) });
    }
  });

  return routeMethods;
}

/**
 * Bodies are JSON only: anything else (text/plain, forms, no Content-Type) is 415. A route module that must
 * accept another type (a beacon endpoint) adds its own parser inside its own plugin scope.
 */
function addBodyParsers(app: App, ctx: AppContext): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSON_CONTENT_TYPE, { parseAs: 'string' }, (request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      // An unknown path is a 404 whatever its body.
      done(request.is404 ? null : (err as Error), undefined);
    }
  });
  app.addContentTypeParser('*', (request, payload, done) => {
    if (!request.is404) {
      const ct = request.headers['content-type'];
      done(
        new AppError(
          'unsupported_media_type',
          ct ? `Unsupported Content-Type ${JSON.stringify(ct.slice(0, 100))}: send application/json` : 'A request body needs Content-Type: application/json',
        ),
        undefined,
      );
      return;
    }
    // Discard the body of a request that will be answered 404 (bounded like any body).
    let size = 0;
    payload.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > ctx.config.bodyLimitBytes)
        payload.destroy(new AppError('payload_too_large', `Request body is larger than ${formatBytes(ctx.config.bodyLimitBytes)}`));
    });
    payload.on('end', () => done(null, undefined));
    payload.on('error', (err) => done(err, undefined));
  });
}

/**
 * The hooks every request passes. They are callback-style (no promise per hook) and do nothing more than
 * needed on the common path: the error-shape checks only run for status >= 400, the debug line only when
 * enabled.
 */
function addRequestHooks(app: App, ctx: AppContext, metrics: Metrics): void {
  // Set by preClose: requests that still arrive on kept-alive connections while we drain get a 503 in
  // our error shape (Fastify's own fast path answers in its shape, without x-request-id).
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (closing) {
      reply.header('connection', 'close');
      done(new AppError('shutting_down', undefined, undefined, { 'retry-after': '1' }));
      return;
    }
    // No resource has a NUL byte in its path, and PostgreSQL text cannot hold one: such a path is answered
    // like any other unknown path, before a route hook could hand the parameter to the database.
    if (hasNulInPath(request.url)) {
      done(new AppError('not_found', 'No resource at this path'));
      return;
    }
    done();
  });
  // The safety net for SPEC §1 across every route module and plugin: a 4xx body always has {error, code}
  // (a plugin's text/plain 400 becomes one), and a 5xx body is only {error: "Internal error", code, requestId}.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode < 400 || request.method === 'HEAD' || request.routeOptions.config.ownErrorPage) done(null, payload);
    else done(null, errorShapedPayload(request, reply, payload));
  });
  // One duration series per (method, route, status), looked up by a string key (src/http/metrics.ts).
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    metrics.httpDuration.series(request.method, route, String(status)).observe(reply.elapsedTime / 1000);
    if (status >= 500 || ctx.logger.isLevelEnabled('debug')) {
      const line = { method: request.method, url: scrubSecrets(request.url), route, statusCode: status, ms: Math.round(reply.elapsedTime) };
      if (status >= 500) request.log.warn(line, 'request failed');
      else {
        // Authorization and cookies are redacted by path; keys pasted into any other header are scrubbed.
        const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, typeof v === 'string' ? scrubSecrets(v) : v]));
        request.log.debug({ ...line, headers }, 'request');
      }
    }
    done();
  });
}

/** A 4xx or 5xx payload in our error shape (see the onSend hook). */
function errorShapedPayload(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  const status = reply.statusCode;
  if (payload !== null && payload !== undefined && typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
  const text = payload === null || payload === undefined ? '' : payload.toString();
  let parsed: Partial<ErrorBody> | null = null;
  if (/json/i.test(String(reply.getHeader('content-type') ?? ''))) {
    try {
      parsed = JSON.parse(text) as Partial<ErrorBody>;
    } catch {
      parsed = null;
    }
  }
  const known = typeof parsed?.code === 'string' && parsed.code in ERRORS ? (parsed.code as ErrorCode) : undefined;
  let body: ErrorBody;
  if (status >= 500) {
    if (parsed && parsed.error === 'Internal error' && known && parsed.requestId === request.id && Object.keys(parsed).length === 3) return payload;
    if (!known) request.log.error({ statusCode: status, url: scrubSecrets(request.url) }, 'a 5xx response was sent without our error shape');
    body = serverErrorBody(known ?? 'internal_error', request.id);
  } else {
    if (parsed && typeof parsed.error === 'string' && typeof parsed.code === 'string') return payload;
    const message = typeof parsed?.error === 'string' ? parsed.error : /^[\x20-\x7e]{1,200}$/.test(text) && !parsed ? text : undefined;
    body = errorBody(known ?? STATUS_CODES[status] ?? 'invalid_request', message === undefined ? undefined : scrubSecrets(message));
  }
  reply.type('application/json; charset=utf-8');
  reply.removeHeader('content-length');
  return JSON.stringify(body);
}
/** Errors thrown anywhere go through `sendError`; unknown paths are 404, known paths with another method 405. */
function addErrorHandlers(app: App, ctx: AppContext, routeMethods: RouteMethods): void {
  app.setErrorHandler((err: FastifyError | AppError, request, reply) => sendError(err, request, reply, (code) => noteFault(ctx, code)));

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = routeMethods.allowed(path);
    if (allowed.length > 0) {
      reply
        .header('x-request-id', request.id)
        .header('allow', allowed.join(', '))
        .status(405)
        .send(errorBody('method_not_allowed', `${request.method} is not allowed here; allowed: ${allowed.join(', ')}`));
      return;
    }
    reply
      .header('x-request-id', request.id)
      .status(404)
      .send(errorBody('not_found', `No route for ${request.method} ${scrubSecrets(request.url.split('?')[0] ?? '').slice(0, 200)}`));
  });
}

/** The OpenAPI document, generated from the route schemas, at /docs/json, and its UI at /docs. */
async function registerOpenApi(app: App, ctx: AppContext): Promise<void> {
  const http = ctx.config.http;
  await app.register(swagger, {
    // A route registered as '/' under a plugin prefix is served with and without the trailing slash;
    // the document names the canonical form without it.
    // Item schemas validated by the handler (see documented.ts) are shown as what they are.
    // The common error answers (request layer, infrastructure) are listed on every operation that can give them.
    transform: ({ schema, url, route }) => ({
      schema: withCommonResponses(withDocumentedSchemas(schema), String(route.method), url),
      url: url.length > 1 ? url.replace(/\/+$/, '') : url,
    }),
    transformObject: (documentObject) =>
      withHeaderRequirements('openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject),
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Inkwell',
        version: '0.1.0',
        description:
          'Agent jobs (prompt → pull request) and exact visitor analytics. Wire-compatible with the hosted agent and analytics interface. ' +
          'Errors are `{error, code, details?}`; 5xx bodies are only `{error: "Internal error", code, requestId}`. Every response carries `x-request-id`. ' +
          'A known path asked with a method it does not have is 405 `method_not_allowed` with `Allow`; a query parameter an endpoint does not name is 400 `unknown_field`. ' +
          'JSON bodies with `__proto__` or `constructor.prototype` keys are refused (400). Text fields must be well-formed Unicode without NUL. ' +
          'An unreachable database is 503 `database_unavailable` and a full disk 507 `storage_full`, both with `Retry-After`. ' +
          `Request bodies are JSON (\`application/json\`, at most ${formatBytes(ctx.config.bodyLimitBytes)}); unknown body fields are rejected. ` +
          `A request whose headers do not arrive within ${http.headersTimeoutMs / 1000} s` +
          (http.requestTimeoutMs > 0 ? `, or whose body does not arrive within ${http.requestTimeoutMs / 1000} s of its start,` : '') +
          ' is answered 408 `request_timeout` and its connection closed. ' +
          `A live event stream (SSE) sends a \`: heartbeat\` comment after ${http.sseHeartbeatMs / 1000} s without an event` +
          (http.sseMaxLifetimeMs > 0 ? ` and is ended by the server after ${http.sseMaxLifetimeMs / 1000} s: reconnect with \`Last-Event-ID\`.` : '.'),
      },
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description:
              'Admin key `ink_…`, or for the ingest endpoints only: a public ingest key `ink_pub_…` (safe in a web page; events may not set `timestamp` or `visitorId`) or an ingest-secret key `ink_ing_…` (a server-side secret for edge middleware and log shippers; may set both). Ingest keys get 403 `forbidden` on every other endpoint.',
          },
          sessionCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'inkwell_session',
            description:
              "The dashboard session (`POST /v1/session`). Every endpoint that takes an admin key also accepts it in place of the Authorization header; requests other than GET/HEAD made with it must carry the session's `x-csrf-token` (else 403 `csrf_token_invalid`).",
          },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
}

/**
 * The Fastify app over `ctx`, without listening. `services` are the ones the process wired once (shared
 * with its worker); without them, they are wired here from `ctx` (tests, the OpenAPI document).
 */
export async function buildApp(ctx: AppContext, services?: Services, options: { dashboardDir?: string } = {}): Promise<App> {
  const { jobs, analytics, codeHostEvents } = services ?? (await wireServices(ctx));
  const app = createFastify(ctx);
  // Declared up front so every request object keeps one shape (set later by the auth hook).
  app.decorateRequest('auth', undefined);
  app.decorateRequest('dashboardSession', undefined);
  // Cookies are parsed on demand (the session cookie, by the auth hook of a request without a key), not
  // by a hook on every request.
  await app.register(cookie, { hook: false });
  const routeMethods = trackRoutes(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setSchemaErrorFormatter((errors, context) => validationToAppError(context, errors));
  addBodyParsers(app, ctx);
  // The app's own registry (a CLI command that builds a context never loads prom-client).
  const metrics = createMetrics(() => analytics.store.counters());
  addRequestHooks(app, ctx, metrics);
  addErrorHandlers(app, ctx, routeMethods);
  await registerOpenApi(app, ctx);
  await app.register(async (scope) => opsRoutes(scope, ctx, metrics, analytics.store));
  await app.register(async (scope) => projectRoutes(scope, ctx));
  await app.register(async (scope) => webhookRoutes(scope, ctx));
  await app.register(async (scope) => agentRoutes(scope, ctx, jobs));
  await app.register(async (scope) => analyticsRoutes(scope, ctx, analytics));
  await app.register(async (scope) => sessionRoutes(scope, ctx));
  await app.register(async (scope) => codeHostHookRoutes(scope, codeHostEvents));
  await app.register(async (scope) => dashboardRoutes(scope, options.dashboardDir));
  return app;
}
