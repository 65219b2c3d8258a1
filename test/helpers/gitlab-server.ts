// A local fake of GitLab's merge-request REST API v4 (the parts Inkwell uses), over real HTTP:
//   GET  /api/v4/projects/:id/merge_requests?source_branch=&target_branch=&state=opened|closed|merged|all
//   POST /api/v4/projects/:id/merge_requests {source_branch, target_branch, title, description?}
//        → 201; 409 when an open MR exists for the source branch; 400 when a field is missing
//   GET  /api/v4/projects/:id/merge_requests/:iid
//   PUT  /api/v4/projects/:id/merge_requests/:iid {state_event?: close|reopen, title?, description?}  (a new title
//        sets the draft state from its prefix, as GitLab does)
//   GET  /api/v4/projects/:id/members/all/:user_id  (from `members`: user id → access level; 404 for anyone else)
//   GET  /api/v4/projects/:id/(issues|merge_requests)/:iid/notes?sort=asc|desc&order_by=created_at&per_page=&page=
//        (x-page, x-total-pages, x-next-page and `Link: rel="next"` headers)
//   POST /api/v4/projects/:id/(issues|merge_requests)/:iid/notes {body}  → 201, recorded in `notes`
//   POST /api/v4/projects/:id/(issues|merge_requests)/:iid/notes/:note_id/award_emoji {name}  → 201, in `awards`
// `:id` is a numeric id or the URL-encoded project path (`group%2Fsub%2Frepo`). Requests must carry
// `PRIVATE-TOKEN: <token>` (or `Authorization: Bearer <token>`) when a token is configured; every
// request is recorded with its headers. Mount under a prefix (`/gitlab`) to play a relative-URL install.
// Scripted failures (`failNext`) carry headers, to play rate limits (`failNext(429, 1, { headers: { 'retry-after': '30' } })`),
// and `afterHandling: true` does the work first and then answers the failure (a response lost on the way back).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeMergeRequest {
  id: number;
  iid: number;
  projectPath: string;
  title: string;
  description: string | null;
  source_branch: string;
  target_branch: string;
  state: 'opened' | 'closed' | 'merged';
  draft: boolean;
}

