// A GitHub webhook delivery's payload → what Inkwell acts on: a comment in an issue or pull-request thread
// (`issue_comment` created), or a submitted pull-request review (`pull_request_review` submitted; its line
// comments are fetched apart). Everything else is ignored with a reason. Pure; the payload is untrusted JSON.
import type { ReviewLineComment } from '../hosts/github-threads.ts';

export interface Author {
  login: string;
  /** A GitHub App or bot account: never triggers anything. */
  isBot: boolean;
  /** The user's numeric id (GitLab: what its permission lookup takes). */
  id?: number;
}

export interface Thread {
  kind: 'issue' | 'pull';
  number: number;
  title: string;
  body: string;
  /** The issue's or pull request's page. */
  url: string;
}

export interface ThreadComment {
  host: 'github' | 'gitlab';
  /** GitHub's event (a review's line comments are fetched apart), or a GitLab note. */
  event: 'issue_comment' | 'pull_request_review' | 'note';
  /** The repository's page, https://github.com/owner/repo or https://gitlab.com/group/sub/repo. */
  repositoryUrl: string;
  /** GitHub: the owner; GitLab: the namespace (`group/sub`). */
  owner: string;
  repo: string;
  thread: Thread;
  /** The comment's id (a review's id for a review). */
  commentId: number;
  body: string;
  url: string;
  author: Author;
  /** Line comments the payload itself carries (a GitLab comment on a line of the diff). */
  lineComments?: ReviewLineComment[];
}

export type ParsedDelivery = { kind: 'ping' } | { kind: 'comment'; comment: ThreadComment } | { kind: 'ignored'; reason: string };

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const int = (v: unknown): number | undefined => (Number.isSafeInteger(v) && (v as number) > 0 ? (v as number) : undefined);

function authorOf(user: unknown): Author | undefined {
  const u = obj(user);
  const login = str(u?.login);
  if (!u || !login) return undefined;
  return { login, isBot: u.type === 'Bot' || login.endsWith('[bot]') };
}

function repositoryOf(payload: Obj): { repositoryUrl: string; owner: string; repo: string } | undefined {
  const r = obj(payload.repository);
  const repositoryUrl = str(r?.html_url);
  const full = str(r?.full_name);
  const [owner, repo, extra] = (full ?? '').split('/');
  if (!repositoryUrl || !owner || !repo || extra !== undefined) return undefined;
  return { repositoryUrl, owner, repo };
}

function threadOf(item: unknown, kind: Thread['kind'] | 'detect'): Thread | undefined {
  const i = obj(item);
  const number = int(i?.number);
  const url = str(i?.html_url);
  if (!i || !number || !url) return undefined;
  const isPull = kind === 'pull' || (kind === 'detect' && obj(i.pull_request) !== undefined);
  return { kind: isPull ? 'pull' : 'issue', number, title: str(i.title) ?? '', body: str(i.body) ?? '', url };
}

export function parseGitHubDelivery(event: string, payload: unknown): ParsedDelivery {
  if (event === 'ping') return { kind: 'ping' };
  const p = obj(payload);
  if (!p) return { kind: 'ignored', reason: 'the payload is not a JSON object' };
  const repo = repositoryOf(p);
  if (!repo) return { kind: 'ignored', reason: 'the payload names no repository' };
  if (event === 'issue_comment') {
    if (p.action !== 'created') return { kind: 'ignored', reason: `issue_comment ${String(p.action)}: only new comments are acted on` };
    const c = obj(p.comment);
    const thread = threadOf(p.issue, 'detect');
    const author = authorOf(c?.user);
    const commentId = int(c?.id);
    if (!c || !thread || !author || !commentId) return { kind: 'ignored', reason: 'issue_comment without its issue, comment or author' };
    return {
      kind: 'comment',
      comment: { host: 'github', event, ...repo, thread, commentId, body: str(c.body) ?? '', url: str(c.html_url) ?? thread.url, author },
    };
  }
  if (event === 'pull_request_review') {
    if (p.action !== 'submitted') return { kind: 'ignored', reason: `pull_request_review ${String(p.action)}: only submitted reviews are acted on` };
    const r = obj(p.review);
    const thread = threadOf(p.pull_request, 'pull');
    const author = authorOf(r?.user);
    const commentId = int(r?.id);
    if (!r || !thread || !author || !commentId) return { kind: 'ignored', reason: 'pull_request_review without its pull request, review or author' };
    return {
      kind: 'comment',
      comment: { host: 'github', event, ...repo, thread, commentId, body: str(r.body) ?? '', url: str(r.html_url) ?? thread.url, author },
    };
  }
  return { kind: 'ignored', reason: `${event} events are not acted on (subscribe to issue comments and pull request reviews)` };
}
