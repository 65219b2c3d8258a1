// GitHub (github.com or Enterprise Server) pull requests through Octokit. Auth: GITHUB_TOKEN.
import { Octokit } from '@octokit/rest';
import type { Config } from '../config.ts';
import { scrubSecrets } from '../lib/logger.ts';
import { parseRepository } from './detect.ts';
import type { CodeHost, EnsurePullRequestInput, PullRequestRef } from './types.ts';

export class HostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HostError';
  }
}

function describe(err: unknown): string {
  const e = err as { status?: number; message?: string; response?: { data?: { message?: string; errors?: Array<{ message?: string }> } } };
  const parts = [e.response?.data?.message ?? e.message ?? String(err)];
  for (const x of e.response?.data?.errors ?? []) if (x.message) parts.push(x.message);
  return scrubSecrets(`${e.status ? `HTTP ${e.status}: ` : ''}${parts.join('; ')}`);
}

/** Transient GitHub failures (5xx, network) are retried after these delays. */
export const GITHUB_RETRY_DELAYS_MS = [200, 1000];

async function withRetry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const status = (err as { status?: number }).status;
      const transient = status === undefined || status === 500 || status >= 502;
      const delay = GITHUB_RETRY_DELAYS_MS[attempt];
      if (!transient || delay === undefined) throw err;
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

export function createGitHubHost(config: Config): CodeHost {
  const token = config.hosts.githubToken;
  const octokit = new Octokit({
    auth: token,
    baseUrl: config.hosts.githubApiUrl,
    userAgent: 'inkwell',
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  });

  async function findOpen(owner: string, repo: string, branch: string): Promise<PullRequestRef | null> {
    const res = await withRetry(() => octokit.rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: 'open', per_page: 10 }));
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
      try {
        const existing = await findOpen(owner, repo, input.branch);
        if (existing) return existing;
        try {
          const created = await withRetry(() =>
            octokit.rest.pulls.create({
              owner,
              repo,
              head: input.branch,
              base: input.base,
              title: input.title,
              body: input.body,
              draft: input.draft ?? false,
            }),
          );
          return { url: created.data.html_url, number: created.data.number };
        } catch (err) {
          // Another run opened it between our lookup and create: reuse it.
          if ((err as { status?: number }).status === 422) {
            const again = await findOpen(owner, repo, input.branch);
            if (again) return again;
          }
          throw err;
        }
      } catch (err) {
        if (err instanceof HostError) throw err;
        throw new HostError(`GitHub pull request for ${owner}/${repo} branch ${input.branch} failed: ${describe(err)}`);
      }
    },
  };
}
