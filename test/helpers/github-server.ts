// A local fake of GitHub's pull-request REST API (the parts Inkwell uses), over real HTTP:
//   GET  /repos/{owner}/{repo}/pulls?head=owner:branch&state=open|closed|all
//   POST /repos/{owner}/{repo}/pulls {title, head, base, body?, draft?}  → 201 (422 when one is open for head)
//   GET  /repos/{owner}/{repo}/pulls/{number}
//   PATCH /repos/{owner}/{repo}/pulls/{number} {state?, title?, body?}  (like GitHub, `draft` is ignored here)
//   POST /graphql (GHES: /api/graphql) markPullRequestReadyForReview(input: {pullRequestId}) by the pull's node_id
//   GET  /repos/{owner}/{repo}/collaborators/{user}/permission  (from `permissions`; 404 for anyone else)
//   GET  /repos/{owner}/{repo}/issues/{number}/comments?per_page=&page=  (oldest first, `Link: rel="next"` paging)
//   POST /repos/{owner}/{repo}/issues/{number}/comments {body}  → 201, recorded in `comments`
//   POST /repos/{owner}/{repo}/issues/comments/{id}/reactions {content}  → 201, recorded in `reactions`
//   GET  /repos/{owner}/{repo}/pulls/{number}/reviews/{id}/comments  (from `reviewComments`)
// Optional token check (401 "Bad credentials"), records every request with its headers. Scripted failures
// (`failNext`) carry headers and a message, to play rate limits:
//   primary:   gh.failNext(403, 1, { message: 'API rate limit exceeded', headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1700000000' } })
//   secondary: gh.failNext(403, 1, { message: 'You have exceeded a secondary rate limit', headers: { 'retry-after': '30' } })
// and `afterHandling: true` to do the work first and then answer the failure (a response lost on the way back).
// Mount under a prefix (`/api/v3`) to play GitHub Enterprise Server.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakePull {
  number: number;
  owner: string;
  repo: string;
  title: string;
  body: string | null;
  head: string;
  base: string;
  draft: boolean;
  state: 'open' | 'closed';
  /** The node id GET answers instead of the pull's own (one GraphQL cannot resolve: a deleted or stale node). */
  staleNodeId?: string;
}

