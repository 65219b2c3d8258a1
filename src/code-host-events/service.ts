// Code-host events → jobs: a comment that mentions the project's handle on an issue starts a job; a comment
// or review on a pull request an Inkwell job opened becomes a follow-up message on that job (`@handle stop`
// archives it). Only people with write access trigger anything (asked of the host, remembered briefly);
// bots and Inkwell's own replies never do. Each delivery id acts once.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import { createGitHubThreads, type GitHubThreads, type RepositoryPermission, type ReviewLineComment } from '../hosts/github-threads.ts';
import { HostError } from '../hosts/retry.ts';
import type { JobService } from '../jobs/service.ts';
import { publicBaseUrl } from '../lib/public-url.ts';
import { repositoryAllowed } from '../projects/repository.ts';
import type { ProjectService, ProjectWithSecret } from '../projects/service.ts';
import { parseGitHubDelivery, type ThreadComment } from './github-payload.ts';
import { followUpPrompt, isStopCommand, issuePrompt, mentions, OWN_MARKER } from './mention.ts';
import { hookSecret, ServerSecretError, serverSecret } from './secret.ts';
import type { DeliveriesStore } from './store.ts';
import { githubSignatureValid } from './verify.ts';

export const DEFAULT_HANDLE = 'inkwell';

/** How long a commenter's permission is remembered (a revoked collaborator is refused at most this late). */
const PERMISSION_TTL_MS = 60_000;
const WRITERS: readonly RepositoryPermission[] = ['admin', 'maintain', 'write'];

export type Outcome = 'ping' | 'duplicate' | 'ignored' | 'job_started' | 'message_queued' | 'job_archived';

export interface Receipt {
  deliveryId: string;
  outcome: Outcome;
  jobId: string | null;
  /** Why nothing was done (ignored). */
  reason: string | null;
}

export interface CodeHostEventsDeps {
  config: Config;
  projects: ProjectService;
  jobs: Pick<JobService, 'createJob' | 'sendMessage' | 'archiveJob' | 'findJobIdByPullRequest'>;
  store: DeliveriesStore;
  logger: Logger;
  now: () => number;
  /** The GitHub thread API (tests point it at a local fake through GITHUB_API_URL). */
  github?: GitHubThreads;
}

export interface GitHubDelivery {
  event: string | undefined;
  deliveryId: string | undefined;
  signature: string | undefined;
  rawBody: Buffer;
}

/** The events to tick in the repository's webhook settings. */
export const GITHUB_HOOK_EVENTS = ['Issue comments', 'Pull request reviews'] as const;

/** A handle is a GitHub login: letters, digits and single hyphens, at most 39 characters. */
export const HANDLE_RE = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;

/**
 * Sets up inbound webhooks for the project with a new secret (the one given out before stops working) and
 * returns what to paste into the repository's webhook settings. NotFoundError for an unknown project;
 * ServerSecretError when the server has no secret to derive it from.
 */
export async function enableCodeHostHook(
  deps: { projects: ProjectService; config: Config },
  projectId: string,
  handle = DEFAULT_HANDLE,
): Promise<{ url: string; secret: string; handle: string; events: readonly string[] }> {
  const codeHostHook = { generation: crypto.randomBytes(16).toString('hex'), handle };
  const secret = hookSecret(serverSecret(deps.config), projectId, codeHostHook.generation);
  await deps.projects.updateSettings(projectId, { codeHostHook });
  return { url: `${publicBaseUrl(deps.config)}/v1/hooks/github/${projectId}`, secret, handle, events: GITHUB_HOOK_EVENTS };
}

