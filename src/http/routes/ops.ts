// Operational endpoints: liveness, readiness, metrics, the OpenAPI document.
import { Type } from 'typebox';
import type { AnalyticsStore } from '../../analytics/store/analytics-store.ts';
import { infraFault } from '../../db/errors.ts';
import { migrationsApplied, ping } from '../../db/index.ts';
import { AppError } from '../../errors.ts';
import type { App } from '../app.ts';
import type { AppContext } from '../context.ts';
import { errorResponses } from '../documented.ts';
import { clearFault, type FaultCode, recentFaults } from '../faults.ts';
import type { Metrics } from '../metrics.ts';

const Health = Type.Object({ status: Type.String() }, { examples: [{ status: 'ok' }] });
const Ready = Type.Object({ status: Type.String() }, { examples: [{ status: 'ready' }] });
const NotReady = {
  ...errorResponses('not_ready')[503],
  headers: {
    'x-not-ready-cause': {
      type: 'string',
      enum: ['database_unavailable', 'storage_full', 'analytics_unavailable'],
      description: 'Present when an unreachable database, a full disk or an analytics store that cannot answer (e.g. an unreachable ClickHouse) is why',
    },
  },
};

export async function opsRoutes(app: App, ctx: AppContext, metrics: Metrics, analytics: Pick<AnalyticsStore, 'health'>): Promise<void> {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Process is alive',
        description: 'Answers while the process runs, without touching the database (a liveness probe).',
        response: { 200: Health },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Database and analytics store reachable, migrations applied',
        description:
          'A readiness probe: 200 when the database answers, its migrations are applied, the analytics store can answer (SQL store: the database; ClickHouse: the server) and no request failed recently for lack of database or disk; else 503 `not_ready` (the reason goes to the log, `X-Not-Ready-Cause` names the failing part).',
        response: { 200: Ready, 503: NotReady },
      },
    },
    async (request) => {
      let reason: string | null = null;
      let code: 'not_ready' | 'analytics_unavailable' | FaultCode = 'not_ready';
      try {
        await ping(ctx.db);
        clearFault(ctx, 'database_unavailable');
        if (!(await migrationsApplied(ctx.db))) reason = 'migrations are not applied';
      } catch (err) {
        reason = `database is not reachable: ${(err as Error).message}`;
        code = infraFault(err) ?? 'database_unavailable';
      }
      if (!reason) {
        const analyticsHealth = await analytics.health();
        if (!analyticsHealth.ok) {
          reason = `analytics store: ${analyticsHealth.reason}`;
          code = 'analytics_unavailable';
        }
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

  app.get(
    '/metrics',
    {
      schema: {
        tags: ['Operations'],
        summary: 'Prometheus metrics',
        description:
          "HTTP request durations by method, route pattern and status (`inkwell_http_request_duration_seconds`), the analytics store's counters (`inkwell_analytics_summary_days_total{source}`, `inkwell_analytics_summaries_sealed_total`, `inkwell_analytics_segments_compacted_total`) and the process metrics of prom-client.",
        produces: ['text/plain'],
        response: {
          200: Type.String({
            description: 'Prometheus text exposition format 0.0.4',
            examples: [
              '# HELP inkwell_http_request_duration_seconds HTTP request duration by route and status\n# TYPE inkwell_http_request_duration_seconds histogram\ninkwell_http_request_duration_seconds_count{method="GET",route="/v2/agent/:projectId/job/:id",status="200"} 1532\n',
            ],
          }),
        },
      },
    },
    async (_req, reply) => {
      reply.type(metrics.registry.contentType);
      return metrics.registry.metrics();
    },
  );

  app.get(
    '/openapi.json',
    {
      schema: {
        tags: ['Operations'],
        summary: 'OpenAPI 3.1 document of every endpoint',
        description: 'This document. Browsable at /docs.',
        response: {
          200: Type.Unknown({
            description: 'The OpenAPI 3.1 document',
            examples: [{ openapi: '3.1.0', info: { title: 'Inkwell', version: '0.1.0' }, paths: {} }],
          }),
        },
      },
    },
    async () => app.swagger(),
  );
}
