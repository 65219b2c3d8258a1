// GitHub (github.com or Enterprise Server) pull requests through Octokit. Auth: GITHUB_TOKEN.
// Waiting is Octokit's: the throttling plugin recognises GitHub's rate limits ("Rate limits for the REST API":
// a 403/429 with x-ratelimit-remaining 0 waits until x-ratelimit-reset plus a second; one saying "secondary rate
// limit" waits its retry-after, else a minute) and paces writes; the retry plugin retries 5xx and network
// failures twice. Inkwell decides, per step, whether a rate-limit wait fits INKWELL_HOST_MAX_WAIT_MS and does
// that wait itself, so a stopped run ends it and tests can replace the clock.
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';
import Bottleneck from 'bottleneck';
import type { Config } from '../config.ts';
import { scrubSecrets } from '../lib/logger.ts';
import { parseRepository } from './detect.ts';
import { type HostDeps, HostError, WaitBudget } from './retry.ts';
import type { CodeHost, EnsurePullRequestInput, PullRequestComment, PullRequestRef, PullRequestTarget, PullRequestUpdate } from './types.ts';

function describe(err: unknown): string {
  const e = err as { status?: number; message?: string; response?: { data?: { message?: string; errors?: Array<{ message?: string }> } } };
  const parts = [e.response?.data?.message ?? e.message ?? String(err)];
  for (const x of e.response?.data?.errors ?? []) if (x.message) parts.push(x.message);
  return scrubSecrets(`${e.status ? `HTTP ${e.status}: ` : ''}${parts.join('; ')}`);
}

const GitHub = Octokit.plugin(retry, throttling);

/**
 * The pacing of requests that create content GitHub notifies people about (pull requests, comments), one
 * limiter per GitHub instance and interval. The throttling plugin's own spaces them 3 s apart (20 a minute),
 * which made 50 concurrent jobs open 20 pull requests a minute (bench/jobs.ts) with worker slots waiting;
 * GitHub's documented floor is a second between writes, and its secondary limit allows 80 creations a minute.
 * The plugin keeps its write pacing (a second) and its reactions to GitHub's rate-limit answers.
 */
const creationLimiters = new Map<string, Bottleneck.Group>();
function creationLimiter(apiUrl: string, intervalMs: number): Bottleneck.Group {
  const key = `${apiUrl}\0${intervalMs}`;
  let group = creationLimiters.get(key);
  if (!group) {
    group = new Bottleneck.Group({ id: `inkwell-github-creations-${creationLimiters.size}`, maxConcurrent: 1, minTime: intervalMs });
    creationLimiters.set(key, group);
  }
  return group;
}

/**
 * When to retry after a used-up primary limit: the reset GitHub named plus the second the plugin adds. (The
 * plugin's wait is rounded to whole seconds from its own clock reading, so the reading plus the wait can be a
 * second off.)
 */
function primaryResetOf(err: unknown): Date | undefined {
  const headers = (err as { response?: { headers?: Record<string, string | number | undefined> } }).response?.headers;
  const reset = Number(headers?.['x-ratelimit-reset']);
  return String(headers?.['x-ratelimit-remaining']) === '0' && reset > 0 ? new Date(reset * 1000 + 1000) : undefined;
}

const MARK_READY = 'mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }';

/** Pages of 100 comments looked through for a comment's marker (a pull request with more is not a docs change). */
const MAX_COMMENT_PAGES = 10;

/** 5xx and network failures: retried twice, after (n + 1)² × this (0.5 s, then 2 s). */
const RETRY_BASE_MS = 500;

