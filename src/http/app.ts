// The app factory: builds a Fastify instance (not listening) from its dependencies.
import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, LogController, type RawServerDefault } from 'fastify';
import type { AppContext } from './context.ts';
import { AppError, type ErrorBody, errorBody } from './errors.ts';
import { agentRoutes } from './routes/agent.ts';
import { analyticsRoutes } from './routes/analytics.ts';
import { opsRoutes } from './routes/ops.ts';
import { validationToAppError, validatorCompiler } from './validation.ts';

/** The app type every route module receives: TypeBox schemas give typed requests and replies. */
export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

const REQUEST_ID_RE = /^[\w.:-]{1,128}$/;

/** Fastify's own 4xx error codes → our registry. */
const FASTIFY_CODES: Record<string, Parameters<typeof errorBody>[0]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported_media_type',
};

export async function buildApp(ctx: AppContext): Promise<App> {
  const app: App = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    bodyLimit: ctx.config.bodyLimitBytes,
    // Request start/end lines are off: onResponse records metrics and logs failures instead.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID_RE.test(incoming) ? incoming : crypto.randomUUID();
    },
    ajv: { customOptions: { removeAdditional: false } },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSchemaErrorFormatter((errors, context) => validationToAppError(context, errors));

  // A JSON body parser that reports syntax errors as our own code and accepts an empty body on routes
  // that take none (POST …/archive).
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(new AppError('invalid_json', `Request body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    ctx.metrics.httpDuration.labels(request.method, route, String(reply.statusCode)).observe(reply.elapsedTime / 1000);
    if (reply.statusCode >= 500) request.log.warn({ statusCode: reply.statusCode, url: request.url }, 'request failed');
  });

  app.setErrorHandler((err: FastifyError | AppError, request, reply) => {
    let status: number;
    let body: ErrorBody;
    if (err instanceof AppError) {
      status = err.status;
      body = errorBody(err.code, err.message, err.details);
      if (err.headers) reply.headers(err.headers);
    } else if ((err as FastifyError).validation) {
      const e = validationToAppError((err as FastifyError).validationContext ?? 'body', (err as FastifyError).validation ?? []);
      status = e.status;
      body = errorBody(e.code, e.message, e.details);
    } else if (typeof err.code === 'string' && err.code in FASTIFY_CODES) {
      const code = FASTIFY_CODES[err.code] as Parameters<typeof errorBody>[0];
      const e = new AppError(code);
      status = e.status;
      body = errorBody(code);
    } else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
      status = err.statusCode;
      body = errorBody('invalid_request', 'Invalid request');
      if (status === 404) body = errorBody('not_found');
      if (status === 413) body = errorBody('payload_too_large');
      if (status === 415) body = errorBody('unsupported_media_type');
      if (status === 405) body = errorBody('method_not_allowed');
    } else {
      request.log.error({ err }, 'unhandled error');
      status = 500;
      body = { ...errorBody('internal_error'), requestId: request.id };
    }
    reply.status(status).type('application/json; charset=utf-8').send(body);
  });

  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send(errorBody('not_found', `No route for ${request.method} ${request.url.split('?')[0]}`));
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Inkwell',
        version: '0.1.0',
        description:
          'Agent jobs (prompt → pull request) and exact visitor analytics. Wire-compatible with the hosted agent and analytics interface. Errors are `{error, code, details?}`.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'Admin key `ink_…` or, for ingest only, `ink_pub_…`.' },
        },
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  await app.register(async (scope) => opsRoutes(scope, ctx));
  await app.register(async (scope) => agentRoutes(scope, ctx));
  await app.register(async (scope) => analyticsRoutes(scope, ctx));
  return app;
}
