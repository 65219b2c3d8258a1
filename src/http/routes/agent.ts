// Agent job endpoints (/v2/agent/…): SPEC 3.3, wire-compatible with the hosted interface.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Services } from '../../context.ts';
import { AppError } from '../../errors.ts';
import { clampSeq, EVENT_TYPES, parseSeq } from '../../jobs/events.ts';
import { checkIdempotencyKey } from '../../jobs/idempotency.ts';
import type { Idempotency } from '../../jobs/service.ts';
import { isValidBranchName, JOB_STATUSES, type JobStatus } from '../../jobs/state.ts';
import type { JobViewRow } from '../../jobs/store.ts';
import type { App } from '../app.ts';
import { requireKey, requireKeyWith } from '../auth.ts';
import type { AppContext } from '../context.ts';
import { errorResponses } from '../documented.ts';
import { JobBudgetSchema, JobErrorSchema } from './budget-schema.ts';
import { streamEvents } from './job-event-stream.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** GET job: the job row read together with the key (undefined: no such job in the project). */
    jobViewRow?: JobViewRow | undefined;
  }
}

const Nullable = <T extends object>(schema: T) => Type.Union([schema as any, Type.Null()]);

const StatusSchema = Type.Unsafe<JobStatus>({
  type: 'string',
  enum: [...JOB_STATUSES],
  description: 'active (queued or running), completed, failed, archived',
});

export const AgentJobSchema = Type.Object(
  {
    id: Type.String({ description: 'Unique identifier of the job.' }),
    status: StatusSchema,
    source: Type.Object({ repository: Type.String(), ref: Type.String() }, { description: 'Repository and ref the job works from.' }),
    model: Type.String({ description: 'Model id, <provider>/<model>.' }),
    prLink: Nullable(Type.String({ format: 'uri' })),
    createdAt: Type.String({ format: 'date-time' }),
    archivedAt: Nullable(Type.String({ format: 'date-time' })),
    branch: Nullable(Type.String({ description: 'Branch the agent pushes to.' })),
    updatedAt: Type.String({ format: 'date-time' }),
    error: Nullable(JobErrorSchema),
    usage: Type.Object(
      {
        inputTokens: Type.Integer(),
        outputTokens: Type.Integer(),
        costUsd: Type.Optional(Type.Number({ minimum: 0, description: 'USD spent, once a turn ran with a model whose price the server knows.' })),
      },
      { description: 'Model tokens used (and their cost), cumulative over all turns.' },
    ),
  },
  { description: 'An agent job (the hosted AgentJob schema plus branch, updatedAt, error and usage).' },
);

const EventSchema = Type.Object({
  seq: Type.Integer({ minimum: 1 }),
  type: Type.Unsafe<string>({ type: 'string', enum: [...EVENT_TYPES] }),
  at: Type.String({ format: 'date-time' }),
  data: Type.Record(Type.String(), Type.Unknown()),
});

const DiffFileSchema = Type.Object({
  path: Type.String({ description: 'Path in the branch (the new path of a renamed file).' }),
  oldPath: Nullable(Type.String({ description: 'Path before the rename; null unless `status` is renamed.' })),
  status: Type.Unsafe<'added' | 'modified' | 'deleted' | 'renamed'>({ type: 'string', enum: ['added', 'modified', 'deleted', 'renamed'] }),
  additions: Type.Integer({ minimum: 0, description: 'Lines added (0 for a binary file).' }),
  deletions: Type.Integer({ minimum: 0, description: 'Lines removed (0 for a binary file).' }),
  binary: Type.Boolean({ description: 'A binary file: listed, its content is not in `diff`.' }),
});