export interface RecordedGitLabRequest {
  method: string;
  /** Raw path as sent (still URL-encoded). */
  rawPath: string;
  /** Decoded project id or path, when the route has one. */
  project: string | null;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface FakeNote {
  projectPath: string;
  noteable: 'issues' | 'merge_requests';
  iid: number;
  body: string;
}

export interface GitLabServer {
  /** What GITLAB_URL takes (origin plus prefix). */
  url: string;
  mergeRequests: FakeMergeRequest[];
  /** Access level by user id (30 Developer, 40 Maintainer, …); a user not here is not a member. */
  members: Map<number, number>;
  /** Comments posted in issue and merge-request threads. */
  notes: FakeNote[];
  awards: { projectPath: string; noteable: string; iid: number; noteId: number; name: string }[];
  requests: RecordedGitLabRequest[];
  /** The next `count` requests answer with this status (default 1), with these headers and message. */
  failNext(status: number, count?: number, opts?: FailureOptions): void;
  /** The next `count` list requests answer an empty list, as a lagging replica might (to provoke the create race). */
  staleLists(count?: number): void;
  webUrl(mr: Pick<FakeMergeRequest, 'projectPath' | 'iid'>): string;
  close(): Promise<void>;
}

export interface FailureOptions {
  headers?: Record<string, string>;
  message?: string;
  /** Handle the request as usual (create the merge request…), then answer with the failure instead. */
  afterHandling?: boolean;
  /** Only a request with this method takes this failure (others pass it by). */
  method?: string;
}

export interface GitLabServerOptions {
  token?: string;
  prefix?: string;
  /** Numeric project ids the server knows, by path (any path is accepted by name). */
  projectIds?: Record<string, number>;
}

/** The title prefixes that make a merge request a draft. */
const DRAFT_TITLE = /^\s*(\[draft\]|\(draft\)|draft:|draft\s-|\[wip\]|wip:)/i;

export async function startGitLabServer(opts: GitLabServerOptions = {}): Promise<GitLabServer> {
  const mergeRequests: FakeMergeRequest[] = [];
  const members = new Map<number, number>();
  const notes: FakeNote[] = [];
  const awards: GitLabServer['awards'] = [];
  const requests: RecordedGitLabRequest[] = [];
  const failures: Array<FailureOptions & { status: number }> = [];
  let stale = 0;
  const prefix = (opts.prefix ?? '').replace(/\/+$/, '');
  let origin = '';
  let nextId = 1000;
  const webUrl = (mr: Pick<FakeMergeRequest, 'projectPath' | 'iid'>) => `${origin}${prefix}/${mr.projectPath}/-/merge_requests/${mr.iid}`;
  const projectIdOf = (path: string) => opts.projectIds?.[path] ?? 1;

  const toJson = (mr: FakeMergeRequest) => ({
    id: mr.id,
    iid: mr.iid,
    project_id: projectIdOf(mr.projectPath),
    title: mr.title,
    description: mr.description,
    state: mr.state,
    source_branch: mr.source_branch,
    target_branch: mr.target_branch,
    draft: mr.draft,
    work_in_progress: mr.draft,
    merge_status: 'can_be_merged',
    web_url: webUrl(mr),
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  });

  const resolveProject = (id: string): string | null => {
    if (/^\d+$/.test(id)) {
      const found = Object.entries(opts.projectIds ?? {}).find(([, n]) => String(n) === id);
      return found ? found[0] : null;
    }
    return id.includes('/') ? id : null;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = req.url ?? '/';
      const [rawPath = '/', search = ''] = raw.split('?', 2);
      const query = Object.fromEntries(new URLSearchParams(search));
      const text = Buffer.concat(chunks).toString('utf8');
      let body: any = null;
      let answered = false;
      const send = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        if (answered) return;
        answered = true;
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(value));
      };
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        send(400, { error: 'body is not valid JSON' });
        return;
      }
      const m = new RegExp(`^${prefix}/api/v4/projects/([^/]+)/merge_requests(?:/(\\d+))?$`).exec(rawPath);
      const other = new RegExp(`^${prefix}/api/v4/projects/([^/]+)/`).exec(rawPath);
      const project = m || other ? resolveProject(decodeURIComponent((m ?? other)?.[1] as string)) : null;
      requests.push({ method: req.method ?? 'GET', rawPath, project, query, headers: req.headers, body });

      const at = failures.findIndex((f) => f.method === undefined || f.method === req.method);
      const failure = at >= 0 ? failures.splice(at, 1)[0] : undefined;
      if (failure !== undefined) {
        // After handling: the failure is sent first and the work below still happens (its own answer is dropped).
        send(failure.status, { message: failure.message ?? `${failure.status} Simulated failure` }, failure.headers);
        if (!failure.afterHandling) return;
      }
      if (opts.token !== undefined) {
        const given = (req.headers['private-token'] as string | undefined) ?? req.headers.authorization?.replace(/^Bearer\s+/i, '');
        if (given !== opts.token) {
          send(401, { message: '401 Unauthorized' });
          return;
        }
      }
      if (!m && project && threadRoutes(req.method ?? 'GET', rawPath, project, body, send, query)) return;
      if (!m) {
        send(404, { error: '404 Not Found' });
        return;
      }
      if (!project) {
        send(404, { message: '404 Project Not Found' });
        return;
      }
      const iid = m[2] ? Number(m[2]) : null;
      const ofProject = mergeRequests.filter((x) => x.projectPath === project);

      if (iid === null && req.method === 'GET') {
        const state = query.state ?? 'all';
        const fresh = stale > 0 ? [] : ofProject;
        if (stale > 0) stale--;
        const list = fresh
          .filter((x) => state === 'all' || x.state === state)
          .filter((x) => query.source_branch === undefined || x.source_branch === query.source_branch)
          .filter((x) => query.target_branch === undefined || x.target_branch === query.target_branch)
          .sort((a, b) => b.iid - a.iid);
        send(200, list.map(toJson), { 'x-page': '1', 'x-per-page': query.per_page ?? '20', 'x-total': String(list.length), 'x-total-pages': '1' });
        return;
      }
      if (iid === null && req.method === 'POST') {
        for (const field of ['source_branch', 'target_branch', 'title']) {
          if (typeof body?.[field] !== 'string' || body[field] === '') {
            send(400, { error: `${field} is missing` });
            return;
          }
        }
        const open = ofProject.find((x) => x.state === 'opened' && x.source_branch === body.source_branch);
        if (open) {
          send(409, { message: [`Another open merge request already exists for this source branch: !${open.iid}`] });
          return;
        }
        const title = body.title as string;
        const mr: FakeMergeRequest = {
          id: nextId++,
          iid: ofProject.reduce((n, x) => Math.max(n, x.iid), 0) + 1,
          projectPath: project,
          title,
          description: typeof body.description === 'string' ? body.description : null,
          source_branch: body.source_branch,
          target_branch: body.target_branch,
          state: 'opened',
          draft: DRAFT_TITLE.test(title),
        };
        mergeRequests.push(mr);
        send(201, toJson(mr));
        return;
      }
      const mr = ofProject.find((x) => x.iid === iid);
      if (!mr) {
        send(404, { message: '404 Not found' });
        return;
      }
      if (req.method === 'GET') {
        send(200, toJson(mr));
        return;
      }
      if (req.method === 'PUT') {
        if (body?.state_event === 'close') mr.state = 'closed';
        if (body?.state_event === 'reopen') mr.state = 'opened';
        if (typeof body?.title === 'string') {
          mr.title = body.title;
          mr.draft = DRAFT_TITLE.test(body.title);
        }
        if (typeof body?.description === 'string') mr.description = body.description;
        send(200, toJson(mr));
        return;
      }
      send(405, { error: '405 Method Not Allowed' });
    });
  });
  /** The thread endpoints (membership, notes, award emoji); false when the path is none of them. */
  function threadRoutes(
    method: string,
    rawPath: string,
    project: string,
    body: any,
    send: (status: number, value: unknown, headers?: Record<string, string>) => void,
    query: Record<string, string> = {},
  ): boolean {
    const rest = rawPath.replace(new RegExp(`^${prefix}/api/v4/projects/[^/]+`), '');
    const member = /^\/members\/all\/(\d+)$/.exec(rest);
    if (member && method === 'GET') {
      const level = members.get(Number(member[1]));
      if (level === undefined) send(404, { message: '404 Not found' });
      else send(200, { id: Number(member[1]), username: `user${member[1]}`, access_level: level, state: 'active' });
      return true;
    }
    const note = /^\/(issues|merge_requests)\/(\d+)\/notes$/.exec(rest);
    if (note && method === 'GET') {
      const mine = notes
        .map((n, i) => ({ n, id: 7001 + i }))
        .filter(({ n }) => n.projectPath === project && n.noteable === note[1] && n.iid === Number(note[2]));
      if (query.sort === 'desc') mine.reverse();
      const perPage = Math.min(100, Math.max(1, Number(query.per_page ?? 20) || 20));
      const page = Math.max(1, Number(query.page ?? 1) || 1);
      const pages = Math.max(1, Math.ceil(mine.length / perPage));
      const shown = mine.slice((page - 1) * perPage, page * perPage).map(({ n, id }) => ({ id, body: n.body, system: false, noteable_iid: n.iid }));
      send(200, shown, {
        'x-page': String(page),
        'x-per-page': String(perPage),
        'x-total': String(mine.length),
        'x-total-pages': String(pages),
        'x-next-page': page < pages ? String(page + 1) : '',
        ...(page < pages ? { link: `<${origin}${rawPath}?${new URLSearchParams({ ...query, page: String(page + 1) })}>; rel="next"` } : {}),
      });
      return true;
    }
    if (note && method === 'POST') {
      notes.push({ projectPath: project, noteable: note[1] as FakeNote['noteable'], iid: Number(note[2]), body: String(body?.body ?? '') });
      send(201, { id: 7000 + notes.length, body: body?.body, noteable_type: note[1] === 'issues' ? 'Issue' : 'MergeRequest' });
      return true;
    }
    const award = /^\/(issues|merge_requests)\/(\d+)\/notes\/(\d+)\/award_emoji$/.exec(rest);
    if (award && method === 'POST') {
      awards.push({ projectPath: project, noteable: award[1] as string, iid: Number(award[2]), noteId: Number(award[3]), name: String(body?.name ?? '') });
      send(201, { id: 9000 + awards.length, name: body?.name });
      return true;
    }
    return false;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}${prefix}`,
    mergeRequests,
    members,
    notes,
    awards,
    requests,
    failNext(status, count = 1, opts = {}) {
      for (let i = 0; i < count; i++) failures.push({ ...opts, status });
    },
    staleLists(count = 1) {
      stale += count;
    },
    webUrl,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
