// Project endpoints under /v1/projects: a client checks its admin key and reads its project's settings.
import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import type { ProjectWithSecret } from '../../projects/service.ts';
import type { App } from '../app.ts';
import { requireKey } from '../auth.ts';
import type { AppContext } from '../context.ts';
import { errorResponses } from '../documented.ts';

export const ProjectSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    repository: Type.String({ description: 'Git repository URL (or local path) the agent works on' }),
    ref: Type.String({ description: 'Default branch jobs start from' }),
    model: Type.Union([Type.String(), Type.Null()], { description: 'Default model `<provider>/<model>`, or null for the server default' }),
    settings: Type.Object({
      visitorIdRotation: Type.Union([Type.Literal('none'), Type.Literal('daily'), Type.Literal('monthly')]),
      webhookUrl: Type.Union([Type.String(), Type.Null()], { description: 'Where job webhooks go; the signing secret is never returned' }),
    }),
    createdAt: Type.String({ format: 'date-time' }),
    key: Type.Object(
      { id: Type.String(), kind: Type.Literal('admin') },
      { description: 'The key that made this request: a client can check which key it holds' },
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'prj_7Hq2LmX9aB3c',
        name: 'Docs',
        repository: 'https://github.com/acme/docs',
        ref: 'main',
        model: null,
        settings: { visitorIdRotation: 'none', webhookUrl: 'https://ci.acme.example/hooks/inkwell' },
        createdAt: '2026-11-20T09:30:00.000Z',
        key: { id: 'key_Zr4Tq8Wm2Nx6', kind: 'admin' },
      },
    ],
  },
);

/** The public view: secrets (visitor hashing secret, webhook signing secret) never leave the server. */
function projectView(p: ProjectWithSecret, keyId: string) {
  return {
    id: p.id,
    name: p.name,
    repository: p.repository,
    ref: p.ref,
    model: p.model,
    settings: { visitorIdRotation: p.settings.visitorIdRotation ?? 'none', webhookUrl: p.settings.webhook?.url ?? null },
    createdAt: p.createdAt,
    key: { id: keyId, kind: 'admin' as const },
  };
}

export async function projectRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/v1/projects/:projectId',
    {
      onRequest: requireKey(ctx.projects, ['admin']),
      schema: {
        tags: ['Projects'],
        summary: 'Get the project this admin key belongs to (checks the key)',
        description:
          'Returns the project without secrets. 401 for a missing, malformed, unknown or revoked key; 404 `project_not_found` for another project; 403 `forbidden` for an ingest key (`ink_pub_…` or `ink_ing_…`).',
        security: [{ bearerAuth: [] }],
        params: Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: { 200: ProjectSchema, ...errorResponses('forbidden', 'project_not_found') },
      },
    },
    async (request) => {
      const auth = request.auth!;
      const p = await ctx.projects.getProject(auth.projectId);
      if (!p) throw new AppError('project_not_found');
      return projectView(p, auth.keyId);
    },
  );
}
