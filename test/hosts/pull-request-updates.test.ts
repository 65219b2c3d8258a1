// Writes to an open pull (merge) request, on GitHub and GitLab through their clients against the local fakes:
// a comment posted once per marker (a retried turn that commented before its outcome was stored).
import { afterEach, describe, expect, it } from 'vitest';
import { testConfig } from '../../src/config.ts';
import { createGitHubHost } from '../../src/hosts/github.ts';
import { createGitLabHost } from '../../src/hosts/gitlab.ts';
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

async function github() {
  gh = await startGitHubServer({ token: GH_TOKEN });
  const host = createGitHubHost(testConfig({}, { GITHUB_API_URL: gh.apiUrl, GITHUB_TOKEN: GH_TOKEN }));
  const pr = (await host.ensurePullRequest({ repository: 'https://github.com/acme/docs', branch: 'inkwell/x', base: 'main', title: 'T', body: 'B' }))!;
  return { gh, host, write: { repository: 'https://github.com/acme/docs', number: pr.number } };
}

async function gitlab() {
  gl = await startGitLabServer({ token: GL_TOKEN });
  const base = testConfig();
  const host = createGitLabHost(testConfig({ hosts: { ...base.hosts, gitlabUrl: gl.url, gitlabToken: GL_TOKEN } }));
  const repository = `${gl.url}/acme/docs.git`;
  const mr = (await host.ensurePullRequest({ repository, branch: 'inkwell/x', base: 'main', title: 'T', body: 'B' }))!;
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
