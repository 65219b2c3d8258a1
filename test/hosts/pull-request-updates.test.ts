// Writes to an open pull (merge) request, on GitHub and GitLab through their clients against the local fakes:
// a comment posted once per marker (a retried turn that commented before its outcome was stored), a new title
// (a GitLab draft keeps its prefix), and a draft marked ready for review.
import { afterEach, describe, expect, it } from 'vitest';
import { testConfig } from '../../src/config.ts';
import { createGitHubHost } from '../../src/hosts/github.ts';
import { createGitLabHost, readyTitle } from '../../src/hosts/gitlab.ts';
import { HostError } from '../../src/hosts/index.ts';
import { type GitHubServer, startGitHubServer } from '../helpers/github-server.ts';
import { type GitLabServer, startGitLabServer } from '../helpers/gitlab-server.ts';

const GH_TOKEN = `ghp_${'UpdT0ken'.repeat(4)}`;
const GL_TOKEN = `glpat-${'UpdT0ken'.repeat(3)}`;
const MARKER = '<!-- inkwell:turn:job_1:2 -->';

let gh: GitHubServer | null = null;
let gl: GitLabServer | null = null;
afterEach(async () => {
  await gh?.close();
  await gl?.close();
  gh = null;
  gl = null;
});

async function github(opts: { draft?: boolean; prefix?: string } = {}) {
  gh = await startGitHubServer({ token: GH_TOKEN, ...(opts.prefix ? { prefix: opts.prefix } : {}) });
  const host = createGitHubHost(testConfig({}, { GITHUB_API_URL: gh.apiUrl, GITHUB_TOKEN: GH_TOKEN }));
  const repository = opts.prefix ? `${new URL(gh.apiUrl).origin}/acme/docs` : 'https://github.com/acme/docs';
  const pr = (await host.ensurePullRequest({ repository, branch: 'inkwell/x', base: 'main', title: 'T', body: 'B', draft: opts.draft ?? false }))!;
  return { gh, host, write: { repository, number: pr.number } };
}

async function gitlab(opts: { draft?: boolean } = {}) {
  gl = await startGitLabServer({ token: GL_TOKEN });
  const base = testConfig();
  const host = createGitLabHost(testConfig({ hosts: { ...base.hosts, gitlabUrl: gl.url, gitlabToken: GL_TOKEN } }));
  const repository = `${gl.url}/acme/docs.git`;
  const mr = (await host.ensurePullRequest({ repository, branch: 'inkwell/x', base: 'main', title: 'T', body: 'B', draft: opts.draft ?? false }))!;
  return { gl, host, write: { repository, number: mr.number } };
}

describe('a comment posted once per marker', () => {
  it('GitHub: a second call with the same marker posts nothing, found past the first page of comments', async () => {
    const { gh, host, write } = await github();
    for (let i = 0; i < 130; i++) gh.comments.push({ owner: 'acme', repo: 'docs', number: write.number, body: `human comment ${i}` });
    expect(await host.commentOnPullRequest({ ...write, body: `Turn 2\n\n${MARKER}`, marker: MARKER })).toBe(true);
    expect(await host.commentOnPullRequest({ ...write, body: `Turn 2 again\n\n${MARKER}`, marker: MARKER })).toBe(false);
    expect(gh.comments.filter((c) => c.body.includes(MARKER)).map((c) => c.body)).toEqual([`Turn 2\n\n${MARKER}`]);
    // The second call read both pages (100 + 31) before deciding.
    const listed = gh.requests.filter((r) => r.method === 'GET' && r.path.endsWith(`/issues/${write.number}/comments`));
    expect(listed.map((r) => r.query.page ?? '1')).toEqual(['1', '2', '1', '2']);
    // Another marker (the next turn) is posted.
    expect(await host.commentOnPullRequest({ ...write, body: 'Turn 3', marker: '<!-- inkwell:turn:job_1:3 -->' })).toBe(true);
    // Without a marker, always posted.
    expect(await host.commentOnPullRequest({ ...write, body: 'plain' })).toBe(true);
    expect(gh.comments).toHaveLength(133);
  });

  it('GitHub: a comment whose answer was lost (502 after it was posted) is found by the retry, not posted twice', async () => {
    const { gh, host, write } = await github();
    gh.failNext(502, 1, { method: 'POST', afterHandling: true });
    expect(await host.commentOnPullRequest({ ...write, body: `Turn 2\n\n${MARKER}`, marker: MARKER })).toBe(false);
    expect(gh.comments.filter((c) => c.body.includes(MARKER))).toHaveLength(1);
    // A 502 before anything was posted: looked up again, then posted once.
    gh.failNext(502, 1, { method: 'POST' });
    const next = '<!-- inkwell:turn:job_1:3 -->';
    expect(await host.commentOnPullRequest({ ...write, body: `Turn 3\n\n${next}`, marker: next })).toBe(true);
    expect(gh.comments.filter((c) => c.body.includes(next))).toHaveLength(1);
  });

  it('GitLab: a note carrying the marker among the newest notes means nothing is posted', async () => {
    const { gl, host, write } = await gitlab();
    expect(await host.commentOnPullRequest({ ...write, body: `Turn 2\n\n${MARKER}`, marker: MARKER })).toBe(true);
    for (let i = 0; i < 120; i++) gl.notes.push({ projectPath: 'acme/docs', noteable: 'merge_requests', iid: write.number, body: `review ${i}` });
    expect(await host.commentOnPullRequest({ ...write, body: `Turn 2 again\n\n${MARKER}`, marker: MARKER })).toBe(false);
    expect(gl.notes.filter((n) => n.body.includes(MARKER))).toHaveLength(1);
    const listed = gl.requests.filter((r) => r.method === 'GET' && r.rawPath.endsWith(`/merge_requests/${write.number}/notes`));
    expect(listed.at(-1)!.query).toMatchObject({ sort: 'desc', order_by: 'created_at', per_page: '100' });
    expect(await host.commentOnPullRequest({ ...write, body: 'Turn 3', marker: '<!-- inkwell:turn:job_1:3 -->' })).toBe(true);
    expect(gl.notes).toHaveLength(122);
  });

  it('GitLab: a note whose answer was lost (502 after it was posted) is found by the retry, not posted twice', async () => {
    const { gl, host, write } = await gitlab();
    gl.failNext(502, 1, { method: 'POST', afterHandling: true });
    expect(await host.commentOnPullRequest({ ...write, body: `Turn 2\n\n${MARKER}`, marker: MARKER })).toBe(false);
    expect(gl.notes.filter((n) => n.body.includes(MARKER))).toHaveLength(1);
  });
});