/** Resolves or rejects as `work` does, or rejects with the signal's reason as soon as it aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export function createGitHubHost(config: Config, deps: HostDeps = {}): CodeHost {
  const token = config.hosts.githubToken;

  /** A client for one pull-request step: its rate-limit waits come out of `budget`. */
  function client(budget: WaitBudget) {
    return new GitHub({
      auth: token,
      baseUrl: config.hosts.githubApiUrl,
      userAgent: 'inkwell',
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
      // 429 is the throttling plugin's to wait for (as a rate limit), not a failure to retry blindly.
      retry: { retries: 2, retryAfterBaseValue: RETRY_BASE_MS, doNotRetry: [400, 401, 403, 404, 410, 422, 429, 451] },
      throttle: {
        // Writes are paced per GitHub instance, not per step: every client of this instance shares the limiters
        // by this id (pull-request creations: INKWELL_GITHUB_CREATE_INTERVAL_MS apart, see creationLimiter).
        id: config.hosts.githubApiUrl,
        notifications: creationLimiter(config.hosts.githubApiUrl, config.hosts.githubCreateIntervalMs),
        // The handlers below have already waited (abortably) when they ask for the retry: nothing is left to wait.
        retryAfterBaseValue: 0,
        onRateLimit: (retryAfter: number) => budget.rateLimited(retryAfter * 1000, 'primary rate limit used up (x-ratelimit-remaining 0)'),
        onSecondaryRateLimit: (retryAfter: number) => budget.rateLimited(retryAfter * 1000, `secondary rate limit (wait ${retryAfter} s)`),
      },
    });
  }

  async function findOpen(
    octokit: InstanceType<typeof GitHub>,
    owner: string,
    repo: string,
    branch: string,
    signal: AbortSignal | undefined,
  ): Promise<PullRequestRef | null> {
    const res = await octokit.rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: 'open', per_page: 10, request: { signal } });
    const pr = res.data.find((p) => p.head?.ref === branch) ?? res.data[0];
    return pr ? { url: pr.html_url, number: pr.number, draft: pr.draft === true, body: pr.body ?? null } : null;
  }

  /** True when a comment on the pull request carries `marker` (its first MAX_COMMENT_PAGES pages of 100). */
  async function hasComment(
    octokit: InstanceType<typeof GitHub>,
    owner: string,
    repo: string,
    number: number,
    marker: string,
    signal: AbortSignal | undefined,
  ) {
    let pages = 0;
    const list = octokit.paginate.iterator(octokit.rest.issues.listComments, { owner, repo, issue_number: number, per_page: 100, request: { signal } });
    for await (const page of list) {
      if (page.data.some((c) => c.body?.includes(marker))) return true;
      if (++pages >= MAX_COMMENT_PAGES) break;
    }
    return false;
  }

  /** `loc` of a GitHub repository with the token set, or the HostError saying why not. */
  function locate(repository: string): { owner: string; repo: string } {
    const loc = parseRepository(repository, config);
    if (loc.kind !== 'github') throw new HostError(`not a GitHub repository: ${repository}`);
    if (!token) throw new HostError('GITHUB_TOKEN is not set: it is needed to open pull requests on GitHub');
    return { owner: loc.owner, repo: loc.repo };
  }

  /**
   * Runs one step with a client whose rate-limit waits come out of one INKWELL_HOST_MAX_WAIT_MS budget; ends
   * the moment the run stops; a failure is a HostError naming `what`.
   */
  async function perform<T>(
    what: string,
    signal: AbortSignal | undefined,
    step: (octokit: InstanceType<typeof GitHub>, budget: WaitBudget) => Promise<T>,
  ): Promise<T> {
    const budget = new WaitBudget({ ...deps, host: 'GitHub', what, maxWaitMs: config.hosts.maxWaitMs, signal });
    try {
      // A retry of a 5xx waits in the retry plugin's timer: the step still ends the moment the run stops.
      return await untilAborted(step(client(budget), budget), signal);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      // A rate-limit wait the budget refused ends the plugin's retries with the host's answer: say why instead.
      const refusal = budget.refusal(primaryResetOf(err));
      if (refusal) throw refusal;
      if (err instanceof HostError) throw err;
      throw new HostError(`GitHub ${what} failed: ${describe(err)}`);
    }
  }

  return {
    kind: 'github',
    async ensurePullRequest(input: EnsurePullRequestInput): Promise<PullRequestRef | null> {
      const { owner, repo } = locate(input.repository);
      const signal = input.signal;
      // Look up, else create. Each request is retried on its own; a create retried after its answer was lost
      // meets GitHub's 422 for the existing pull request, which the lookup then finds.
      return perform(`pull request for ${owner}/${repo} branch ${input.branch}`, signal, async (octokit) => {
        const existing = await findOpen(octokit, owner, repo, input.branch, signal);
        if (existing) return { ...existing, created: false };
        try {
          const created = await octokit.rest.pulls.create({
            owner,
            repo,
            head: input.branch,
            base: input.base,
            title: input.title,
            body: input.body,
            draft: input.draft ?? false,
            request: { signal },
          });
          return { url: created.data.html_url, number: created.data.number, created: true };
        } catch (err) {
          // Another run opened it between our lookup and create: reuse it.
          if ((err as { status?: number }).status === 422) {
            const again = await findOpen(octokit, owner, repo, input.branch, signal);
            if (again) return { ...again, created: false };
          }
          throw err;
        }
      });
    },
    async updatePullRequest(input: PullRequestUpdate): Promise<void> {
      const { owner, repo } = locate(input.repository);
      const title = input.title ? { title: input.title } : {};
      await perform(`body of pull request ${owner}/${repo}#${input.number}`, input.signal, (octokit) =>
        octokit.rest.pulls.update({ owner, repo, pull_number: input.number, body: input.body, ...title, request: { signal: input.signal } }),
      );
    },
    async markPullRequestReady(input: PullRequestTarget): Promise<void> {
      const { owner, repo } = locate(input.repository);
      // REST's pulls.update ignores `draft`: only the GraphQL mutation, with the pull request's node id, does it.
      await perform(`ready for review of pull request ${owner}/${repo}#${input.number}`, input.signal, async (octokit) => {
        const pr = await octokit.rest.pulls.get({ owner, repo, pull_number: input.number, request: { signal: input.signal } });
        if (!pr.data.draft) return;
        await octokit.graphql(MARK_READY, { id: pr.data.node_id, request: { signal: input.signal } });
      });
    },
    async commentOnPullRequest(input: PullRequestComment): Promise<boolean> {
      const { owner, repo } = locate(input.repository);
      return perform(`comment on pull request ${owner}/${repo}#${input.number}`, input.signal, async (octokit, budget) => {
        // With a marker, a 5xx or network failure is retried as lookup-then-post (not by the retry plugin, which
        // would post again a comment whose answer was lost).
        for (let retry = 0; ; retry++) {
          if (input.marker && (await hasComment(octokit, owner, repo, input.number, input.marker, input.signal))) return false;
          try {
            const request = { signal: input.signal, ...(input.marker ? { retries: 0 } : {}) };
            await octokit.rest.issues.createComment({ owner, repo, issue_number: input.number, body: input.body, request });
            return true;
          } catch (err) {
            const status = (err as { status?: number }).status;
            const transient = status === undefined || status >= 500;
            if (!input.marker || !transient || retry >= 2 || input.signal?.aborted) throw err;
            await budget.transient(RETRY_BASE_MS * (retry + 1) ** 2, describe(err));
          }
        }
      });
    },
  };
}
