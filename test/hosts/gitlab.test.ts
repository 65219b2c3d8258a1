import { afterEach, describe, expect, it } from 'vitest';
import { testConfig } from '../../src/config.ts';
import { createGitLabHost, gitlabProjectPath, isGitLabRepository } from '../../src/hosts/gitlab.ts';
import { HostError } from '../../src/hosts/index.ts';
import { type GitLabServer, startGitLabServer } from '../helpers/gitlab-server.ts';

const TOKEN = 'glpat-TestTokenAbcdefghij0123456789';

function configFor(server: GitLabServer, token: string | null = TOKEN) {
  const base = testConfig();
  return testConfig({ hosts: { ...base.hosts, gitlabUrl: server.url, gitlabToken: token ?? undefined } });
}

describe('GitLab repository detection', () => {
  const cfg = testConfig({ hosts: { ...testConfig().hosts, gitlabUrl: 'https://gitlab.example.com' } });

  it('recognises gitlab.com and the GITLAB_URL host in https, ssh and scp forms', () => {
    for (const r of [
      'https://gitlab.com/acme/docs',
      'https://gitlab.com/acme/docs.git',
      'https://gitlab.example.com/group/sub/repo.git',
      'ssh://git@gitlab.example.com/group/repo.git',
      'git@gitlab.com:acme/docs.git',
      'https://GitLab.Example.com/group/repo/',
    ]) {
      expect(isGitLabRepository(r, cfg), r).toBe(true);
    }
    for (const r of ['https://github.com/acme/docs', 'https://gitlab.other.com/a/b', '/srv/git/docs.git', 'file:///tmp/x', 'https://gitlab.com/onlyone']) {
      expect(isGitLabRepository(r, cfg), r).toBe(false);
    }
  });

  it('takes the project path, nested groups included, without .git', () => {
    expect(gitlabProjectPath('https://gitlab.example.com/group/sub/repo.git', cfg)).toBe('group/sub/repo');
    expect(gitlabProjectPath('git@gitlab.com:acme/docs.git', cfg)).toBe('acme/docs');
    expect(gitlabProjectPath('https://github.com/acme/docs', cfg)).toBeNull();
  });

  it('strips the path prefix of a relative-URL install', () => {
    const c = testConfig({ hosts: { ...testConfig().hosts, gitlabUrl: 'https://example.com/gitlab' } });
    expect(gitlabProjectPath('https://example.com/gitlab/team/docs.git', c)).toBe('team/docs');
  });
});

