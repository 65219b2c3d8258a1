// The project's webhook over HTTP (what `inkwell webhook …` does on the database): read, set (a new signing
// secret, shown once), remove, the delivery log, and redelivery of a finished delivery. Admin keys only.
import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import { WebhookUrlError } from '../../jobs/webhook-delivery.ts';
import type { WebhookDeliveryStatus } from '../../jobs/webhook-tables.ts';
import { createWebhookService, RedeliverConflictError } from '../../jobs/webhooks.ts';
import { NotFoundError } from '../../projects/service.ts';
import type { App } from '../app.ts';
import { requireKey } from '../auth.ts';
import type { AppContext } from '../context.ts';
import { errorResponses } from '../documented.ts';

const Status = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('cancelled')]);
const Params = Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 100 }) });
const Url = Type.String({ description: 'http(s) URL that receives job.completed, job.failed and job.archived (Standard Webhooks)' });
const WebhookResponse = Type.Object(
  { webhook: Type.Union([Type.Object({ url: Url }), Type.Null()], { description: 'null: the project has no webhook' }) },
  { examples: [{ webhook: { url: 'https://ci.acme.example/hooks/inkwell' } }] },
);
const SetBody = Type.Object({ url: Url }, { additionalProperties: false, examples: [{ url: 'https://ci.acme.example/hooks/inkwell' }] });
const SetResponse = Type.Object(
  { url: Url, secret: Type.String({ description: 'The signing secret (`whsec_…`): shown this once' }) },
  { examples: [{ url: 'https://ci.acme.example/hooks/inkwell', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }] },
);
const Delivery = Type.Object({
  id: Type.String(),
  eventType: Type.String(),
  status: Status,
  attempts: Type.Integer({ minimum: 0 }),
  nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When a pending delivery is tried next' }),
  lastStatusCode: Type.Union([Type.Integer(), Type.Null()]),
  lastError: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  deliveredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
const DeliveriesQuery = Type.Object({
  status: Type.Optional(
    Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('cancelled')], {
      description: 'Only deliveries in this state',
    }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'How many, newest first (1–500)' })),
});
const deliveryExample = {
  id: 'whd_3kP9sQ2mX7vB',
  eventType: 'job.completed',
  status: 'pending',
  attempts: 2,
  nextAttemptAt: '2026-11-25T10:05:00.000Z',
  lastStatusCode: 503,
  lastError: 'HTTP 503',
  createdAt: '2026-11-25T10:00:00.000Z',
  updatedAt: '2026-11-25T10:01:00.000Z',
  deliveredAt: null,
};
const DeliveriesResponse = Type.Object({ deliveries: Type.Array(Delivery) }, { examples: [{ deliveries: [deliveryExample] }] });
const RedeliveredResponse = Type.Object(Delivery.properties, {
  examples: [
    {
      ...deliveryExample,
      attempts: 0,
      nextAttemptAt: '2026-11-25T11:00:00.000Z',
      createdAt: '2026-11-25T11:00:00.000Z',
      updatedAt: '2026-11-25T11:00:00.000Z',
    },
  ],
});

const common = (summary: string, description: string) => ({ tags: ['Webhooks'], summary, description, security: [{ bearerAuth: [] }], params: Params });

export async function webhookRoutes(app: App, ctx: AppContext): Promise<void> {
  const admin = requireKey(ctx, ['admin']);
  const service = createWebhookService(ctx);
  const path = '/v1/projects/:projectId/webhook';

  app.get(
    path,
    {
      onRequest: admin,
      schema: {
        ...common("Get the project's webhook", 'The URL job events are sent to, or null. The signing secret is never returned. Admin key.'),
        response: { 200: WebhookResponse, ...errorResponses('forbidden', 'project_not_found') },
      },
    },
    async (request) => {
      const hook = await service.get(request.auth!.projectId);
      return { webhook: hook ? { url: hook.url } : null };
    },
  );

  app.put(
    path,
    {
      onRequest: admin,
      schema: {
        ...common(
          "Set the project's webhook",
          'Sets the URL (http or https; its host must resolve to public addresses unless the server allows private ones) and makes a new signing secret, returned this once: events already queued are signed with it too. 400 naming `url` when it is refused. Admin key.',
        ),
        body: SetBody,
        response: { 200: SetResponse, ...errorResponses('invalid_request', 'forbidden', 'project_not_found') },
      },
    },
    async (request) => {
      try {
        const set = await service.set(request.auth!.projectId, request.body.url);
        return { url: set.url, secret: set.secret };
      } catch (err) {
        if (err instanceof WebhookUrlError) throw new AppError('invalid_request', err.message, [{ path: 'url', message: err.message }]);
        throw err;
      }
    },
  );

  app.delete(
    path,
    {
      onRequest: admin,
      schema: {
        ...common(
          "Remove the project's webhook",
          'Removes the webhook; deliveries still queued are cancelled when they come due. `removed` is false when there was none. Admin key.',
        ),
        response: {
          200: Type.Object({ removed: Type.Boolean() }, { examples: [{ removed: true }] }),
          ...errorResponses('forbidden', 'project_not_found'),
        },
      },
    },
    async (request) => ({ removed: await service.remove(request.auth!.projectId) }),
  );

  app.get(
    `${path}/deliveries`,
    {
      onRequest: admin,
      schema: {
        ...common(
          'List webhook deliveries',
          'The delivery log, newest first: each event, its state, attempts, the last response and when it is tried next. Admin key.',
        ),
        querystring: DeliveriesQuery,
        response: { 200: DeliveriesResponse, ...errorResponses('invalid_request', 'forbidden', 'project_not_found') },
      },
    },
    async (request) => {
      const q = request.query as { status?: WebhookDeliveryStatus; limit?: number };
      return { deliveries: await service.deliveries(request.auth!.projectId, { limit: q.limit ?? 50, ...(q.status ? { status: q.status } : {}) }) };
    },
  );

  app.post(
    `${path}/deliveries/:deliveryId/redeliver`,
    {
      onRequest: admin,
      schema: {
        ...common(
          'Redeliver a webhook event',
          "Queues a finished delivery (delivered, failed or cancelled) again, due now, with the same id (the `webhook-id` header, so the receiver can tell it is the same event) and body; attempts and the retry window start over. 409 `conflict` while it is still pending or when the project has no webhook; 404 `not_found` for an unknown delivery or another project's. Admin key.",
        ),
        params: Type.Object({ projectId: Params.properties.projectId, deliveryId: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: { 200: RedeliveredResponse, ...errorResponses('forbidden', 'project_not_found', 'not_found', 'conflict') },
      },
    },
    async (request) => {
      try {
        return await service.redeliver(request.auth!.projectId, request.params.deliveryId);
      } catch (err) {
        if (err instanceof NotFoundError) throw new AppError('not_found', err.message);
        if (err instanceof RedeliverConflictError) throw new AppError('conflict', err.message);
        throw err;
      }
    },
  );
}
