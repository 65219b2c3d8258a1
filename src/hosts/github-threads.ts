// What Inkwell does in a GitHub issue or pull-request thread: look up a commenter's permission, acknowledge a
// comment with a reaction, reply, and read a review's line comments. Octokit with the retry plugin (5xx and
// network failures, twice); a rate limit or any other failure is thrown as a HostError, so the delivery that
// asked is answered 503 and GitHub can deliver it again.
import { retry } from '@octokit/plugin-retry';
import { Octokit } from '@octokit/rest';
import type { Config } from '../config.ts';
import { scrubSecrets } from '../lib/logger.ts';
import { HostError } from './retry.ts';

/** A line comment of a review: the file and lines it points at. */
export interface ReviewLineComment {
  path: string;
  line: number | null;
  startLine: number | null;
  body: string;
  diffHunk: string;
}

export type RepositoryPermission = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

export interface GitHubThreads {
  permission(owner: string, repo: string, login: string): Promise<RepositoryPermission>;
  /** Adds a reaction to an issue or pull-request comment (reviews have no reactions). */
  react(owner: string, repo: string, commentId: number, content: 'eyes' | '+1' | 'confused'): Promise<void>;
  /** Posts a comment in the thread of issue or pull request `number`; returns its page. */
  reply(owner: string, repo: string, number: number, body: string): Promise<string>;
  reviewComments(owner: string, repo: string, pull: number, reviewId: number): Promise<ReviewLineComment[]>;
}

const GitHub = Octokit.plugin(retry);

export function createGitHubThreads(config: Pick<Config, 'hosts'>): GitHubThreads {
  const token = config.hosts.githubToken;
  const octokit = new GitHub({
    auth: token,
    baseUrl: config.hosts.githubApiUrl,
    userAgent: 'inkwell',
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    retry: { retries: 2, retryAfterBaseValue: 500, doNotRetry: [400, 401, 403, 404, 410, 422, 429, 451] },
  });

  async function call<T>(what: string, work: () => Promise<T>): Promise<T> {
    if (!token) throw new HostError('GITHUB_TOKEN is not set: it is needed to answer comments on GitHub');
    try {
      return await work();
    } catch (err) {
      const e = err as { status?: number; message?: string };
      throw new HostError(scrubSecrets(`GitHub ${what} failed: ${e.status ? `HTTP ${e.status}: ` : ''}${e.message ?? String(err)}`));
    }
  }

  return {
    permission: (owner, repo, login) =>
      call(`permission of ${login} on ${owner}/${repo}`, async () => {
        try {
          const res = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: login });
          const p = (res.data as { role_name?: string; permission?: string }).role_name ?? res.data.permission;
          return (['admin', 'maintain', 'write', 'triage', 'read'].includes(p) ? p : 'none') as RepositoryPermission;
        } catch (err) {
          // Not a collaborator (or no such user): no access.
          if ((err as { status?: number }).status === 404) return 'none';
          throw err;
        }
      }),
    react: (owner, repo, commentId, content) =>
      call(`reaction on comment ${commentId}`, async () => {
        await octokit.rest.reactions.createForIssueComment({ owner, repo, comment_id: commentId, content });
      }),
    reply: (owner, repo, number, body) =>
      call(`comment on #${number}`, async () => (await octokit.rest.issues.createComment({ owner, repo, issue_number: number, body })).data.html_url),
    reviewComments: (owner, repo, pull, reviewId) =>
      call(`comments of review ${reviewId}`, async () => {
        const res = await octokit.rest.pulls.listCommentsForReview({ owner, repo, pull_number: pull, review_id: reviewId, per_page: 100 });
        return res.data.map((c) => {
          const x = c as typeof c & { line?: number | null; start_line?: number | null };
          return { path: c.path, line: x.line ?? null, startLine: x.start_line ?? null, body: c.body, diffHunk: c.diff_hunk ?? '' };
        });
      }),
  };
}