const EXAMPLE_DIFF = {
  base: '3b18e512dba79e4c8300dd08aeb37f8e728b8dad',
  head: '8c7e5a6f0d2b4e1a9c3d5f7b8e0a2c4d6f8b1e3a',
  files: [
    { path: 'docs/intro.mdx', oldPath: null, status: 'modified', additions: 1, deletions: 1, binary: false },
    { path: 'docs/guide/setup.mdx', oldPath: 'docs/setup.mdx', status: 'renamed', additions: 0, deletions: 0, binary: false },
    { path: 'docs/img/flow.png', oldPath: null, status: 'added', additions: 0, deletions: 0, binary: true },
  ],
  totals: { files: 3, additions: 1, deletions: 1 },
  diff: 'diff --git a/docs/img/flow.png b/docs/img/flow.png\nnew file mode 100644\nindex 0000000..5e1c309\nBinary files /dev/null and b/docs/img/flow.png differ\ndiff --git a/docs/intro.mdx b/docs/intro.mdx\nindex 3b18e51..8c7e5a6 100644\n--- a/docs/intro.mdx\n+++ b/docs/intro.mdx\n@@ -1,3 +1,3 @@\n # Intro\n \n-Hello from Acme.\n+Welcome to Acme.\ndiff --git a/docs/setup.mdx b/docs/guide/setup.mdx\nsimilarity index 100%\nrename from docs/setup.mdx\nrename to docs/guide/setup.mdx\n',
  truncated: false,
  updatedAt: '2026-11-25T10:03:10.000Z',
};

const DiffSchema = Type.Object(
  {
    base: Nullable(Type.String({ description: "Merge base of the branch with the job's ref (40 hex digits); null while nothing was pushed." })),
    head: Nullable(Type.String({ description: 'The branch commit the diff was taken at; null while nothing was pushed.' })),
    files: Type.Array(DiffFileSchema, { description: 'Every changed file, in path order; complete even when `diff` is truncated.' }),
    totals: Type.Object({ files: Type.Integer({ minimum: 0 }), additions: Type.Integer({ minimum: 0 }), deletions: Type.Integer({ minimum: 0 }) }),
    diff: Type.String({ description: 'Unified diff (binary files as a `Binary files … differ` line, without content), whole files up to 1 MiB.' }),
    truncated: Type.Boolean({ description: '`diff` stops before the end (it reached 1 MiB); `files` and `totals` are still complete.' }),
    updatedAt: Nullable(Type.String({ format: 'date-time', description: 'When the diff was taken (after the last turn that pushed).' })),
  },
  {
    description: 'The job branch against its base.',
    examples: [
      EXAMPLE_DIFF,
      { base: null, head: null, files: [], totals: { files: 0, additions: 0, deletions: 0 }, diff: '', truncated: false, updatedAt: null },
    ],
  },
);

const EXAMPLE_JOB = {
  id: 'job_3f9c2a7D1e8b4C6x',
  status: 'active',
  source: { repository: 'https://github.com/acme/docs', ref: 'main' },
  model: 'anthropic/claude-sonnet-4-5',
  prLink: null,
  createdAt: '2026-11-25T10:00:00.000Z',
  archivedAt: null,
  branch: 'inkwell/3f9c2a7d-document-the-new-dry-run-flag',
  updatedAt: '2026-11-25T10:00:00.000Z',
  error: null,
  usage: { inputTokens: 0, outputTokens: 0 },
};
const EXAMPLE_DONE_JOB = {
  ...EXAMPLE_JOB,
  status: 'completed',
  prLink: 'https://github.com/acme/docs/pull/42',
  updatedAt: '2026-11-25T10:03:12.000Z',
  usage: { inputTokens: 48_210, outputTokens: 3_904 },
};

/** The job schema with examples (for one operation's answer). */
const jobAnswer = (...examples: object[]) => ({ ...AgentJobSchema, examples });

const Prompt = Type.String({ minLength: 1, maxLength: 100_000, description: 'The instruction for the agent (1–100,000 characters).' });

