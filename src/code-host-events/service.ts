// Code-host events → jobs: a comment that mentions the project's handle on an issue starts a job; a comment
// or review on a pull request an Inkwell job opened becomes a follow-up message on that job (`@handle stop`
// archives it). Only people with write access trigger anything (asked of the host, remembered briefly);
// bots and Inkwell's own replies never do. Each delivery id acts once.
import crypto from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import { parseRepository } from '../hosts/detect.ts';
import type { GitHubThreads, ReviewLineComment } from '../hosts/github-threads.ts';
import type { GitLabThreads } from '../hosts/gitlab-threads.ts';
import { HostError } from '../hosts/retry.ts';
import type { JobService, OnStored } from '../jobs/service.ts';
import { publicBaseUrl } from '../lib/public-url.ts';
import { repositoryAllowed } from '../projects/repository.ts';
import type { ProjectService, ProjectWithSecret } from '../projects/service.ts';
import { type ParsedDelivery, parseGitHubDelivery, type ThreadComment } from './github-payload.ts';
import { parseGitLabDelivery } from './gitlab-payload.ts';
import { followUpPrompt, isStopCommand, issuePrompt, mentions, OWN_MARKER } from './mention.ts';
import { createTurnReplies, jobLink as linkOf } from './replies.ts';
import { hookSecret, ServerSecretError, serverSecret } from './secret.ts';
import { createDeliveriesStore, type DeliveriesStore } from './store.ts';
import { type ThreadHost, threadHosts } from './thread-hosts.ts';
import { githubSignatureValid, gitlabTokenValid } from './verify.ts';

export const DEFAULT_HANDLE = 'inkwell';

const DELIVERY_ID_RE = /^[\w-]{1,100}$/;

/**
 * A delivery being acted on for longer than this was left by a process that stopped mid-way (acting takes a few
 * host requests, each bounded): a redelivery takes it over instead of being answered `duplicate` forever.
 */
const STALE_CLAIM_MS = 5 * 60_000;

/** How long a commenter's permission is remembered (a revoked collaborator is refused at most this late). */
const PERMISSION_TTL_MS = 60_000;

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
  /** The GitLab thread API (tests point it at a local fake through GITLAB_URL). */
  gitlab?: GitLabThreads;
}

export type CodeHostName = 'github' | 'gitlab';

export interface GitHubDelivery {
  event: string | undefined;
  deliveryId: string | undefined;
  signature: string | undefined;
  rawBody: Buffer;
}

export interface GitLabDelivery {
  /** X-Gitlab-Event. */
  event: string | undefined;
  /** X-Gitlab-Token: the secret itself. */
  token: string | undefined;
  /** Idempotency-Key (GitLab 17.4+: the same for every retry of one event); absent, the body's hash stands in. */
  idempotencyKey: string | undefined;
  rawBody: Buffer;
}

/** The events to tick in the repository's webhook settings, per host. */
export const HOOK_EVENTS: Record<CodeHostName, readonly string[]> = {
  github: ['Issue comments', 'Pull request reviews'],
  gitlab: ['Comments'],
};

/** The code host a project's repository is on: GitLab's when it is on GITLAB_URL's host, else GitHub's. */
export function hookHostOf(repository: string, config: Pick<Config, 'hosts'>): CodeHostName {
  return parseRepository(repository, config).kind === 'gitlab' ? 'gitlab' : 'github';
}

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
): Promise<{ url: string; secret: string; handle: string; host: CodeHostName; events: readonly string[] }> {
  const codeHostHook = { generation: crypto.randomBytes(16).toString('hex'), handle };
  const secret = hookSecret(serverSecret(deps.config), projectId, codeHostHook.generation);
  const project = await deps.projects.updateSettings(projectId, { codeHostHook }).then(() => deps.projects.getProject(projectId));
  const host = hookHostOf(project?.repository ?? '', deps.config);
  return { url: `${publicBaseUrl(deps.config)}/v1/hooks/${host}/${projectId}`, secret, handle, host, events: HOOK_EVENTS[host] };
}

