// Test-only routes mounted on the real app (startTestApp's `routes` option): a route with a strict body
// schema and one that throws, so request handling can be tested before any product route takes a body.
import { Type } from 'typebox';
import { AppError } from '../../src/errors.ts';
import type { App } from '../../src/http/app.ts';
import { requireKey } from '../../src/http/auth.ts';
import type { AppContext } from '../../src/http/context.ts';

export async function testRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/test/:projectId/things',
    {
      onRequest: requireKey(ctx, ['admin']),
      schema: {
        params: Type.Object({ projectId: Type.String() }),
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 20 }),
            count: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
            mode: Type.Optional(Type.Union([Type.Literal('fast'), Type.Literal('slow')])),
            nested: Type.Optional(Type.Object({ flag: Type.Boolean() }, { additionalProperties: false })),
          },
          { additionalProperties: false },
        ),
        querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) }),
      },
    },
    async (request) => ({ received: request.body, limit: request.query.limit ?? null }),
  );
  app.get('/test/crash', async () => {
    throw new Error(`select * from api_keys where hash = 'x' -- /srv/inkwell/data ink_${'s'.repeat(40)}`);
  });
  app.get('/test/crash-coded', async () => {
    throw new AppError('internal_error', 'connection to postgres://admin:hunter2@db failed');
  });
}
