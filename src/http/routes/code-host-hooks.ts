// Inbound code-host webhooks: GitHub posts issue comments and pull-request reviews here, signed with the
// project's secret (`inkwell project set --code-host-webhook`); GitLab posts comments with that secret as its
// token. The body is kept as bytes: the signature is over exactly what was sent.
import { Type } from 'typebox';
import type { CodeHostEvents } from '../../code-host-events/service.ts';
import type { App } from '../app.ts';
import { JSON_CONTENT_TYPE } from '../content-type.ts';
import { documentedAs, errorResponses } from '../documented.ts';

/** GitHub sends up to 25 MB; comment and review events are far smaller. */
const HOOK_BODY_LIMIT = 5 * 1024 * 1024;

const Receipt = Type.Object(
  {
    deliveryId: Type.String(),
    outcome: Type.Union(
      [
        Type.Literal('ping'),
        Type.Literal('duplicate'),
        Type.Literal('ignored'),
        Type.Literal('job_started'),
        Type.Literal('message_queued'),
        Type.Literal('job_archived'),
      ],
      { description: 'What the delivery did: a redelivery of an id seen before is `duplicate` and does nothing' },
    ),
    jobId: Type.Union([Type.String(), Type.Null()], { description: 'The job started, continued or archived' }),
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why nothing was done (ignored, duplicate)' }),
  },
  { examples: [{ deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958', outcome: 'job_started', jobId: 'job_3kP9sQ2mX7vBnR4t', reason: null }] },
);

const GitHubPayload = Type.Object(
  {
    action: Type.Optional(Type.String()),
    repository: Type.Optional(Type.Object({ full_name: Type.String(), html_url: Type.String() })),
  },
  {
    description: 'The event payload GitHub sends (`issue_comment`, `pull_request_review`, `ping`), as JSON',
    examples: [
      {
        action: 'created',
        repository: { full_name: 'acme/docs', html_url: 'https://github.com/acme/docs' },
        issue: { number: 12, title: 'Document --dry-run', body: 'The flag is missing from the CLI page.', html_url: 'https://github.com/acme/docs/issues/12' },
        comment: { id: 901, body: '@inkwell please document the new --dry-run flag', user: { login: 'octocat', type: 'User' } },
      },
    ],
  },
);

const GitLabPayload = Type.Object(
  {
    object_kind: Type.Optional(Type.String()),
    project: Type.Optional(Type.Object({ path_with_namespace: Type.String(), web_url: Type.String() })),
  },
  {
    description: 'The event payload GitLab sends (`Note Hook`), as JSON',
    examples: [
      {
        object_kind: 'note',
        user: { id: 42, username: 'octocat', name: 'Octo Cat' },
        project: { path_with_namespace: 'acme/docs', web_url: 'https://gitlab.com/acme/docs' },
        object_attributes: { id: 1244, note: '@inkwell please document the new --dry-run flag', noteable_type: 'Issue', action: 'create' },
        issue: { iid: 12, title: 'Document --dry-run', description: 'The flag is missing from the CLI page.', url: 'https://gitlab.com/acme/docs/-/issues/12' },
      },
    ],
  },
);

const HOOK_RESPONSES = {
  202: Receipt,
  ...errorResponses('invalid_request', 'invalid_json', 'unauthorized', 'repository_not_allowed', 'not_ready', 'code_host_unavailable'),
};

/** A request header's value when it was sent once (a repeated header is treated as absent). */
const headerOf = (h: Record<string, string | string[] | undefined>) => (name: string) => (typeof h[name] === 'string' ? h[name] : undefined);

export async function codeHostHookRoutes(app: App, events: CodeHostEvents): Promise<void> {
  // In this scope only: the raw bytes of a JSON body (the signature is checked over them, then they are parsed).
  app.removeContentTypeParser(JSON_CONTENT_TYPE);
  app.addContentTypeParser(JSON_CONTENT_TYPE, { parseAs: 'buffer', bodyLimit: HOOK_BODY_LIMIT }, (_request, body, done) => done(null, body));

  app.post(
    '/v1/hooks/github/:projectId',
    {
      bodyLimit: HOOK_BODY_LIMIT,
      schema: {
        tags: ['Code host'],
        summary: 'Receive a GitHub webhook delivery',
        description:
          "The URL to give the repository's webhook (content type `application/json`, the secret from `inkwell project set --project ID --code-host-webhook`, events: issue comments and pull request reviews). A comment that mentions the project's handle (`@inkwell`) on an issue starts a job; a comment or review on a pull request an Inkwell job opened continues that job (`@inkwell stop` archives it). Only people with write access to the repository trigger anything, never bots. 401 when `X-Hub-Signature-256` does not match; 403 `repository_not_allowed` for another repository; a redelivered `X-GitHub-Delivery` does nothing again.",
        params: Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 100 }) }),
        headers: Type.Object({
          'x-github-event': Type.Optional(Type.String({ maxLength: 100, description: 'The event type' })),
          'x-github-delivery': Type.Optional(Type.String({ maxLength: 100, description: 'The delivery id (the same for a redelivery)' })),
          'x-hub-signature-256': Type.Optional(
            Type.String({ maxLength: 100, description: '`sha256=` and the HMAC-SHA256 of the body with the secret, in hex' }),
          ),
        }),
        body: documentedAs('GitHubWebhookPayload', GitHubPayload),
        response: HOOK_RESPONSES,
      },
    },
    async (request, reply) => {
      const header = headerOf(request.headers);
      const receipt = await events.receiveGitHub(request.params.projectId, {
        event: header('x-github-event'),
        deliveryId: header('x-github-delivery'),
        signature: header('x-hub-signature-256'),
        rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
      });
      return reply.status(202).send(receipt);
    },
  );

  app.post(
    '/v1/hooks/gitlab/:projectId',
    {
      bodyLimit: HOOK_BODY_LIMIT,
      schema: {
        tags: ['Code host'],
        summary: 'Receive a GitLab webhook delivery',
        description:
          "The URL to give the project's webhook (Settings → Webhooks: the secret token from `inkwell project set --project ID --code-host-webhook`, trigger: comments). A comment that mentions the project's handle (`@inkwell`) on an issue starts a job; a comment on a merge request an Inkwell job opened (a comment on a diff line comes with its file and lines) continues that job (`@inkwell stop` archives it). Only members with the Developer role or above trigger anything, never bots. 401 when `X-Gitlab-Token` is not the secret; 403 `repository_not_allowed` for another project; a retry with the same `Idempotency-Key` (or, before GitLab 17.4, the same body) does nothing again.",
        params: Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 100 }) }),
        headers: Type.Object({
          'x-gitlab-event': Type.Optional(Type.String({ maxLength: 100, description: 'The event type (`Note Hook`)' })),
          'x-gitlab-token': Type.Optional(Type.String({ maxLength: 200, description: 'The secret token given to the webhook' })),
          'idempotency-key': Type.Optional(Type.String({ maxLength: 100, description: 'The same for every retry of one event (GitLab 17.4+)' })),
        }),
        body: documentedAs('GitLabWebhookPayload', GitLabPayload),
        response: HOOK_RESPONSES,
      },
    },
    async (request, reply) => {
      const header = headerOf(request.headers);
      const receipt = await events.receiveGitLab(request.params.projectId, {
        event: header('x-gitlab-event'),
        token: header('x-gitlab-token'),
        idempotencyKey: header('idempotency-key'),
        rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
      });
      return reply.status(202).send(receipt);
    },
  );
}
