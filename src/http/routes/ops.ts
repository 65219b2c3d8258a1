// Operational endpoints: liveness, readiness, metrics, the OpenAPI document.
import { Type } from 'typebox';
import { infraFault } from '../../db/errors.ts';
import { migrationsApplied, ping } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import type { App } from '../app.ts';
import type { AppContext } from '../context.ts';
import { clearFault, type FaultCode, recentFaults } from '../faults.ts';

const Health = Type.Object({ status: Type.String() });
const NotReady = Type.Object(
  { error: Type.String(), code: Type.String(), requestId: Type.String() },
  { description: 'code `not_ready`; header `x-not-ready-cause` says `database_unavailable` or `storage_full` when one of those is why' },
);

export async function opsRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get('/healthz', { schema: { tags: ['Operations'], summary: 'Process is alive', response: { 200: Health } } }, async () => ({ status: 'ok' }));

  app.get(
    '/readyz',
    { schema: { tags: ['Operations'], summary: 'Database reachable and migrations applied', response: { 200: Health, 503: NotReady } } },
    async (request) => {
      let reason: string | null = null;
      let code: 'not_ready' | FaultCode = 'not_ready';
      try {
        await ping(ctx.db);
        clearFault(ctx, 'database_unavailable');
        if (!(await migrationsApplied(ctx.db))) reason = 'migrations are not applied';
      } catch (err) {
        reason = `database is not reachable: ${(err as Error).message}`;
        code = infraFault(err) ?? 'database_unavailable';
      }
      const faults = recentFaults(ctx);
      if (!reason && faults.length > 0) {
        code = faults[0]!;
        reason =
          code === 'storage_full' ? 'requests failed recently because the storage is full' : 'requests failed recently because the database was unavailable';
      }
      if (reason) {
        // The reason goes to the log; the 503 body stays {error, code, requestId} like every 5xx; a header names the failing part.
        request.log.warn({ reason, code }, 'readiness check failed');
        throw new AppError('not_ready', undefined, undefined, code === 'not_ready' ? undefined : { 'x-not-ready-cause': code });
      }
      return { status: 'ready' };
    },
  );

  app.get('/metrics', { schema: { tags: ['Operations'], summary: 'Prometheus metrics', produces: ['text/plain'] } }, async (_req, reply) => {
    reply.type(ctx.metrics.registry.contentType);
    return ctx.metrics.registry.metrics();
  });

  app.get('/openapi.json', { schema: { tags: ['Operations'], summary: 'OpenAPI 3.1 document of every endpoint' } }, async () => app.swagger());
}