export function createCodeHostEvents(deps: CodeHostEventsDeps) {
  const hosts: Record<CodeHostName, ThreadHost> = threadHosts(deps.config, deps);
  const writers = new Map<string, { canWrite: boolean; at: number }>();

  /**
   * The project's hook secret, or null when the project is unknown or takes no code-host webhooks. Both answer
   * exactly like a wrong signature (401, same text), so a caller without the secret learns nothing about which
   * project ids exist or have hooks; the log says which it was.
   */
  function secretOf(projectId: string, project: ProjectWithSecret | undefined): string | null {
    const hook = project?.settings.codeHostHook;
    if (!project || !hook) {
      deps.logger.info({ projectId, reason: project ? 'no code-host webhook set' : 'unknown project' }, 'code-host delivery refused');
      return null;
    }
    try {
      return hookSecret(serverSecret(deps.config), project.id, hook.generation);
    } catch (err) {
      if (err instanceof ServerSecretError) throw new AppError('not_ready', `Code-host webhooks are not configured on this server: ${err.message}`);
      throw err;
    }
  }

  /** Whether the commenter may push to the repository, asked of the host and remembered for PERMISSION_TTL_MS. */
  async function canWrite(c: ThreadComment): Promise<boolean> {
    const key = `${c.host}\0${c.owner}/${c.repo}\0${c.author.id ?? c.author.login}`.toLowerCase();
    const known = writers.get(key);
    if (known && deps.now() - known.at < PERMISSION_TTL_MS) return known.canWrite;
    const answer = await hosts[c.host].canWrite(c);
    writers.set(key, { canWrite: answer, at: deps.now() });
    return answer;
  }

  const jobLink = (jobId: string) => linkOf(deps.config, jobId);

  /** The thread the job replies in when a turn ends: this comment's (stored with the job or message). */
  const rememberThread =
    (c: ThreadComment): OnStored =>
    (tx, jobId) =>
      createDeliveriesStore(tx.kysely).rememberThread({
        job_id: jobId,
        host: c.host,
        owner: c.owner,
        repo: c.repo,
        kind: c.thread.kind,
        number: c.thread.number,
        updated_at: deps.now(),
      });

  /** Acknowledges in the thread; a failure here is logged, not fatal: the work is already queued. */
  async function acknowledge(c: ThreadComment, text: string): Promise<void> {
    const host = hosts[c.host];
    for (const r of await Promise.allSettled([host.reply(c, `${OWN_MARKER}\n${text}`), host.react(c)])) {
      if (r.status === 'rejected') deps.logger.warn({ err: r.reason, thread: c.thread.url }, 'could not acknowledge a code-host comment');
    }
  }

  const ignored = (reason: string) => ({ outcome: 'ignored' as const, jobId: null, reason });

  const noWriteAccess = (c: ThreadComment) => ignored(`${c.author.login} has no write access to ${c.owner}/${c.repo}`);

  async function act(project: ProjectWithSecret, c: ThreadComment, deliveryId: string): Promise<Omit<Receipt, 'deliveryId'>> {
    const handle = project.settings.codeHostHook?.handle ?? DEFAULT_HANDLE;
    if (c.author.isBot) return ignored(`${c.author.login} is a bot`);
    if (c.body.includes(OWN_MARKER)) return ignored("Inkwell's own comment");
    const idem = { key: `${c.host}-delivery:${deliveryId}`, method: 'POST', path: `/v1/hooks/${c.host}/${project.id}` };

    if (c.thread.kind === 'issue') {
      if (!mentions(c.body, handle)) return ignored(`the comment does not mention @${handle}`);
      if (!(await canWrite(c))) return noWriteAccess(c);
      const input = { prompt: issuePrompt(c), source: { repository: project.repository } };
      const res = await deps.jobs.createJob(project, input, idem, undefined, rememberThread(c));
      await acknowledge(c, `On it: started job [\`${res.job.id}\`](${jobLink(res.job.id)}). I will open a pull request and link it here.`);
      return { outcome: 'job_started', jobId: res.job.id, reason: null };
    }

    const jobId = await deps.jobs.findJobIdByPullRequest(project.id, c.thread.url);
    if (!jobId) return ignored('the pull request was not opened by an Inkwell job of this project');
    const stop = isStopCommand(c.body, handle);
    const lineComments: ReviewLineComment[] = stop ? [] : await hosts[c.host].lineComments(c);
    if (!stop && !mentions(c.body, handle) && !lineComments.some((l) => mentions(l.body, handle)))
      return ignored(`the ${c.event === 'pull_request_review' ? 'review' : 'comment'} does not mention @${handle}`);
    if (!(await canWrite(c))) return noWriteAccess(c);
    if (stop) {
      await deps.jobs.archiveJob(project.id, jobId);
      await acknowledge(c, `Stopped: job [\`${jobId}\`](${jobLink(jobId)}) is archived and takes no more messages.`);
      return { outcome: 'job_archived', jobId, reason: null };
    }
    try {
      await deps.jobs.sendMessage(project.id, jobId, followUpPrompt(c, lineComments), idem, undefined, rememberThread(c));
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

  function parseJson(rawBody: Buffer): unknown {
    try {
      return JSON.parse(rawBody.toString('utf8'));
    } catch {
      throw new AppError('invalid_json', 'The delivery is not JSON: choose "application/json" as the content type of the webhook');
    }
  }

  /** A verified delivery: checked against the project's repositories, then acted on once per delivery id. */
  async function handle(project: ProjectWithSecret, host: CodeHostName, event: string, deliveryId: string, parsed: ParsedDelivery): Promise<Receipt> {
    if (parsed.kind === 'ping') return { deliveryId, outcome: 'ping', jobId: null, reason: null };
    if (parsed.kind === 'ignored') return { deliveryId, outcome: 'ignored', jobId: null, reason: parsed.reason };
    const c = parsed.comment;
    if (!repositoryAllowed(project, c.repositoryUrl)) {
      throw new AppError('repository_not_allowed', `The delivery is about ${c.owner}/${c.repo}, which is not this project's repository`);
    }
    const key = { project_id: project.id, host, delivery_id: deliveryId };
    const now = deps.now();
    if (!(await deps.store.claim({ ...key, event, received_at: now }, now - STALE_CLAIM_MS))) {
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
  }

  return {
    /** For the worker: replies in the thread of a job started or continued from a comment when a turn of it ends. */
    onTurnEnded: createTurnReplies({ ...deps, hosts }),

    /** One GitHub delivery: verified, checked against the project's repositories, acted on once. */
    async receiveGitHub(projectId: string, d: GitHubDelivery): Promise<Receipt> {
      const project = await deps.projects.getProject(projectId);
      const secret = secretOf(projectId, project);
      if (!project || secret === null || !githubSignatureValid(secret, d.rawBody, d.signature)) {
        throw new AppError('unauthorized', 'X-Hub-Signature-256 is missing or does not match the secret given to the repository');
      }
      if (!d.event) throw new AppError('invalid_request', 'X-GitHub-Event is missing', [{ message: 'required', path: 'x-github-event' }]);
      if (!d.deliveryId || !DELIVERY_ID_RE.test(d.deliveryId)) {
        throw new AppError('invalid_request', 'X-GitHub-Delivery is missing or malformed', [
          { message: 'required: 1–100 letters, digits, - or _', path: 'x-github-delivery' },
        ]);
      }
      return handle(project, 'github', d.event, d.deliveryId, parseGitHubDelivery(d.event, parseJson(d.rawBody)));
    },

    /** One GitLab delivery: its X-Gitlab-Token checked, then as GitHub's. */
    async receiveGitLab(projectId: string, d: GitLabDelivery): Promise<Receipt> {
      const project = await deps.projects.getProject(projectId);
      const secret = secretOf(projectId, project);
      if (!project || secret === null || !gitlabTokenValid(secret, d.token)) {
        throw new AppError('unauthorized', 'X-Gitlab-Token is missing or is not the secret token given to the project');
      }
      if (!d.event) throw new AppError('invalid_request', 'X-Gitlab-Event is missing', [{ message: 'required', path: 'x-gitlab-event' }]);
      if (d.idempotencyKey !== undefined && !DELIVERY_ID_RE.test(d.idempotencyKey)) {
        throw new AppError('invalid_request', 'Idempotency-Key is malformed', [{ message: '1–100 letters, digits, - or _', path: 'idempotency-key' }]);
      }
      // Before GitLab 17.4 there is no Idempotency-Key; a retry sends the same body, and two events never do.
      const deliveryId = d.idempotencyKey ?? crypto.createHash('sha256').update(d.rawBody).digest('hex');
      return handle(project, 'gitlab', d.event, deliveryId, parseGitLabDelivery(d.event, parseJson(d.rawBody)));
    },
  };
}

export type CodeHostEvents = ReturnType<typeof createCodeHostEvents>;
