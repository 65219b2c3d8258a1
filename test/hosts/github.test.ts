// GitHub host through Octokit against a local server speaking GitHub's pull-request REST API.
import { afterEach, describe, expect, it } from 'vitest';
import { testConfig } from '../../src/config.ts';
import { parseRepository } from '../../src/hosts/detect.ts';
import { createGitHubHost } from '../../src/hosts/github.ts';
import { HostError, hostConfigError, hostFor } from '../../src/hosts/index.ts';
import { type GitHubServer, startGitHubServer } from '../helpers/github-server.ts';

const TOKEN = `ghp_${'HostT0ken'.repeat(4)}`;
let gh: GitHubServer | null = null;
afterEach(async () => {
  await gh?.close();
  gh = null;
});

const input = { repository: 'https://github.com/acme/docs.git', branch: 'inkwell/abc-fix', base: 'main', title: 'Fix typo', body: 'Fixed it.' };

describe('GitHub host', () => {
  it('creates a pull request with head, base, title, body and draft; authenticates with the token', async () => {
    gh = await startGitHubServer({ token: TOKEN });
    const host = createGitHubHost(testConfig({}, { GITHUB_API_URL: gh.apiUrl, GITHUB_TOKEN: TOKEN }));
    const pr = await host.ensurePullRequest({ ...input, draft: true });
    expect(pr).toEqual({ url: 'https://github.com/acme/docs/pull/1', number: 1, created: true });
    expect(gh.pulls[0]).toMatchObject({
      owner: 'acme',
      repo: 'docs',
      head: 'inkwell/abc-fix',
      base: 'main',
      title: 'Fix typo',
      body: 'Fixed it.',
      draft: true,
    });
    expect(gh.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /repos/acme/docs/pulls', 'POST /repos/acme/docs/pulls']);
    expect(gh.requests[0]!.query).toMatchObject({ head: 'acme:inkwell/abc-fix', state: 'open' });
    expect(gh.requests.every((r) => r.headers.authorization === `token ${TOKEN}`)).toBe(true);
  });

  it('spaces pull-request creations on one GitHub instance INKWELL_GITHUB_CREATE_INTERVAL_MS apart, across runs', async () => {
    gh = await startGitHubServer({ token: TOKEN });
    // Two runs' hosts (as two worker slots have), creating at once: the second creation waits its turn. Only a
    // lower bound is asserted (a busy machine can only make the gap longer); 2 s is apart from the default.
    const config = testConfig({}, { GITHUB_API_URL: gh.apiUrl, GITHUB_TOKEN: TOKEN, INKWELL_GITHUB_CREATE_INTERVAL_MS: '2000' });
    const [a, b] = await Promise.all([
      createGitHubHost(config).ensurePullRequest({ ...input, branch: 'inkwell/one' }),
      createGitHubHost(config).ensurePullRequest({ ...input, branch: 'inkwell/two' }),
    ]);
    expect([a?.number, b?.number].sort()).toEqual([1, 2]);
    const creations = gh.requests.filter((r) => r.method === 'POST').map((r) => r.at);
    expect(creations).toHaveLength(2);
    expect(Math.abs((creations[1] as number) - (creations[0] as number))).toBeGreaterThanOrEqual(1500);
  });

  it('reuses the open pull request for the branch; a closed one does not count', async () => {
    gh = await startGitHubServer({ token: TOKEN });
    const host = createGitHubHost(testConfig({}, { GITHUB_API_URL: gh.apiUrl, GITHUB_TOKEN: TOKEN }));
    const first = await host.ensurePullRequest(input);
    const again = await host.ensurePullRequest({ ...input, title: 'Other title' });
    expect(again).toEqual({ ...first, created: false, draft: false, body: input.body });
    expect(gh.pulls).toHaveLength(1);
    gh.pulls[0]!.state = 'closed';
    const fresh = await host.ensurePullRequest(input);
    expect(fresh?.number).toBe(2);
  });

  it('a 422 "already exists" race on create resolves to the existing pull request', async () => {
    gh = await startGitHubServer({ token: TOKEN });
    const host = createGitHubHost(testConfig({}, { GITHUB_API_URL: gh.apiUrl, GITHUB_TOKEN: TOKEN }));
    // Both lookups happen before either create: one create wins, the other gets 422 and re-lists.
    const [a, b] = await Promise.all([host.ensurePullRequest(input), host.ensurePullRequest(input)]);
    expect([a?.created, b?.created].sort()).toEqual([false, true]);
    expect(a?.url).toBe(b?.url);
    expect(gh.pulls).toHaveLength(1);
  });

  it('errors are HostErrors with the status and GitHub message, never the token', async () => {
    gh = await startGitHubServer({ token: 'another-token' });
    const host = createGitHubHost(testConfig({}, { GITHUB_API_URL: gh.apiUrl, GITHUB_TOKEN: TOKEN }));
    const err = await host.ensurePullRequest(input).catch((e) => e);
    expect(err).toBeInstanceOf(HostError);
    expect(err.message).toContain('HTTP 401');
    expect(err.message).toContain('Bad credentials');
    expect(err.message).not.toContain(TOKEN);
  });

  it('retries transient 5xx answers', async () => {
    gh = await startGitHubServer({ token: TOKEN });
    gh.failNext(503, 2);
    const host = createGitHubHost(testConfig({}, { GITHUB_API_URL: gh.apiUrl, GITHUB_TOKEN: TOKEN }), { sleep: async () => {} });
    expect(await host.ensurePullRequest(input)).toEqual({ url: 'https://github.com/acme/docs/pull/1', number: 1, created: true });
  });

  it('GitHub Enterprise: API under /api/v3 and repositories on the API host', async () => {
    gh = await startGitHubServer({ token: TOKEN, prefix: '/api/v3', htmlHost: 'ghe.example.com' });
    const apiHost = new URL(gh.apiUrl).host;
    const config = testConfig({}, { GITHUB_API_URL: gh.apiUrl, GITHUB_TOKEN: TOKEN });
    const repository = `http://${apiHost}/docs-team/handbook.git`;
    expect(parseRepository(repository, config)).toMatchObject({ kind: 'github', owner: 'docs-team', repo: 'handbook' });
    const host = hostFor(repository, config);
    expect(host.kind).toBe('github');
    const pr = await host.ensurePullRequest({ ...input, repository });
    expect(pr?.url).toBe('https://ghe.example.com/docs-team/handbook/pull/1');
    expect(gh.requests[0]!.path).toBe('/api/v3/repos/docs-team/handbook/pulls');
  });
});

describe('host selection', () => {
  const config = testConfig({}, { GITLAB_URL: 'https://git.corp.example', GITHUB_TOKEN: TOKEN });

  it('picks the host from the repository URL', () => {
    expect(hostFor('https://github.com/acme/docs', config).kind).toBe('github');
    expect(hostFor('git@github.com:acme/docs.git', config).kind).toBe('github');
    expect(hostFor('https://gitlab.com/group/sub/docs.git', config).kind).toBe('gitlab');
    expect(hostFor('https://git.corp.example/team/docs', config).kind).toBe('gitlab');
    expect(hostFor('/srv/git/docs.git', config).kind).toBe('local');
    expect(hostFor('file:///srv/git/docs.git', config).kind).toBe('local');
    expect(() => hostFor('https://bitbucket.org/acme/docs', config)).toThrow(HostError);
  });

  it('parses owners, repositories and GitLab project paths', () => {
    expect(parseRepository('https://github.com/acme/docs.git/', config)).toMatchObject({
      kind: 'github',
      owner: 'acme',
      repo: 'docs',
      origin: 'https://github.com',
    });
    expect(parseRepository('ssh://git@github.com/acme/docs.git', config)).toMatchObject({ kind: 'github', owner: 'acme', repo: 'docs' });
    expect(parseRepository('https://gitlab.com/g/s/docs.git', config)).toMatchObject({ kind: 'gitlab', projectPath: 'g/s/docs' });
    expect(parseRepository('https://github.com/acme', config).kind).toBe('unknown');
    expect(parseRepository('file:///srv/a%20b.git', config)).toEqual({ kind: 'local', path: '/srv/a b.git' });
  });

  it('hostConfigError names the missing token', () => {
    expect(hostConfigError('https://github.com/acme/docs', testConfig())).toContain('GITHUB_TOKEN');
    expect(hostConfigError('https://gitlab.com/acme/docs', testConfig())).toContain('GITLAB_TOKEN');
    expect(hostConfigError('https://github.com/acme/docs', config)).toBeNull();
    expect(hostConfigError('/srv/docs.git', testConfig())).toBeNull();
  });

  it('the local host never opens a pull request', async () => {
    expect(await hostFor('/srv/docs.git', config).ensurePullRequest({ ...input, repository: '/srv/docs.git' })).toBeNull();
  });
});