describe('GitLab merge requests against a local GitLab API', () => {
  let server: GitLabServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('creates a merge request with the right source, target, title and description', async () => {
    server = await startGitLabServer({ token: TOKEN });
    const host = createGitLabHost(configFor(server));
    expect(host.kind).toBe('gitlab');
    const repository = `${server.url}/group/sub/repo.git`;
    const pr = await host.ensurePullRequest({
      repository,
      branch: 'inkwell/abc-fix-typo',
      base: 'main',
      title: 'Fix typo',
      body: 'Fixes the typo on the home page.',
    });

    expect(server.mergeRequests).toHaveLength(1);
    const mr = server.mergeRequests[0];
    expect(mr).toMatchObject({
      projectPath: 'group/sub/repo',
      source_branch: 'inkwell/abc-fix-typo',
      target_branch: 'main',
      title: 'Fix typo',
      description: 'Fixes the typo on the home page.',
      draft: false,
      state: 'opened',
    });
    expect(pr).toEqual({ url: `${server.url}/group/sub/repo/-/merge_requests/1`, number: 1, created: true });

    // The library called the real endpoints, with the URL-encoded project path and the token header.
    const [list, create] = server.requests;
    expect(list).toMatchObject({ method: 'GET', rawPath: '/api/v4/projects/group%2Fsub%2Frepo/merge_requests', project: 'group/sub/repo' });
    expect(list?.query).toMatchObject({ source_branch: 'inkwell/abc-fix-typo', state: 'opened' });
    expect(create).toMatchObject({ method: 'POST', rawPath: '/api/v4/projects/group%2Fsub%2Frepo/merge_requests' });
    expect(create?.body).toMatchObject({ source_branch: 'inkwell/abc-fix-typo', target_branch: 'main', title: 'Fix typo' });
    for (const r of server.requests) expect(r.headers['private-token']).toBe(TOKEN);
    expect(pr?.url).not.toContain(TOKEN);
  });

  it('reuses the open merge request of the branch instead of creating a second one', async () => {
    server = await startGitLabServer({ token: TOKEN });
    const host = createGitLabHost(configFor(server));
    const input = { repository: `${server.url}/acme/docs`, branch: 'inkwell/x', base: 'main', title: 'First', body: 'b' };
    const first = await host.ensurePullRequest(input);
    const second = await host.ensurePullRequest({ ...input, title: 'Follow-up' });
    expect(second).toEqual({ ...first, created: false, draft: false, body: 'b' });
    expect(server.mergeRequests).toHaveLength(1);
    expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(1);

    // Another branch gets its own; a closed MR is not reused.
    const other = await host.ensurePullRequest({ ...input, branch: 'inkwell/y' });
    expect(other?.number).toBe(2);
    (server.mergeRequests[0] as { state: string }).state = 'closed';
    const reopened = await host.ensurePullRequest(input);
    expect(reopened?.number).toBe(3);
    expect(server.requests.filter((r) => r.method === 'POST')).toHaveLength(3);
  });

  it('marks drafts with the Draft: title prefix', async () => {
    server = await startGitLabServer({ token: TOKEN });
    const host = createGitLabHost(configFor(server));
    await host.ensurePullRequest({ repository: `${server.url}/acme/docs`, branch: 'b1', base: 'main', title: 'Rewrite intro', body: '', draft: true });
    await host.ensurePullRequest({ repository: `${server.url}/acme/docs`, branch: 'b2', base: 'main', title: 'Draft: already', body: '', draft: true });
    expect(server.mergeRequests.map((m) => [m.title, m.draft])).toEqual([
      ['Draft: Rewrite intro', true],
      ['Draft: already', true],
    ]);
  });

  it('reuses the merge request another run opened between lookup and create (409)', async () => {
    server = await startGitLabServer({ token: TOKEN });
    const host = createGitLabHost(configFor(server));
    // Another run opened !7 for the branch; our lookup does not see it yet, so our create gets a 409.
    server.mergeRequests.push({
      id: 1,
      iid: 7,
      projectPath: 'acme/docs',
      title: 't',
      description: null,
      source_branch: 'race',
      target_branch: 'main',
      state: 'opened',
      draft: false,
    });
    server.staleLists(1);
    const pr = await host.ensurePullRequest({ repository: `${server.url}/acme/docs`, branch: 'race', base: 'main', title: 't', body: '' });
    expect(pr).toMatchObject({ url: `${server.url}/acme/docs/-/merge_requests/7`, number: 7, created: false, draft: false });
    expect(server.requests.map((r) => r.method)).toEqual(['GET', 'POST', 'GET']);
    expect(server.mergeRequests).toHaveLength(1);
  });

  it('reports API errors without the token, and refuses to run without one', async () => {
    server = await startGitLabServer({ token: 'glpat-SomethingElseEntirely0123456' });
    const host = createGitLabHost(configFor(server));
    const err = await host.ensurePullRequest({ repository: `${server.url}/acme/docs`, branch: 'b', base: 'main', title: 't', body: '' }).catch((e) => e);
    expect(err).toBeInstanceOf(HostError);
    expect(err.message).toMatch(/GitLab merge request for acme\/docs branch b failed: HTTP 401: 401 Unauthorized/);
    expect(err.message).not.toContain(TOKEN);
    expect(JSON.stringify(err)).not.toContain(TOKEN);
    expect(err.cause).toBeUndefined();

    const noToken = createGitLabHost(configFor(server, null));
    await expect(noToken.ensurePullRequest({ repository: `${server.url}/acme/docs`, branch: 'b', base: 'main', title: 't', body: '' })).rejects.toThrow(
      /GITLAB_TOKEN is not set/,
    );
    await expect(host.ensurePullRequest({ repository: 'https://github.com/acme/docs', branch: 'b', base: 'main', title: 't', body: '' })).rejects.toThrow(
      /not a GitLab repository/,
    );
  });

  it('surfaces a server error with its status after its retries and survives a transient 502', async () => {
    server = await startGitLabServer({ token: TOKEN });
    const host = createGitLabHost(configFor(server), { sleep: async () => {} });
    server.failNext(502, 2);
    const pr = await host.ensurePullRequest({ repository: `${server.url}/acme/docs`, branch: 'b', base: 'main', title: 't', body: '' });
    expect(pr?.number).toBe(1);
    server.failNext(500, 3);
    const err = await host.ensurePullRequest({ repository: `${server.url}/acme/docs`, branch: 'c', base: 'main', title: 't', body: '' }).catch((e) => e);
    expect(err).toBeInstanceOf(HostError);
    expect(err.message).toContain('HTTP 500');
  });

  it('works with a GitLab installed under a relative URL', async () => {
    server = await startGitLabServer({ token: TOKEN, prefix: '/gitlab' });
    const host = createGitLabHost(configFor(server));
    const pr = await host.ensurePullRequest({ repository: `${server.url}/team/docs.git`, branch: 'b', base: 'main', title: 't', body: '' });
    expect(pr?.url).toBe(`${server.url}/team/docs/-/merge_requests/1`);
    expect(server.requests[0]?.rawPath).toBe('/gitlab/api/v4/projects/team%2Fdocs/merge_requests');
  });
});
