// GitLab (gitlab.com or self-managed at GITLAB_URL) merge requests through @gitbeaker/rest.
// Auth: GITLAB_TOKEN, sent as the PRIVATE-TOKEN header; it never appears in a returned URL or error.
// Rate limits and transient failures: see retry.ts. Gitbeaker cannot be configured to wait as GitLab asks: its
// request handler retries 429 and 502 ten times within about a quarter of a second (fixed in the code, ignoring
// Retry-After) and then drops the response, and its `rateLimits` option only paces requests on our side. Its
// requester is replaceable (createRequesterFn): ours sends each request once (otherwise the same as gitbeaker's)
// and leaves the waiting to withHostRetry.
import { createRequesterFn, type FormattedResponse, GitbeakerRequestError, GitbeakerTimeoutError } from '@gitbeaker/requester-utils';
import { Gitlab } from '@gitbeaker/rest';
import type { Config } from '../config.ts';
import { scrubSecrets } from '../lib/logger.ts';
import { parseRetryAfter } from '../lib/wait.ts';
import { parseRepository } from './detect.ts';
import { type HostDeps, HostError, type HostFailure, WaitBudget, withHostRetry } from './retry.ts';
import type { CodeHost, EnsurePullRequestInput, PullRequestComment, PullRequestRef, PullRequestTarget, PullRequestUpdate } from './types.ts';

/** True for repositories on gitlab.com or on the host of GITLAB_URL (https, ssh or scp-style remotes). */
export function isGitLabRepository(repository: string, config: Config): boolean {
  return parseRepository(repository, config).kind === 'gitlab';
}

/** The project path (`group/sub/repo`) of a GitLab repository URL, or null when it is not one. */
export function gitlabProjectPath(repository: string, config: Config): string | null {
  const loc = parseRepository(repository, config);
  return loc.kind === 'gitlab' ? loc.projectPath : null;
}

interface MergeRequestLike {
  iid: number;
  web_url: string;
  source_branch?: string;
  title?: string;
  description?: string | null;
  draft?: boolean;
  work_in_progress?: boolean;
}

const DRAFT_PREFIX = 'Draft: ';
/** Pages of the newest 100 notes looked through for a note's marker. */
const MAX_NOTE_PAGES = 3;

/** The prefixes that make a GitLab merge request a draft (GitLab's own list, any case). */
const DRAFT_TITLE = /^\s*(\[draft\]|\(draft\)|draft:|draft\s+-|\[wip\]|wip:)\s*/i;

function mrTitle(title: string, draft: boolean | undefined): string {
  const t = title.trim() || 'Inkwell changes';
  if (!draft || /^(draft|wip)\s*:/i.test(t) || /^\[(draft|wip)\]/i.test(t)) return t;
  return `${DRAFT_PREFIX}${t}`;
}

/** A title without its draft prefixes (every one of them: `Draft: Draft: x` is a draft too). */
export function readyTitle(title: string): string {
  let t = title;
  while (DRAFT_TITLE.test(t)) t = t.replace(DRAFT_TITLE, '');
  return t.trim() || 'Inkwell changes';
}

