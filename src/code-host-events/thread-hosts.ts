// One interface over what the service asks of a code host about a comment's thread, so that the rules (who may
// trigger, what is acknowledged) are written once for GitHub and GitLab.
import type { Config } from '../config.ts';
import { createGitHubThreads, type GitHubThreads, type RepositoryPermission, type ReviewLineComment } from '../hosts/github-threads.ts';
import { createGitLabThreads, GITLAB_DEVELOPER, type GitLabThreads } from '../hosts/gitlab-threads.ts';
import type { Thread, ThreadComment } from './github-payload.ts';

/** Where a reply goes: the repository and the issue or pull (merge) request. */
export interface ThreadRef {
  owner: string;
  repo: string;
  thread: Pick<Thread, 'kind' | 'number'>;
}

export interface ThreadHost {
  /** Whether the commenter may push to the repository (GitHub: write, maintain, admin; GitLab: Developer or above). */
  canWrite(c: ThreadComment): Promise<boolean>;
  /** The line comments a comment comes with (a GitHub review's are fetched; a GitLab note carries its own). */
  lineComments(c: ThreadComment): Promise<ReviewLineComment[]>;
  reply(c: ThreadRef, body: string): Promise<void>;
  /** Marks the comment as seen (👀), where the host has reactions for it (GitHub reviews have none). */
  react(c: ThreadComment): Promise<void>;
}

const GITHUB_WRITERS: readonly RepositoryPermission[] = ['admin', 'maintain', 'write'];

export function githubThreadHost(api: GitHubThreads): ThreadHost {
  return {
    canWrite: async (c) => GITHUB_WRITERS.includes(await api.permission(c.owner, c.repo, c.author.login)),
    lineComments: async (c) => (c.event === 'pull_request_review' ? api.reviewComments(c.owner, c.repo, c.thread.number, c.commentId) : []),
    reply: async (c, body) => void (await api.reply(c.owner, c.repo, c.thread.number, body)),
    react: async (c) => {
      if (c.event === 'issue_comment') await api.react(c.owner, c.repo, c.commentId, 'eyes');
    },
  };
}

export function gitlabThreadHost(api: GitLabThreads): ThreadHost {
  const path = (c: ThreadRef) => `${c.owner}/${c.repo}`;
  const noteable = (c: ThreadRef) => (c.thread.kind === 'issue' ? 'issue' : 'merge_request');
  return {
    canWrite: async (c) => c.author.id !== undefined && (await api.accessLevel(path(c), c.author.id)) >= GITLAB_DEVELOPER,
    lineComments: async (c) => c.lineComments ?? [],
    reply: (c, body) => api.reply(path(c), noteable(c), c.thread.number, body),
    react: (c) => api.react(path(c), noteable(c), c.thread.number, c.commentId, 'eyes'),
  };
}

/** Both hosts, over the given APIs or ones made from the config (GITHUB_API_URL, GITLAB_URL and their tokens). */
export function threadHosts(
  config: Config,
  apis: { github?: GitHubThreads | undefined; gitlab?: GitLabThreads | undefined } = {},
): Record<ThreadComment['host'], ThreadHost> {
  return {
    github: githubThreadHost(apis.github ?? createGitHubThreads(config)),
    gitlab: gitlabThreadHost(apis.gitlab ?? createGitLabThreads(config)),
  };
}
