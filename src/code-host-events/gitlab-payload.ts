// A GitLab webhook delivery's payload → what Inkwell acts on: a new comment (a "note") on an issue or a merge
// request; a comment on a line of a merge request's diff (a DiffNote) carries the file and lines it points at.
// Everything else is ignored with a reason. Pure; the payload is untrusted JSON.
import type { ReviewLineComment } from '../hosts/github-threads.ts';
import type { Author, ParsedDelivery, Thread } from './github-payload.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const int = (v: unknown): number | undefined => (Number.isSafeInteger(v) && (v as number) > 0 ? (v as number) : undefined);

/**
 * Accounts that are not people: project and group access tokens' bot users (`project_12_bot_…`), service
 * accounts, and GitLab's own internal bots. The webhook's user object carries no bot flag, so names decide.
 */
const BOT_USERNAME =
  /^(?:(?:project|group)_\d+_bot(?:_\w+)?|service_account_.*|(?:alert|support|visual-review|security|automation|gitlab-admin|gitlab-llm|duo-developer)-bot|ghost)$/i;

function authorOf(user: unknown): (Author & { id: number }) | undefined {
  const u = obj(user);
  const login = str(u?.username);
  const id = int(u?.id);
  if (!u || !login || !id) return undefined;
  return { login, id, isBot: BOT_USERNAME.test(login) || u.bot === true };
}

function threadOf(item: unknown, kind: Thread['kind']): Thread | undefined {
  const i = obj(item);
  const number = int(i?.iid);
  const url = str(i?.url) ?? str(i?.web_url);
  if (!i || !number || !url) return undefined;
  return { kind, number, title: str(i.title) ?? '', body: str(i.description) ?? '', url };
}

/** A DiffNote's position: the file and the lines of the new version (the old one for a removed line). */
function lineCommentOf(attributes: Obj, body: string): ReviewLineComment[] {
  const p = obj(attributes.position);
  const path = str(p?.new_path) ?? str(p?.old_path);
  if (!p || !path) return [];
  const range = obj(p.line_range);
  const lineOf = (x: Obj | undefined) => int(x?.new_line) ?? int(x?.old_line) ?? null;
  const line = lineOf(p) ?? lineOf(obj(range?.end));
  const start = lineOf(obj(range?.start));
  return [{ path, line, startLine: start !== null && start !== line ? start : null, body, diffHunk: '' }];
}

export function parseGitLabDelivery(event: string, payload: unknown): ParsedDelivery {
  const p = obj(payload);
  if (!p) return { kind: 'ignored', reason: 'the payload is not a JSON object' };
  if (event !== 'Note Hook' || p.object_kind !== 'note') {
    return { kind: 'ignored', reason: `${event} events are not acted on (subscribe to comments)` };
  }
  const project = obj(p.project);
  const repositoryUrl = str(project?.web_url);
  const path = str(project?.path_with_namespace);
  const cut = path?.lastIndexOf('/') ?? -1;
  if (!repositoryUrl || !path || cut <= 0) return { kind: 'ignored', reason: 'the payload names no project' };
  const a = obj(p.object_attributes);
  const action = str(a?.action);
  if (action !== undefined && action !== 'create') return { kind: 'ignored', reason: `note ${action}: only new comments are acted on` };
  if (a?.system === true) return { kind: 'ignored', reason: 'a system note' };
  const type = str(a?.noteable_type);
  const thread = type === 'Issue' ? threadOf(p.issue, 'issue') : type === 'MergeRequest' ? threadOf(p.merge_request, 'pull') : undefined;
  if (!thread) return { kind: 'ignored', reason: `comments on ${type ?? 'this'} are not acted on (issues and merge requests are)` };
  const author = authorOf(p.user);
  const commentId = int(a?.id);
  if (!a || !author || !commentId) return { kind: 'ignored', reason: 'note without its author or id' };
  const body = str(a.note) ?? '';
  return {
    kind: 'comment',
    comment: {
      host: 'gitlab',
      event: 'note',
      repositoryUrl,
      owner: path.slice(0, cut),
      repo: path.slice(cut + 1),
      thread,
      commentId,
      body,
      url: str(a.url) ?? thread.url,
      author,
      lineComments: lineCommentOf(a, body),
    },
  };
}