/** A failure's message for an error or log: the HTTP status and GitLab's description, never the token. */
export function describeGitLabError(err: unknown, token: string | undefined): string {
  const e = err as { message?: string; cause?: { description?: unknown; response?: { status?: number } } };
  const status = e.cause?.response?.status;
  const description = typeof e.cause?.description === 'string' && e.cause.description ? e.cause.description : (e.message ?? String(err));
  let text = scrubSecrets(`${status ? `HTTP ${status}: ` : ''}${description}`);
  if (token) text = text.split(token).join('[redacted]');
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

function statusOf(err: unknown): number | undefined {
  return (err as { cause?: { response?: { status?: number } } }).cause?.response?.status;
}

/** One request, no retries (gitbeaker's default handler without its retry loop). */
async function requestOnce(endpoint: string, options?: Record<string, unknown>): Promise<FormattedResponse> {
  const { rateLimiters: _r, agent: _a, asStream, prefixUrl, searchParams, method, ...opts } = (options ?? {}) as Record<string, any>;
  const base = typeof prefixUrl === 'string' ? (prefixUrl.endsWith('/') ? prefixUrl : `${prefixUrl}/`) : undefined;
  const url = new URL(endpoint, base);
  url.search = searchParams || '';
  const request = new Request(url, { ...opts, method });
  const response = await fetch(request).catch((e: unknown) => {
    const name = (e as { name?: string })?.name;
    if (name === 'TimeoutError' || name === 'AbortError') throw new GitbeakerTimeoutError('Query timeout was reached');
    throw e;
  });
  const headers = Object.fromEntries(response.headers.entries());
  if (response.ok) {
    if (asStream) return { body: response.body as never, headers, status: response.status };
    const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
    let body: unknown = null;
    if (response.status !== 204)
      body = type === 'application/json' ? ((await response.json()) ?? {}) : type.startsWith('text/') ? await response.text() : await response.blob();
    return { body: body as never, headers, status: response.status };
  }
  const content = await response.text();
  let description: string = content;
  if (response.headers.get('content-type')?.includes('application/json')) {
    try {
      const output = JSON.parse(content);
      const property = output?.error || output?.message || '';
      description = typeof property === 'string' ? property : JSON.stringify(property);
    } catch {
      description = content;
    }
  }
  throw new GitbeakerRequestError(description, { cause: { description, request, response } });
}

/**
 * GitLab's rate limits answer 429 with `Retry-After` (seconds) and `RateLimit-Reset` (epoch seconds); without
 * either, wait a minute. 5xx, timeouts and network failures are transient; anything else is final.
 */
export function gitlabFailure(err: unknown, limitedBefore: number, now: number): HostFailure {
  const response = (err as { cause?: { response?: { status?: number; headers?: Headers } } }).cause?.response;
  const status = response?.status;
  const header = (name: string) => response?.headers?.get?.(name) ?? undefined;
  const retryAfter = parseRetryAfter(header('retry-after'), now);
  if (status === 429) {
    if (retryAfter !== null) return { kind: 'rate_limited', waitMs: Math.max(retryAfter, 1000), reason: `HTTP 429 with Retry-After ${header('retry-after')}` };
    const reset = Number(header('ratelimit-reset'));
    if (Number.isFinite(reset) && reset > 0) {
      return { kind: 'rate_limited', waitMs: Math.max(0, reset * 1000 - now) + 1000, reason: `HTTP 429 (resets at ${new Date(reset * 1000).toISOString()})` };
    }
    return { kind: 'rate_limited', waitMs: 60_000 * 2 ** limitedBefore, reason: 'HTTP 429' };
  }
  if (status !== undefined)
    return status === 500 || status >= 502 ? { kind: 'transient', ...(retryAfter !== null ? { waitMs: retryAfter } : {}) } : { kind: 'fatal' };
  if (err instanceof GitbeakerTimeoutError) return { kind: 'transient' };
  // No response at all: connection refused or reset, DNS.
  return (err as { name?: string })?.name === 'TypeError' ? { kind: 'transient' } : { kind: 'fatal' };
}

/** A gitbeaker client for GITLAB_URL with GITLAB_TOKEN that sends each request once (retries are withHostRetry's). */
export function gitlabApi(config: Pick<Config, 'hosts'>) {
  return new Gitlab({
    host: config.hosts.gitlabUrl,
    token: config.hosts.gitlabToken ?? '',
    queryTimeout: 30_000,
    requesterFn: createRequesterFn((_, options) => Promise.resolve(options), requestOnce),
  });
}

export function createGitLabHost(config: Config, deps: HostDeps = {}): CodeHost {
  const token = config.hosts.gitlabToken;
  const api = gitlabApi(config);

  async function findOpen(projectPath: string, branch: string): Promise<PullRequestRef | null> {
    const list = (await api.MergeRequests.all({
      projectId: projectPath,
      sourceBranch: branch,
      state: 'opened',
      perPage: 20,
      maxPages: 1,
    })) as unknown as MergeRequestLike[];
    const mr = list.find((m) => m.source_branch === undefined || m.source_branch === branch);
    return mr ? { url: mr.web_url, number: mr.iid, draft: mr.draft ?? mr.work_in_progress ?? false, body: mr.description ?? null } : null;
  }

  /** The project path of a GitLab repository with the token set, or the HostError saying why not. */
  function locate(repository: string): string {
    const projectPath = gitlabProjectPath(repository, config);
    if (!projectPath) throw new HostError(`not a GitLab repository: ${scrubSecrets(repository)}`);
    if (!token) throw new HostError('GITLAB_TOKEN is not set: it is needed to open merge requests on GitLab');
    return projectPath;
  }

  /** Runs `step` with withHostRetry under one INKWELL_HOST_MAX_WAIT_MS budget; a failure is a HostError naming `what`. */
  async function perform<T>(what: string, signal: AbortSignal | undefined, step: () => Promise<T>): Promise<T> {
    try {
      const budget = new WaitBudget({ ...deps, host: 'GitLab', what, maxWaitMs: config.hosts.maxWaitMs, signal });
      return await withHostRetry(step, budget, signal, gitlabFailure);
    } catch (err) {
      if (err instanceof HostError || signal?.aborted) throw err;
      throw new HostError(`GitLab ${what} failed: ${describeGitLabError(err, token)}`);
    }
  }

  return {
    kind: 'gitlab',
    async ensurePullRequest(input: EnsurePullRequestInput): Promise<PullRequestRef | null> {
      const projectPath = locate(input.repository);
      // Look up, else create — retried as a whole, so a create whose answer was lost is found, not repeated.
      return perform(`merge request for ${projectPath} branch ${input.branch}`, input.signal, async (): Promise<PullRequestRef> => {
        const existing = await findOpen(projectPath, input.branch);
        if (existing) return { ...existing, created: false };
        try {
          const created = (await api.MergeRequests.create(projectPath, input.branch, input.base, mrTitle(input.title, input.draft), {
            description: input.body,
          })) as unknown as MergeRequestLike;
          return { url: created.web_url, number: created.iid, created: true };
        } catch (err) {
          // GitLab answers 409 when an open merge request for the source branch appeared meanwhile: reuse it.
          if (statusOf(err) === 409) {
            const again = await findOpen(projectPath, input.branch);
            if (again) return { ...again, created: false };
          }
          throw err;
        }
      });
    },
    async updatePullRequest(input: PullRequestUpdate): Promise<void> {
      const projectPath = locate(input.repository);
      // A title without `Draft:` would make a draft ready: a draft keeps the prefix.
      const title = input.title ? { title: mrTitle(input.title, input.draft) } : {};
      await perform(`description of merge request ${projectPath}!${input.number}`, input.signal, () =>
        api.MergeRequests.edit(projectPath, input.number, { description: input.body, ...title }),
      );
    },
    async markPullRequestReady(input: PullRequestTarget): Promise<void> {
      const projectPath = locate(input.repository);
      await perform(`ready state of merge request ${projectPath}!${input.number}`, input.signal, async () => {
        const mr = (await api.MergeRequests.show(projectPath, input.number)) as unknown as MergeRequestLike;
        if (!(mr.draft ?? mr.work_in_progress) && !DRAFT_TITLE.test(mr.title ?? '')) return;
        await api.MergeRequests.edit(projectPath, input.number, { title: readyTitle(mr.title ?? '') });
      });
    },
    async commentOnPullRequest(input: PullRequestComment): Promise<boolean> {
      const projectPath = locate(input.repository);
      // Look up, else post — retried as a whole, so a note whose answer was lost is found, not posted twice.
      return perform(`note on merge request ${projectPath}!${input.number}`, input.signal, async () => {
        if (input.marker) {
          const notes = (await api.MergeRequestNotes.all(projectPath, input.number, {
            sort: 'desc',
            orderBy: 'created_at',
            perPage: 100,
            maxPages: MAX_NOTE_PAGES,
          })) as unknown as { body?: string }[];
          if (notes.some((n) => n.body?.includes(input.marker!))) return false;
        }
        await api.MergeRequestNotes.create(projectPath, input.number, input.body);
        return true;
      });
    },
  };
}