export interface RecordedGitHubRequest {
  method: string;
  path: string;
  /** When the request arrived (Date.now()). */
  at: number;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface FakeComment {
  owner: string;
  repo: string;
  number: number;
  body: string;
}

export interface FakeReviewComment {
  path: string;
  line: number | null;
  start_line: number | null;
  body: string;
  diff_hunk: string;
}

export interface GitHubServer {
  /** API base URL (what GITHUB_API_URL takes). */
  apiUrl: string;
  pulls: FakePull[];
  /** Repository permission by user login (`admin`, `write`, `read`, …); a login not here is not a collaborator. */
  permissions: Map<string, string>;
  /** Comments posted in issue and pull-request threads. */
  comments: FakeComment[];
  reactions: { owner: string; repo: string; commentId: number; content: string }[];
  /** Line comments of a review, by review id. */
  reviewComments: Map<number, FakeReviewComment[]>;
  requests: RecordedGitHubRequest[];
  /** The next `count` requests answer with this status (default 1), with these headers and message. */
  failNext(status: number, count?: number, opts?: FailureOptions): void;
  /**
   * The next request with this method and a path matching `path` is handled as usual, but its answer is held
   * back until `release()` (a write that happened while its caller stopped before hearing of it).
   */
  hold(method: string, path: RegExp): { arrived: Promise<void>; release(): void };
  htmlUrl(pull: Pick<FakePull, 'owner' | 'repo' | 'number'>): string;
  close(): Promise<void>;
}

export interface FailureOptions {
  headers?: Record<string, string>;
  message?: string;
  /** Handle the request as usual (create the pull request…), then answer with the failure instead. */
  afterHandling?: boolean;
  /** Only a request with this method takes this failure (others pass it by). */
  method?: string;
}

export interface GitHubServerOptions {
  /** When set, requests must carry `Authorization: token|Bearer <token>`. */
  token?: string;
  /** Path prefix of the API (e.g. `/api/v3` for Enterprise). */
  prefix?: string;
  /** Host used in html_url (default github.com). */
  htmlHost?: string;
}

export async function startGitHubServer(opts: GitHubServerOptions = {}): Promise<GitHubServer> {
  const pulls: FakePull[] = [];
  const permissions = new Map<string, string>();
  const comments: FakeComment[] = [];
  const reactions: GitHubServer['reactions'] = [];
  const reviewComments = new Map<number, FakeReviewComment[]>();
  const requests: RecordedGitHubRequest[] = [];
  const failures: Array<FailureOptions & { status: number }> = [];
  const prefix = (opts.prefix ?? '').replace(/\/+$/, '');
  const htmlHost = opts.htmlHost ?? 'github.com';
  let apiUrl = '';
  const htmlUrl = (p: Pick<FakePull, 'owner' | 'repo' | 'number'>) => `https://${htmlHost}/${p.owner}/${p.repo}/pull/${p.number}`;

  const nodeId = (p: Pick<FakePull, 'owner' | 'repo' | 'number'>) => `PR_kw${Buffer.from(`${p.owner}/${p.repo}#${p.number}`).toString('base64url')}`;
  const toJson = (p: FakePull) => ({
    id: 1000 + p.number,
    node_id: p.staleNodeId ?? nodeId(p),
    number: p.number,
    state: p.state,
    title: p.title,
    body: p.body,
    draft: p.draft,
    html_url: htmlUrl(p),
    url: `${apiUrl}/repos/${p.owner}/${p.repo}/pulls/${p.number}`,
    head: { ref: p.head, label: `${p.owner}:${p.head}`, repo: { full_name: `${p.owner}/${p.repo}` } },
    base: { ref: p.base, label: `${p.owner}:${p.base}`, repo: { full_name: `${p.owner}/${p.repo}` } },
    user: { login: 'inkwell-bot' },
  });

  const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): undefined => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  };

  const holds: { method: string; path: RegExp; arrived: () => void; released: Promise<void> }[] = [];

  function handle(req: RecordedGitHubRequest, res: http.ServerResponse): undefined {
    const held = holds.findIndex((h) => h.method === req.method && h.path.test(req.path));
    if (held >= 0) {
      const [h] = holds.splice(held, 1) as [(typeof holds)[number]];
      let answer: { status: number; headers: http.OutgoingHttpHeaders; text: string } = { status: 500, headers: {}, text: '' };
      const capture = {
        writeHead: (status: number, headers: http.OutgoingHttpHeaders) => {
          answer = { ...answer, status, headers };
        },
        end: (text: string) => {
          answer.text = text;
        },
      } as unknown as http.ServerResponse;
      handleNormally(req, capture);
      h.arrived();
      void h.released.then(() => {
        if (res.destroyed || res.headersSent) return;
        res.writeHead(answer.status, answer.headers);
        res.end(answer.text);
      });
      return;
    }
    const at = failures.findIndex((f) => f.method === undefined || f.method === req.method);
    const failure = at >= 0 ? failures.splice(at, 1)[0] : undefined;
    if (failure !== undefined) {
      const answer = () => send(res, failure.status, { message: failure.message ?? `scripted failure ${failure.status}` }, failure.headers);
      if (!failure.afterHandling) return answer();
      // Do the work, throw its answer away, answer the failure.
      handleNormally(req, { writeHead: () => {}, end: () => {} } as unknown as http.ServerResponse);
      return answer();
    }
    return handleNormally(req, res);
  }

  function handleNormally(req: RecordedGitHubRequest, res: http.ServerResponse): undefined {
    if (opts.token !== undefined) {
      const auth = String(req.headers.authorization ?? '');
      if (auth !== `token ${opts.token}` && auth !== `Bearer ${opts.token}`) {
        return send(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
      }
    }
    // GraphQL lives at /graphql, and on Enterprise (API under /api/v3) at /api/graphql.
    if (req.method === 'POST' && req.path === (prefix.endsWith('/api/v3') ? `${prefix.slice(0, -3)}/graphql` : `${prefix}/graphql`)) return graphql(req, res);
    if (!req.path.startsWith(`${prefix}/`)) return send(res, 404, { message: 'Not Found' });
    const rest = req.path.slice(prefix.length);
    const list = /^\/repos\/([^/]+)\/([^/]+)\/pulls\/?$/.exec(rest);
    const one = /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)$/.exec(rest);
    const threads = threadRoutes(req, rest, res);
    if (threads !== false) return threads;
    if (list && req.method === 'GET') {
      const [, owner, repo] = list as unknown as [string, string, string];
      const state = req.query.state ?? 'open';
      let head = req.query.head;
      let headOwner: string | undefined;
      if (head?.includes(':')) [headOwner, head] = head.split(':', 2) as [string, string];
      const found = pulls.filter(
        (p) =>
          p.owner === owner &&
          p.repo === repo &&
          (state === 'all' || p.state === state) &&
          (head === undefined || p.head === head) &&
          (headOwner === undefined || headOwner === owner) &&
          (req.query.base === undefined || p.base === req.query.base),
      );
      return send(res, 200, found.map(toJson));
    }
    if (list && req.method === 'POST') {
      const [, owner, repo] = list as unknown as [string, string, string];
      const b = req.body ?? {};
      const missing = ['title', 'head', 'base'].filter((k) => typeof b[k] !== 'string' || b[k] === '');
      if (missing.length > 0) {
        return send(res, 422, { message: 'Validation Failed', errors: missing.map((field) => ({ resource: 'PullRequest', code: 'missing_field', field })) });
      }
      const head = String(b.head).includes(':') ? String(b.head).split(':')[1]! : String(b.head);
      if (pulls.some((p) => p.owner === owner && p.repo === repo && p.head === head && p.state === 'open')) {
        return send(res, 422, {
          message: 'Validation Failed',
          errors: [{ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${owner}:${head}.` }],
        });
      }
      const pull: FakePull = {
        number: pulls.length + 1,
        owner,
        repo,
        title: b.title,
        body: b.body ?? null,
        head,
        base: b.base,
        draft: b.draft === true,
        state: 'open',
      };
      pulls.push(pull);
      return send(res, 201, toJson(pull));
    }
    if (one && (req.method === 'GET' || req.method === 'PATCH')) {
      const [, owner, repo, n] = one as unknown as [string, string, string, string];
      const pull = pulls.find((p) => p.owner === owner && p.repo === repo && p.number === Number(n));
      if (!pull) return send(res, 404, { message: 'Not Found' });
      if (req.method === 'PATCH') {
        const b = req.body ?? {};
        if (b.state === 'open' || b.state === 'closed') pull.state = b.state;
        if (typeof b.title === 'string') pull.title = b.title;
        if (typeof b.body === 'string') pull.body = b.body;
      }
      return send(res, 200, toJson(pull));
    }
    return send(res, 404, { message: 'Not Found' });
  }

  /** The GraphQL mutations Inkwell sends (only markPullRequestReadyForReview), answered as GitHub does: 200 with `errors`. */
  function graphql(req: RecordedGitHubRequest, res: http.ServerResponse): undefined {
    const query = String(req.body?.query ?? '');
    const id = req.body?.variables?.id;
    if (!/mutation[\s\S]*markPullRequestReadyForReview\s*\(\s*input\s*:\s*\{\s*pullRequestId\s*:\s*\$id\s*\}/.test(query)) {
      return send(res, 200, { errors: [{ message: 'Fake GitHub: unsupported query' }] });
    }
    const pull = pulls.find((p) => nodeId(p) === id);
    if (!pull) {
      return send(res, 200, {
        data: { markPullRequestReadyForReview: null },
        errors: [{ type: 'NOT_FOUND', path: ['markPullRequestReadyForReview'], message: `Could not resolve to a node with the global id of '${id}'` }],
      });
    }
    pull.draft = false;
    return send(res, 200, { data: { markPullRequestReadyForReview: { pullRequest: { isDraft: false } } } });
  }

  /** The thread endpoints (permission, comments, reactions, review comments); false when the path is none of them. */
  function threadRoutes(req: RecordedGitHubRequest, rest: string, res: http.ServerResponse): undefined | false {
    const permission = /^\/repos\/([^/]+)\/([^/]+)\/collaborators\/([^/]+)\/permission$/.exec(rest);
    if (permission && req.method === 'GET') {
      const level = permissions.get(decodeURIComponent(permission[3] as string));
      if (!level) return send(res, 404, { message: 'Not Found' });
      return send(res, 200, { permission: level === 'maintain' ? 'write' : level, role_name: level, user: { login: permission[3] } });
    }
    const comment = /^\/repos\/([^/]+)\/([^/]+)\/issues\/(\d+)\/comments$/.exec(rest);
    if (comment && req.method === 'GET') {
      const [, owner, repo, n] = comment as unknown as [string, string, string, string];
      const all = comments.map((c, i) => ({ c, id: 5001 + i })).filter(({ c }) => c.owner === owner && c.repo === repo && c.number === Number(n));
      const perPage = Math.min(100, Math.max(1, Number(req.query.per_page ?? 30) || 30));
      const page = Math.max(1, Number(req.query.page ?? 1) || 1);
      const shown = all.slice((page - 1) * perPage, page * perPage);
      const last = Math.max(1, Math.ceil(all.length / perPage));
      const link = (p: number) => `<${apiUrl}/repos/${owner}/${repo}/issues/${n}/comments?per_page=${perPage}&page=${p}>`;
      const headers: Record<string, string> = page < last ? { link: `${link(page + 1)}; rel="next", ${link(last)}; rel="last"` } : {};
      return send(
        res,
        200,
        shown.map(({ c, id }) => ({
          id,
          body: c.body,
          user: { login: 'inkwell-bot' },
          html_url: `https://${htmlHost}/${owner}/${repo}/issues/${n}#issuecomment-${id}`,
        })),
        headers,
      );
    }
    if (comment && req.method === 'POST') {
      const [, owner, repo, n] = comment as unknown as [string, string, string, string];
      comments.push({ owner, repo, number: Number(n), body: String(req.body?.body ?? '') });
      const id = 5000 + comments.length;
      return send(res, 201, { id, body: req.body?.body, html_url: `https://${htmlHost}/${owner}/${repo}/issues/${n}#issuecomment-${id}` });
    }
    const reaction = /^\/repos\/([^/]+)\/([^/]+)\/issues\/comments\/(\d+)\/reactions$/.exec(rest);
    if (reaction && req.method === 'POST') {
      const [, owner, repo, id] = reaction as unknown as [string, string, string, string];
      reactions.push({ owner, repo, commentId: Number(id), content: String(req.body?.content) });
      return send(res, 201, { id: 7000 + reactions.length, content: req.body?.content });
    }
    const review = /^\/repos\/([^/]+)\/([^/]+)\/pulls\/(\d+)\/reviews\/(\d+)\/comments$/.exec(rest);
    if (review && req.method === 'GET') {
      const list = reviewComments.get(Number(review[4]));
      if (!list) return send(res, 404, { message: 'Not Found' });
      return send(
        res,
        200,
        list.map((c, i) => ({ id: 8000 + i, pull_request_review_id: Number(review[4]), ...c })),
      );
    }
    return false;
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any = null;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        return send(res, 400, { message: 'Problems parsing JSON' });
      }
      const recorded: RecordedGitHubRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        at: Date.now(),
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body,
      };
      requests.push(recorded);
      handle(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${prefix}`;
  return {
    apiUrl,
    pulls,
    permissions,
    comments,
    reactions,
    reviewComments,
    requests,
    failNext: (status, count = 1, opts = {}) => {
      for (let i = 0; i < count; i++) failures.push({ ...opts, status });
    },
    hold: (method, path) => {
      let arrived!: () => void;
      let release!: () => void;
      const arrivedP = new Promise<void>((r) => {
        arrived = r;
      });
      const released = new Promise<void>((r) => {
        release = r;
      });
      holds.push({ method, path, arrived, released });
      return { arrived: arrivedP, release };
    },
    htmlUrl,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
