// GitHub (github.com or Enterprise Server) pull requests through Octokit. Auth: GITHUB_TOKEN.
import { Octokit } from '@octokit/rest';
import type { Config } from '../config.ts';
import { scrubSecrets } from '../lib/logger.ts';
import { parseRetryAfter } from '../lib/wait.ts';
import { parseRepository } from './detect.ts';
import { type HostDeps, HostError, type HostFailure, SECONDARY_LIMIT_WAIT_MS, withHostRetry } from './retry.ts';
import type { CodeHost, EnsurePullRequestInput, PullRequestRef } from './types.ts';

export { HostError, HostRateLimitedError } from './retry.ts';

function describe(err: unknown): string {
  const e = err as { status?: number; message?: string; response?: { data?: { message?: string; errors?: Array<{ message?: string }> } } };
  const parts = [e.response?.data?.message ?? e.message ?? String(err)];
  for (const x of e.response?.data?.errors ?? []) if (x.message) parts.push(x.message);
  return scrubSecrets(`${e.status ? `HTTP ${e.status}: ` : ''}${parts.join('; ')}`);
}

/**
 * How GitHub asks to be waited for (docs.github.com, "Rate limits for the REST API"):
 *  - `retry-after` on a 403/429: wait that many seconds;
 *  - primary limit: 403/429 with `x-ratelimit-remaining: 0`: wait until `x-ratelimit-reset` (epoch seconds);
 *  - secondary limit without either header (a 429, or a 403 saying "secondary rate limit"): wait at least a
 *    minute, longer when it persists.
 * 5xx and network failures are transient; any other answer is final.
 */
export function githubFailure(err: unknown, limitedBefore: number, now: number): HostFailure {
  const e = err as { status?: number; message?: string; response?: { headers?: Record<string, string | number | undefined>; data?: { message?: string } } };
  const status = e.status;
  const headers = e.response?.headers ?? {};
  const header = (name: string) => (headers[name] === undefined ? undefined : String(headers[name]));
  const message = String(e.response?.data?.message ?? e.message ?? '');
  const retryAfter = parseRetryAfter(header('retry-after'), now);
  if (status === 403 || status === 429) {
    if (retryAfter !== null)
      return { kind: 'rate_limited', waitMs: Math.max(retryAfter, 1000), reason: `HTTP ${status} with retry-after ${header('retry-after')}` };
    const reset = Number(header('x-ratelimit-reset'));
    if (header('x-ratelimit-remaining') === '0' && Number.isFinite(reset) && reset > 0) {
      // One second past the reset: GitHub's clock and ours differ a little.
      return {
        kind: 'rate_limited',
        waitMs: Math.max(0, reset * 1000 - now) + 1000,
        reason: `primary rate limit used up (HTTP ${status}, resets at ${new Date(reset * 1000).toISOString()})`,
      };
    }
    if (status === 429 || /secondary rate limit|abuse detection/i.test(message)) {
      return { kind: 'rate_limited', waitMs: SECONDARY_LIMIT_WAIT_MS * 2 ** limitedBefore, reason: `secondary rate limit (HTTP ${status})` };
    }
    return { kind: 'fatal' };
  }
  if (status === undefined || status === 500 || status >= 502) return { kind: 'transient', ...(retryAfter !== null ? { waitMs: retryAfter } : {}) };
  return { kind: 'fatal' };
}

export function createGitHubHost(config: Config, deps: HostDeps = {}): CodeHost {
  const token = config.hosts.githubToken;
  const octokit = new Octokit({
    auth: token,
    baseUrl: config.hosts.githubApiUrl,
    userAgent: 'inkwell',
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  });

  async function findOpen(owner: string, repo: string, branch: string, signal: AbortSignal | undefined): Promise<PullRequestRef | null> {
    const res = await octokit.rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: 'open', per_page: 10, request: { signal } });
    const pr = res.data.find((p) => p.head?.ref === branch) ?? res.data[0];
    return pr ? { url: pr.html_url, number: pr.number } : null;
  }

  return {
    kind: 'github',
    async ensurePullRequest(input: EnsurePullRequestInput): Promise<PullRequestRef | null> {
      const loc = parseRepository(input.repository, config);
      if (loc.kind !== 'github') throw new HostError(`not a GitHub repository: ${input.repository}`);
      if (!token) throw new HostError('GITHUB_TOKEN is not set: it is needed to open pull requests on GitHub');
      const { owner, repo } = loc;
      const signal = input.signal;
      // Look up, else create — retried as a whole, so a create whose answer was lost is found, not repeated.
      const step = async (): Promise<PullRequestRef> => {
        const existing = await findOpen(owner, repo, input.branch, signal);
        if (existing) return existing;
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
          return { url: created.data.html_url, number: created.data.number };
        } catch (err) {
          // Another run opened it between our lookup and create: reuse it.
          if ((err as { status?: number }).status === 422) {
            const again = await findOpen(owner, repo, input.branch, signal);
            if (again) return again;
          }
          throw err;
        }
      };
      try {
        return await withHostRetry(step, {
          ...deps,
          host: 'GitHub',
          what: `pull request for ${owner}/${repo} branch ${input.branch}`,
          maxWaitMs: config.hosts.maxWaitMs,
          signal,
          classify: githubFailure,
        });
      } catch (err) {
        if (err instanceof HostError || signal?.aborted) throw err;
        throw new HostError(`GitHub pull request for ${owner}/${repo} branch ${input.branch} failed: ${describe(err)}`);
      }
    },
  };
}