const CreateBody = Type.Object(
  {
    prompt: Prompt,
    model: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 200,
        pattern: '^[a-z0-9-]+/\\S+$',
        description: '<provider>/<model>; default: the project model, else INKWELL_MODEL.',
      }),
    ),
    source: Type.Optional(
      Type.Object(
        {
          repository: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'Repository URL; default: the project repository.' })),
          ref: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Branch to start from; default: the project ref.' })),
        },
        { additionalProperties: false },
      ),
    ),
    branch: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Branch to push to; default inkwell/<short-id>-<slug>.' })),
    draft: Type.Optional(Type.Boolean({ description: 'Open the pull request as a draft.' })),
    budget: Type.Optional(JobBudgetSchema),
  },
  {
    additionalProperties: false,
    examples: [
      { prompt: 'Document the new --dry-run flag of the deploy command' },
      { prompt: 'Fix the broken links in docs/install.md', model: 'anthropic/claude-sonnet-4-5', source: { ref: 'main' }, draft: true },
      { prompt: 'Rewrite the install guide', budget: { maxOutputTokens: 20_000, maxTurnMs: 600_000, maxCostUsd: 2 } },
    ],
  },
);

const MessageBody = Type.Object({ prompt: Prompt }, { additionalProperties: false, examples: [{ prompt: 'Also mention the flag in the CLI reference page' }] });

const ProjectParams = Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 100 }) });
const JobParams = Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 100 }), id: Type.String({ minLength: 1, maxLength: 100 }) });

const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        '1–255 visible ASCII characters, no spaces (else 400). Same key and body within 24 h → the original response with `Idempotent-Replayed: true`; same key, different body → 422 `idempotency_mismatch`.',
    }),
  ),
});

function badField(field: string, message: string): AppError {
  return new AppError('invalid_request', message, [{ message, path: field }]);
}

/**
 * `after` given as digits of any length is bounded to the largest seq before validation (which would refuse
 * a number too long for a double): a huge `after` only means "nothing newer", never an error.
 */
function clampAfterQuery(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  const query = request.query as Record<string, unknown>;
  const after = query.after;
  if (typeof after === 'string' && after.length > 9 && /^\d+$/.test(after)) query.after = String(clampSeq(Number(after)));
  done();
}

function idempotencyFrom(request: FastifyRequest, path: string): Idempotency | undefined {
  const { key, error } = checkIdempotencyKey(request.headers['idempotency-key']);
  if (error) throw badField('Idempotency-Key', error);
  return key ? { key, method: request.method, path } : undefined;
}

function checkRepository(url: string): void {
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null; // a local path
  }
  if (parsed && (parsed.username || parsed.password)) {
    throw badField(
      'source.repository',
      'field "source.repository" must not contain credentials; configure GITHUB_TOKEN / GITLAB_TOKEN or a git credential helper on the server',
    );
  }
}