export function createCodeHostEvents(deps: CodeHostEventsDeps) {
  const github = deps.github ?? createGitHubThreads(deps.config);
  const permissions = new Map<string, { permission: RepositoryPermission; at: number }>();

  function secretOf(project: ProjectWithSecret): string {
    const hook = project.settings.codeHostHook;
    if (!hook) throw new AppError('unauthorized', 'This project takes no code-host webhooks: run `inkwell project set --project ID --code-host-webhook`');
    try {
      return hookSecret(serverSecret(deps.config), project.id, hook.generation);
    } catch (err) {
      if (err instanceof ServerSecretError) throw new AppError('not_ready', `Code-host webhooks are not configured on this server: ${err.message}`);
      throw err;
    }
  }

  async function permissionOf(c: ThreadComment): Promise<RepositoryPermission> {
    const key = `${c.owner}/${c.repo}\0${c.author.login}`.toLowerCase();
    const known = permissions.get(key);
    if (known && deps.now() - known.at < PERMISSION_TTL_MS) return known.permission;
    const permission = await github.permission(c.owner, c.repo, c.author.login);
    permissions.set(key, { permission, at: deps.now() });
    return permission;
  }

  const jobLink = (jobId: string) => `${publicBaseUrl(deps.config)}/jobs/${jobId}`;

  /** Acknowledges in the thread; a failure here is logged, not fatal: the work is already queued. */
  async function acknowledge(c: ThreadComment, text: string): Promise<void> {
    const work: Promise<unknown>[] = [github.reply(c.owner, c.repo, c.thread.number, `${OWN_MARKER}\n${text}`)];
    if (c.event === 'issue_comment') work.push(github.react(c.owner, c.repo, c.commentId, 'eyes'));
    for (const r of await Promise.allSettled(work)) {
      if (r.status === 'rejected') deps.logger.warn({ err: r.reason, thread: c.thread.url }, 'could not acknowledge a code-host comment');
    }
  }

  const ignored = (reason: string) => ({ outcome: 'ignored' as const, jobId: null, reason });

  async function act(project: ProjectWithSecret, c: ThreadComment, deliveryId: string): Promise<Omit<Receipt, 'deliveryId'>> {
    const handle = project.settings.codeHostHook?.handle ?? DEFAULT_HANDLE;
    if (c.author.isBot) return ignored(`${c.author.login} is a bot`);
    if (c.body.includes(OWN_MARKER)) return ignored("Inkwell's own comment");
    const idem = { key: `github-delivery:${deliveryId}`, method: 'POST', path: `/v1/hooks/github/${project.id}` };

    if (c.thread.kind === 'issue') {
      if (!mentions(c.body, handle)) return ignored(`the comment does not mention @${handle}`);
      if (!WRITERS.includes(await permissionOf(c))) return ignored(`${c.author.login} has no write access to ${c.owner}/${c.repo}`);
      const res = await deps.jobs.createJob(project, { prompt: issuePrompt(c), source: { repository: project.repository } }, idem);
      await acknowledge(c, `On it: started job [\`${res.job.id}\`](${jobLink(res.job.id)}). I will open a pull request and link it here.`);
      return { outcome: 'job_started', jobId: res.job.id, reason: null };
    }

    const jobId = await deps.jobs.findJobIdByPullRequest(project.id, c.thread.url);
    if (!jobId) return ignored('the pull request was not opened by an Inkwell job of this project');
    const stop = isStopCommand(c.body, handle);
    let lineComments: ReviewLineComment[] = [];
    if (!stop && c.event === 'pull_request_review') lineComments = await github.reviewComments(c.owner, c.repo, c.thread.number, c.commentId);
    if (!stop && !mentions(c.body, handle) && !lineComments.some((l) => mentions(l.body, handle)))
      return ignored(`the ${c.event === 'pull_request_review' ? 'review' : 'comment'} does not mention @${handle}`);
    if (!WRITERS.includes(await permissionOf(c))) return ignored(`${c.author.login} has no write access to ${c.owner}/${c.repo}`);
    if (stop) {
      await deps.jobs.archiveJob(project.id, jobId);
      await acknowledge(c, `Stopped: job [\`${jobId}\`](${jobLink(jobId)}) is archived and takes no more messages.`);
      return { outcome: 'job_archived', jobId, reason: null };
    }
    try {
      await deps.jobs.sendMessage(project.id, jobId, followUpPrompt(c, lineComments), idem);
    } catch (err) {
      if (err instanceof AppError && err.code === 'job_archived') {
        await acknowledge(
          c,
          `Job [\`${jobId}\`](${jobLink(jobId)}) is archived: it takes no more messages. Mention @${handle} on an issue to start a new one.`,
        );
        return ignored('the job is archived');
      }
      throw err;
    }
    await acknowledge(c, `On it: job [\`${jobId}\`](${jobLink(jobId)}) continues on this pull request's branch.`);
    return { outcome: 'message_queued', jobId, reason: null };
  }

  return {
    /** One GitHub delivery: verified, checked against the project's repositories, acted on once. */
    async receiveGitHub(projectId: string, d: GitHubDelivery): Promise<Receipt> {
      const project = await deps.projects.getProject(projectId);
      if (!project) throw new AppError('project_not_found');
      if (!githubSignatureValid(secretOf(project), d.rawBody, d.signature)) {
        throw new AppError('unauthorized', 'X-Hub-Signature-256 is missing or does not match the secret given to the repository');
      }
      if (!d.event) throw new AppError('invalid_request', 'X-GitHub-Event is missing', [{ message: 'required', path: 'x-github-event' }]);
      if (!d.deliveryId || !/^[\w-]{1,100}$/.test(d.deliveryId)) {
        throw new AppError('invalid_request', 'X-GitHub-Delivery is missing or malformed', [
          { message: 'required: 1–100 letters, digits, - or _', path: 'x-github-delivery' },
        ]);
      }
      let payload: unknown;
      try {
        payload = JSON.parse(d.rawBody.toString('utf8'));
      } catch {
        throw new AppError('invalid_json', 'The delivery is not JSON: choose "application/json" as the content type of the webhook');
      }
      const parsed = parseGitHubDelivery(d.event, payload);
      const deliveryId = d.deliveryId;
      if (parsed.kind === 'ping') return { deliveryId, outcome: 'ping', jobId: null, reason: null };
      if (parsed.kind === 'ignored') return { deliveryId, outcome: 'ignored', jobId: null, reason: parsed.reason };
      const c = parsed.comment;
      if (!repositoryAllowed(project, c.repositoryUrl)) {
        throw new AppError('repository_not_allowed', `The delivery is about ${c.owner}/${c.repo}, which is not this project's repository`);
      }
      const key = { project_id: projectId, host: 'github' as const, delivery_id: deliveryId };
      if (!(await deps.store.claim({ ...key, event: d.event, received_at: deps.now() }))) {
        return { deliveryId, outcome: 'duplicate', jobId: (await deps.store.get(key))?.job_id ?? null, reason: 'this delivery was received before' };
      }
      try {
        const done = await act(project, c, deliveryId);
        await deps.store.finish(key, done.outcome, done.jobId, done.reason);
        return { deliveryId, ...done };
      } catch (err) {
        // Not acted on: a redelivery must get its chance (the job's idempotency key keeps a retry from doubling it).
        await deps.store.release(key);
        if (err instanceof HostError) throw new AppError('code_host_unavailable', err.message);
        throw err;
      }
    },
  };
}

export type CodeHostEvents = ReturnType<typeof createCodeHostEvents>;
