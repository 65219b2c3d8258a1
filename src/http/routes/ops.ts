// Operational endpoints: liveness, readiness, metrics, the OpenAPI document.
import { Type } from 'typebox';
import { migrationsApplied, ping } from '../../db/index.ts';
import type { App } from '../app.ts';
import type { AppContext } from '../context.ts';
import { errorBody } from '../errors.ts';

const Health = Type.Object({ status: Type.String() });
const NotReady = Type.Object({ error: Type.String(), code: Type.String() });

export async function opsRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get('/healthz', { schema: { tags: ['Operations'], summary: 'Process is alive', response: { 200: Health } } }, async () => ({ status: 'ok' }));

  app.get(
    '/readyz',
    { schema: { tags: ['Operations'], summary: 'Database reachable and migrations applied', response: { 200: Health, 503: NotReady } } },
    async (request, reply) => {
      try {
        await ping(ctx.db);
        if (!(await migrationsApplied(ctx.db))) return reply.status(503).send(errorBody('not_ready', 'Migrations are not applied'));
        return { status: 'ready' };
      } catch (err) {
        request.log.warn({ err }, 'readiness check failed');
        return reply.status(503).send(errorBody('not_ready', 'Database is not reachable'));
      }
    },
  );

  app.get('/metrics', { schema: { tags: ['Operations'], summary: 'Prometheus metrics', produces: ['text/plain'] } }, async (_req, reply) => {
    reply.type(ctx.metrics.registry.contentType);
    return ctx.metrics.registry.metrics();
  });

  app.get('/openapi.json', { schema: { tags: ['Operations'], summary: 'OpenAPI 3.1 document of every endpoint' } }, async () => app.swagger());
}