export async function agentRoutes(app: App, ctx: AppContext, { service: jobs, notifier }: Services['jobs']): Promise<void> {
  const auth = requireKey(ctx, ['admin']);
  const tags = ['Agent jobs'];
  const security = [{ bearerAuth: [] }];

  // Live event streams end when the server closes, so that close() never waits on them.
  const streams = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of [...streams]) end();
  });

  app.post(
    '/v2/agent/:projectId/job',
    {
      onRequest: auth,
      schema: {
        tags,
        security,
        summary: 'Create an agent job',
        description:
          "Queues a job; a worker runs the agent and opens a pull request when files change. Rate family `jobs`: only a request that passes auth and validation and creates a job is counted. `source.repository` must be the project's own repository or one on its allow-list (`inkwell project set --allow-repository`), compared in canonical form; anything else is 403 `repository_not_allowed` (not counted, nothing stored).",
        params: ProjectParams,
        headers: IdempotencyHeaders,
        body: CreateBody,
        response: {
          201: jobAnswer(EXAMPLE_JOB),
          ...errorResponses(
            'invalid_request',
            'model_not_configured',
            'forbidden',
            'repository_not_allowed',
            'project_not_found',
            'conflict',
            'idempotency_mismatch',
            'rate_limited',
          ),
        },
      },
    },
    async (request, reply) => {
      const { projectId } = request.params;
      const body = request.body;
      if (body.source?.repository !== undefined) checkRepository(body.source.repository);
      if (body.source?.ref !== undefined && !isValidBranchName(body.source.ref))
        throw badField('source.ref', 'field "source.ref" must be a valid git branch name');
      if (body.branch !== undefined && !isValidBranchName(body.branch)) throw badField('branch', 'field "branch" must be a valid git branch name');
      const idem = idempotencyFrom(request, `/v2/agent/${projectId}/job`);
      const project = await ctx.projects.getProject(projectId);
      if (!project) throw new AppError('project_not_found');
      // The quota is charged only once the request has passed auth and every check (inside createJob).
      const res = await jobs.createJob(project, body, idem, () => ctx.rateLimiter.consume(reply, 'jobs', projectId));
      if (res.replayed) reply.header('idempotent-replayed', 'true');
      return reply.status(res.status as 201).send(res.job);
    },
  );

  // GET job is the API's hot read: the key and the job are read by one query (same rules as `auth`).
  // Declared up front (one request object shape); a property instead of a WeakMap entry per request.
  app.decorateRequest('jobViewRow', undefined);
  const authWithJob = requireKeyWith(
    ctx,
    ['admin'],
    async (presented, request) => {
      const { projectId, id } = request.params as { projectId: string; id: string };
      const found = await jobs.getJobViewForKey(presented.hash, projectId, id);
      return found && { key: found.key, value: found.job };
    },
    (request, job) => {
      request.jobViewRow = job;
    },
    (request) => {
      const { projectId, id } = request.params as { projectId: string; id: string };
      return jobs.findJobViewRow(projectId, id);
    },
  );
  app.get(
    '/v2/agent/:projectId/job/:id',
    {
      onRequest: authWithJob,
      schema: {
        tags,
        security,
        summary: 'Get an agent job',
        description:
          'The job as it is now: poll it until `status` is no longer `active` (or follow its events). `prLink` is set once the pull request exists; `error` says why a failed job failed.',
        params: JobParams,
        response: {
          200: jobAnswer(EXAMPLE_DONE_JOB, {
            ...EXAMPLE_JOB,
            status: 'failed',
            error: { code: 'host_error', message: 'GitHub refused to open the pull request: the token cannot write to acme/docs' },
          }),
          ...errorResponses('forbidden', 'project_not_found', 'job_not_found'),
        },
      },
    },
    async (request) => jobs.jobView(request.jobViewRow),
  );

  app.post(
    '/v2/agent/:projectId/job/:id/message',
    {
      onRequest: auth,
      schema: {
        tags,
        security,
        summary: 'Send a follow-up message',
        description:
          "Queues one more turn of the same conversation on the same branch; handled after any run in progress. Rate family `jobs`: only a request that passes auth and validation and queues a message is counted. 403 `repository_not_allowed` when the job's repository is no longer the project's own nor on its allow-list.",
        params: JobParams,
        headers: IdempotencyHeaders,
        body: MessageBody,
        response: {
          200: jobAnswer({ ...EXAMPLE_DONE_JOB, status: 'active', updatedAt: '2026-11-25T10:20:00.000Z' }),
          ...errorResponses(
            'invalid_request',
            'model_not_configured',
            'forbidden',
            'repository_not_allowed',
            'project_not_found',
            'job_not_found',
            'job_archived',
            'conflict',
            'idempotency_mismatch',
            'rate_limited',
          ),
        },
      },
    },
    async (request, reply) => {
      const { projectId, id } = request.params;
      const idem = idempotencyFrom(request, `/v2/agent/${projectId}/job/${id}/message`);
      const res = await jobs.sendMessage(projectId, id, request.body.prompt, idem, () => ctx.rateLimiter.consume(reply, 'jobs', projectId));
      if (res.replayed) reply.header('idempotent-replayed', 'true');
      return reply.status(res.status as 200).send(res.job);
    },
  );

  app.get(
    '/v2/agent/:projectId/jobs',
    {
      onRequest: auth,
      schema: {
        tags,
        security,
        summary: 'List agent jobs, newest first',
        description:
          "One page of the project's jobs, newest first, optionally of one status. While `hasMore`, pass `nextCursor` back as `cursor` for the next page; pages do not repeat or skip a job when new ones are created meanwhile.",
        params: ProjectParams,
        querystring: Type.Object({
          status: Type.Optional(StatusSchema),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Jobs per page (default 20).' })),
          cursor: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 400,
              description: 'The opaque `nextCursor` of the previous page, passed back unchanged (a malformed one is 400).',
            }),
          ),
        }),
        response: {
          200: Type.Object(
            { jobs: Type.Array(AgentJobSchema), nextCursor: Nullable(Type.String()), hasMore: Type.Boolean() },
            { examples: [{ jobs: [EXAMPLE_JOB, EXAMPLE_DONE_JOB], nextCursor: 'MTc2NDA2NDgwMDAwMC5qb2JfMWFCMmNEM2VGNGdINWlKNg', hasMore: true }] },
          ),
          ...errorResponses('invalid_request', 'forbidden', 'project_not_found'),
        },
      },
    },
    async (request) => {
      const q = request.query;
      return jobs.listJobs(request.params.projectId, {
        limit: q.limit ?? 20,
        ...(q.status ? { status: q.status } : {}),
        ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
      });
    },
  );

  app.post(
    '/v2/agent/:projectId/job/:id/archive',
    {
      onRequest: auth,
      schema: {
        tags,
        security,
        summary: 'Archive an agent job',
        description: 'Stops a run in progress (within 5 s) and makes the job final. Archiving an archived job returns it unchanged.',
        params: JobParams,
        response: {
          200: jobAnswer({ ...EXAMPLE_JOB, status: 'archived', archivedAt: '2026-11-25T10:05:00.000Z', updatedAt: '2026-11-25T10:05:00.000Z' }),
          ...errorResponses('forbidden', 'project_not_found', 'job_not_found'),
        },
      },
    },
    async (request) => jobs.archiveJob(request.params.projectId, request.params.id),
  );

  app.get(
    '/v2/agent/:projectId/job/:id/diff',
    {
      onRequest: auth,
      schema: {
        tags,
        security,
        summary: "The job branch's diff against its base",
        description:
          "The unified diff of the job's branch against its base (the merge base with the ref the job started from), with per-file stats and totals, as the worker stored it after the last turn that pushed (the API needs no git). A job that has pushed nothing yet is not an error: 200 with no files, an empty `diff` and `base`/`head` null. `diff` keeps whole files up to 1 MiB and says `truncated`; `files` and `totals` are always complete; binary files are listed without content. `?format=patch` answers the diff alone as `text/x-diff` (with `Inkwell-Diff-Truncated: true|false`), ready for `git apply` on the base (binary files excepted).",
        params: JobParams,
        querystring: Type.Object({
          format: Type.Optional(
            Type.Unsafe<'json' | 'patch'>({
              type: 'string',
              enum: ['json', 'patch'],
              default: 'json',
              description: '`json` (default): the object below; `patch`: the unified diff alone as `text/x-diff`.',
            }),
          ),
        }),
        produces: ['application/json', 'text/x-diff'],
        response: {
          200: {
            ...DiffSchema,
            headers: Type.Object({
              'inkwell-diff-truncated': Type.Optional(
                Type.Unsafe<'true' | 'false'>({
                  type: 'string',
                  enum: ['true', 'false'],
                  description: 'With `format=patch`: whether the diff was cut at 1 MiB.',
                }),
              ),
            }),
          },
          ...errorResponses('invalid_request', 'forbidden', 'project_not_found', 'job_not_found'),
        },
      },
    },
    async (request, reply) => {
      const diff = await jobs.getDiff(request.params.projectId, request.params.id);
      if (request.query.format !== 'patch') return diff;
      // Repository content: served as inert text, never sniffed into something a browser would run. (The
      // typed reply knows only the JSON answer; this one is the documented text/x-diff.)
      return (reply as FastifyReply)
        .type('text/x-diff; charset=utf-8')
        .header('x-content-type-options', 'nosniff')
        .header('inkwell-diff-truncated', String(diff.truncated))
        .send(diff.diff);
    },
  );

  app.get(
    '/v2/agent/:projectId/job/:id/events',
    {
      onRequest: auth,
      preValidation: clampAfterQuery,
      schema: {
        tags,
        security,
        summary: 'Job events (history, or a live SSE stream)',
        description:
          'JSON: events after `after` (at most 1000; `hasMore` says when to ask again). With `Accept: text/event-stream`: the same events, then new ones live; each frame has `id: <seq>` so a reconnect with `Last-Event-ID` resumes exactly after the last event seen. An `after` or Last-Event-ID beyond the last event is not an error: JSON returns no events, and the stream stays open and sends the events that come next. A Last-Event-ID that is not a whole number is a 400 (an empty one counts as absent).',
        params: JobParams,
        querystring: Type.Object({
          after: Type.Optional(Type.Integer({ minimum: 0, default: 0, description: 'Return events with seq greater than this (default 0: from the start).' })),
        }),
        headers: Type.Object({
          'last-event-id': Type.Optional(
            Type.String({
              description:
                'The seq of the last event seen, a whole number (else 400; empty counts as absent). The larger of it and `after` applies; beyond the last event the stream waits for the next one.',
            }),
          ),
        }),
        produces: ['application/json', 'text/event-stream'],
        response: {
          200: Type.Object(
            { events: Type.Array(EventSchema), hasMore: Type.Boolean() },
            {
              examples: [
                {
                  events: [
                    { seq: 1, type: 'status', at: '2026-11-25T10:00:00.000Z', data: { status: 'active', prLink: null, error: null, reason: 'created' } },
                    {
                      seq: 2,
                      type: 'user_message',
                      at: '2026-11-25T10:00:00.000Z',
                      data: { turn: 1, prompt: 'Document the new --dry-run flag of the deploy command' },
                    },
                    { seq: 3, type: 'status', at: '2026-11-25T10:00:01.000Z', data: { status: 'active', phase: 'running', turn: 1, attempt: 1 } },
                  ],
                  hasMore: false,
                },
              ],
            },
          ),
          ...errorResponses('invalid_request', 'forbidden', 'project_not_found', 'job_not_found'),
        },
      },
    },
    async (request, reply) => {
      const { projectId, id } = request.params;
      // Bounded by what the seq column holds: a larger value means "after every event" (never a 5xx).
      let after = clampSeq(request.query.after ?? 0);
      const lastEventId = request.headers['last-event-id'];
      if (lastEventId !== undefined && lastEventId.trim() !== '') {
        const seq = parseSeq(lastEventId);
        if (seq === null) throw badField('Last-Event-ID', 'header "Last-Event-ID" must be an event seq (a whole number)');
        after = Math.max(after, seq);
      }
      if (!(request.headers.accept ?? '').includes('text/event-stream')) return jobs.listEvents(projectId, id, after, 1000);
      // 404 before the stream starts. A position beyond the last event (a client's id from elsewhere, a
      // restored database) waits for the next event instead of for a seq that may never come: a stream
      // that ended at once would only make an EventSource reconnect forever.
      const lastSeq = await jobs.lastEventSeq(projectId, id);
      await streamEvents({ jobs, notifier, config: ctx.config, streams }, request, reply, id, Math.min(after, lastSeq));
    },
  );
}
