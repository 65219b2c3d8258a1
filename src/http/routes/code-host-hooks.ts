// Inbound code-host webhooks: GitHub posts issue comments and pull-request reviews here, signed with the
// project's secret (`inkwell project set --code-host-webhook`). The body is kept as bytes: the signature is
// over exactly what was sent.
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
        response: {
          202: Receipt,
          ...errorResponses(
            'invalid_request',
            'invalid_json',
            'unauthorized',
            'repository_not_allowed',
            'project_not_found',
            'not_ready',
            'code_host_unavailable',
          ),
        },
      },
    },
    async (request, reply) => {
      const h = request.headers;
      const header = (name: string) => (typeof h[name] === 'string' ? (h[name] as string) : undefined);
      const receipt = await events.receiveGitHub(request.params.projectId, {
        event: header('x-github-event'),
        deliveryId: header('x-github-delivery'),
        signature: header('x-hub-signature-256'),
        rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
      });
      return reply.status(202).send(receipt);
    },
  );
}