describe('title and draft state', () => {
  it('GitHub: a found pull request says whether it is a draft and its body; the update sets a new title with the body', async () => {
    const { gh, host, write } = await github({ draft: true });
    expect(await host.ensurePullRequest({ repository: write.repository, branch: 'inkwell/x', base: 'main', title: 'X', body: 'Y' })).toMatchObject({
      created: false,
      draft: true,
      body: 'B',
    });
    await host.updatePullRequest({ ...write, body: 'B2', title: 'New title', draft: true });
    expect(gh.pulls[0]).toMatchObject({ title: 'New title', body: 'B2', draft: true });
    await host.updatePullRequest({ ...write, body: 'B3' });
    expect(gh.pulls[0]).toMatchObject({ title: 'New title', body: 'B3' });
    expect(gh.requests.filter((r) => r.method === 'PATCH').map((r) => r.body)).toEqual([{ body: 'B2', title: 'New title' }, { body: 'B3' }]);
  });

  it('GitHub: marks a draft ready through the GraphQL mutation with its node id; a ready one is left alone', async () => {
    const { gh, host, write } = await github({ draft: true });
    await host.markPullRequestReady(write);
    expect(gh.pulls[0]!.draft).toBe(false);
    const mutation = gh.requests.find((r) => r.path === '/graphql')!;
    expect(mutation.body.query).toContain('markPullRequestReadyForReview');
    expect(mutation.body.variables).toEqual({ id: expect.stringMatching(/^PR_kw/) });
    expect(mutation.headers.authorization).toBe(`token ${GH_TOKEN}`);
    await host.markPullRequestReady(write);
    expect(gh.requests.filter((r) => r.path === '/graphql')).toHaveLength(1);
  });

  it('GitHub Enterprise: the mutation goes to /api/graphql', async () => {
    const { gh, host, write } = await github({ draft: true, prefix: '/api/v3' });
    await host.markPullRequestReady(write);
    expect(gh.pulls[0]!.draft).toBe(false);
    expect(gh.requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual(['/api/v3/repos/acme/docs/pulls', '/api/graphql']);
  });

  it('GitHub: a mutation answered with GraphQL errors is a HostError naming the step', async () => {
    const { gh, host, write } = await github({ draft: true });
    gh.pulls[0]!.staleNodeId = 'PR_kwGone';
    const err = await host.markPullRequestReady(write).catch((e) => e);
    expect(err).toBeInstanceOf(HostError);
    expect(err.message).toContain(`ready for review of pull request acme/docs#${write.number}`);
    expect(err.message).toContain('Could not resolve to a node');
  });

  it('GitLab: a found merge request says whether it is a draft; a new title keeps a draft’s prefix; ready drops every prefix', async () => {
    const { gl, host, write } = await gitlab({ draft: true });
    expect(gl.mergeRequests[0]).toMatchObject({ title: 'Draft: T', draft: true });
    expect(await host.ensurePullRequest({ repository: write.repository, branch: 'inkwell/x', base: 'main', title: 'X', body: 'Y' })).toMatchObject({
      created: false,
      draft: true,
      body: 'B',
    });
    await host.updatePullRequest({ ...write, body: 'B2', title: 'New title', draft: true });
    expect(gl.mergeRequests[0]).toMatchObject({ title: 'Draft: New title', description: 'B2', draft: true });
    gl.mergeRequests[0]!.title = 'Draft: [WIP] New title';
    await host.markPullRequestReady(write);
    expect(gl.mergeRequests[0]).toMatchObject({ title: 'New title', draft: false });
    const puts = gl.requests.filter((r) => r.method === 'PUT').length;
    await host.markPullRequestReady(write);
    expect(gl.requests.filter((r) => r.method === 'PUT')).toHaveLength(puts);
    expect(readyTitle('(Draft) Draft - x')).toBe('x');
  });

  it('GitLab: a refused ready step is a HostError naming it, the merge request stays a draft', async () => {
    const { gl, host, write } = await gitlab({ draft: true });
    gl.failNext(403, 1, { method: 'PUT', message: '403 Forbidden' });
    const err = await host.markPullRequestReady(write).catch((e) => e);
    expect(err).toBeInstanceOf(HostError);
    expect(err.message).toContain(`ready state of merge request acme/docs!${write.number}`);
    expect(gl.mergeRequests[0]!.draft).toBe(true);
  });
});
