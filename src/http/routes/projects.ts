// Project endpoints under /v1/projects: a client checks its admin key and reads its project's settings, and
// manages the project's keys (admin keys only: an ingest key can never reach them).
import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import { type KeyInfo, NotFoundError, type ProjectWithSecret } from '../../projects/service.ts';
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
      allowedRepositories: Type.Array(Type.String(), {
        description: "Repositories a job may name besides the project's own (canonical URLs; `inkwell project set --allow-repository`)",
      }),
      budget: Type.Object(
        {
          maxSteps: Type.Optional(Type.Integer()),
          maxInputTokens: Type.Optional(Type.Integer()),
          maxOutputTokens: Type.Optional(Type.Integer()),
          maxTurnMs: Type.Optional(Type.Integer()),
          maxCostUsd: Type.Optional(Type.Number()),
          maxChangedFiles: Type.Optional(Type.Integer()),
          dailyTokens: Type.Optional(Type.Integer({ description: "Input + output tokens of all the project's jobs per UTC day" })),
        },
        { additionalProperties: false, description: "Budget defaults of the project's jobs (absent: the server's)" },
      ),
      codeHostHandle: Type.Union([Type.String(), Type.Null()], {
        description: 'The handle code-host comments mention to start and continue jobs, or null when code-host webhooks are not set up',
      }),
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
        settings: {
          visitorIdRotation: 'none',
          webhookUrl: 'https://ci.acme.example/hooks/inkwell',
          allowedRepositories: ['https://github.com/acme/site'],
          budget: { maxCostUsd: 2, dailyTokens: 2_000_000 },
          codeHostHandle: 'inkwell',
        },
        createdAt: '2026-11-20T09:30:00.000Z',
        key: { id: 'key_Zr4Tq8Wm2Nx6', kind: 'admin' },
      },
    ],
  },
);

const KeySchema = Type.Object(
  {
    id: Type.String(),
    kind: Type.Union([Type.Literal('admin'), Type.Literal('ingest'), Type.Literal('ingest-secret')], {
      description: 'admin (every endpoint), ingest (`ink_pub_…`, public: the tracker) or ingest-secret (`ink_ing_…`, server-side ingest)',
    }),
    name: Type.String(),
    prefix: Type.String({ description: 'The first characters of the key, to recognise it; the key itself is shown only when created' }),
    createdAt: Type.String({ format: 'date-time' }),
    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { additionalProperties: false },
);
const keyExample = {
  id: 'key_Zr4Tq8Wm2Nx6',
  kind: 'ingest',
  name: 'docs site tracker',
  prefix: 'ink_pub_Q3xv',
  createdAt: '2026-11-20T09:30:00.000Z',
  lastUsedAt: '2026-11-25T08:12:41.000Z',
  revokedAt: null,
};
const KeyResponse = Type.Object(KeySchema.properties, { additionalProperties: false, examples: [keyExample] });
const KeyListResponse = Type.Object({ keys: Type.Array(KeySchema) }, { examples: [{ keys: [keyExample] }] });
const CreatedKeyResponse = Type.Object(
  { ...KeySchema.properties, key: Type.String({ description: 'The full key: shown this once, never stored (only its hash is)' }) },
  { additionalProperties: false, examples: [{ ...keyExample, lastUsedAt: null, key: 'ink_pub_Q3xvT8mW2pLr7Hn4Kc9Bz1Ye6Ua5Sd0F' }] },
);
const CreateKeyBody = Type.Object(
  {
    kind: KeySchema.properties.kind,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A label; default: the kind' })),
  },
  { additionalProperties: false, examples: [{ kind: 'ingest', name: 'docs site tracker' }] },
);
const ProjectParams = Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 100 }) });

/** A key as the API shows it: never the key itself nor its hash. */
const keyView = (k: KeyInfo) => ({
  id: k.id,
  kind: k.kind,
  name: k.name,
  prefix: k.prefix,
  createdAt: k.createdAt,
  lastUsedAt: k.lastUsedAt,
  revokedAt: k.revokedAt,
});

/** The public view: secrets (visitor hashing secret, webhook signing secret) never leave the server. */
function projectView(p: ProjectWithSecret, keyId: string) {
  return {
    id: p.id,
    name: p.name,
    repository: p.repository,
    ref: p.ref,
    model: p.model,
    settings: {
      visitorIdRotation: p.settings.visitorIdRotation ?? 'none',
      webhookUrl: p.settings.webhook?.url ?? null,
      allowedRepositories: p.settings.allowedRepositories ?? [],
      budget: p.settings.budget ?? {},
      codeHostHandle: p.settings.codeHostHook?.handle ?? null,
    },
    createdAt: p.createdAt,
    key: { id: keyId, kind: 'admin' as const },
  };
}

export async function projectRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/v1/projects/:projectId',
    {
      onRequest: requireKey(ctx, ['admin']),
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

  app.get(
    '/v1/projects/:projectId/keys',
    {
      onRequest: requireKey(ctx, ['admin']),
      schema: {
        tags: ['Projects'],
        summary: "List the project's keys",
        description:
          'Every key of the project, revoked ones included, oldest first: kind, name, prefix and when it was last used. The keys themselves are never returned. Admin key.',
        security: [{ bearerAuth: [] }],
        params: ProjectParams,
        response: { 200: KeyListResponse, ...errorResponses('forbidden', 'project_not_found') },
      },
    },
    async (request) => ({ keys: (await ctx.projects.listKeys(request.auth!.projectId)).map(keyView) }),
  );

  app.post(
    '/v1/projects/:projectId/keys',
    {
      onRequest: requireKey(ctx, ['admin']),
      schema: {
        tags: ['Projects'],
        summary: 'Create a key',
        description:
          'Creates an admin, ingest (`ink_pub_…`, for the tracker in public pages) or ingest-secret (`ink_ing_…`, for server-side ingest) key. The response carries the full key once; only its hash is stored. Admin key.',
        security: [{ bearerAuth: [] }],
        params: ProjectParams,
        body: CreateKeyBody,
        response: { 201: CreatedKeyResponse, ...errorResponses('invalid_request', 'forbidden', 'project_not_found') },
      },
    },
    async (request, reply) => {
      const created = await ctx.projects.createKey({
        projectId: request.auth!.projectId,
        kind: request.body.kind,
        ...(request.body.name ? { name: request.body.name } : {}),
      });
      return reply.status(201).send({ ...keyView(created), key: created.key });
    },
  );

  app.delete(
    '/v1/projects/:projectId/keys/:keyId',
    {
      onRequest: requireKey(ctx, ['admin']),
      schema: {
        tags: ['Projects'],
        summary: 'Revoke a key',
        description:
          'Revokes a key of the project: it is refused from the next request on, in every process (a revoked key can be the one making this request). Revoking a revoked key changes nothing and returns it. 404 `key_not_found` for an unknown key or one of another project. Admin key.',
        security: [{ bearerAuth: [] }],
        params: Type.Object({ projectId: ProjectParams.properties.projectId, keyId: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: { 200: KeyResponse, ...errorResponses('forbidden', 'project_not_found', 'key_not_found') },
      },
    },
    async (request) => {
      try {
        return keyView(await ctx.projects.revokeKey(request.params.keyId, request.auth!.projectId));
      } catch (err) {
        if (err instanceof NotFoundError) throw new AppError('key_not_found', `Key ${request.params.keyId} not found in this project`);
        throw err;
      }
    },
  );
}
