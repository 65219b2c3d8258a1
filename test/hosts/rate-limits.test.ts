// Code-host rate limits and transient failures against the local fakes: the host waits as GitHub or GitLab
// asks (a fake clock and a sleep that only records, so no rate-limit wait is real), gives up with
// HostRateLimitedError when the wait would outlast INKWELL_HOST_MAX_WAIT_MS, and never opens a pull request twice.
// GitHub's waits are computed by Octokit's throttling plugin from the real clock, so its resets are set from it;
// its 5xx retries wait in Octokit's retry plugin (0.5 s and 2 s, for real: asserted by count, never by time).
import { afterEach, describe, expect, it } from 'vitest';
import { testConfig } from '../../src/config.ts';
import { createGitHubHost } from '../../src/hosts/github.ts';
import { createGitLabHost } from '../../src/hosts/gitlab.ts';
import type { HostDeps, HostWait } from '../../src/hosts/index.ts';
import { HostError, HostRateLimitedError } from '../../src/hosts/index.ts';
import { type GitHubServer, startGitHubServer } from '../helpers/github-server.ts';
import { type GitLabServer, startGitLabServer } from '../helpers/gitlab-server.ts';

const GH_TOKEN = `ghp_${'RateT0ken'.repeat(4)}`;
const GL_TOKEN = 'glpat-RateTokenAbcdefghij0123456789';
const T0 = Date.parse('2026-03-01T12:00:00Z');

/** A clock that only moves when the host sleeps; every sleep is recorded. */
function fakeTime(start = T0): HostDeps & { slept: number[] } {
  let t = start;
  const slept: number[] = [];
  return {
    slept,
    now: () => t,
    sleep: async (ms) => {
      slept.push(ms);
      t += ms;
    },
  };
}

let gh: GitHubServer | null = null;
let gl: GitLabServer | null = null;
afterEach(async () => {
  await gh?.close();
  await gl?.close();
  gh = null;
  gl = null;
});

const ghInput = { repository: 'https://github.com/acme/docs.git', branch: 'inkwell/abc-fix', base: 'main', title: 'Fix typo', body: 'Fixed it.' };

async function github(env: Record<string, string> = {}) {
  gh = await startGitHubServer({ token: GH_TOKEN });
  const time = fakeTime(Date.now());
  const host = createGitHubHost(testConfig({}, { GITHUB_API_URL: gh.apiUrl, GITHUB_TOKEN: GH_TOKEN, ...env }), time);
  return { server: gh, host, time };
}

/** An x-ratelimit-reset `seconds` from now, and the wait Octokit computes for it (to the reset, plus a second). */
function resetIn(seconds: number): { reset: number; waitMs: [number, number] } {
  const now = Date.now();
  const reset = Math.ceil(now / 1000) + seconds;
  // Whole seconds from the moment the answer is read (at most a second later, on a slow machine two) to the reset.
  return { reset, waitMs: [(seconds - 1) * 1000, (seconds + 2) * 1000] };
}

const SECONDARY = 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.';

describe('GitHub rate limits', () => {
  for (const status of [403, 429]) {
    it(`primary limit (HTTP ${status}, x-ratelimit-remaining: 0): waits until x-ratelimit-reset, then opens the pull request`, async () => {
      const { server, host, time } = await github();
      const { reset, waitMs } = resetIn(120);
      server.failNext(status, 1, {
        message: 'API rate limit exceeded for user ID 1.',
        headers: { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      });
      const pr = await host.ensurePullRequest(ghInput);
      expect(pr?.number).toBe(1);
      expect(time.slept).toHaveLength(1);
      expect(time.slept[0]).toBeGreaterThanOrEqual(waitMs[0]);
      expect(time.slept[0]).toBeLessThanOrEqual(waitMs[1]);
      expect(time.slept[0]! % 1000).toBe(0);
      expect(server.pulls).toHaveLength(1);
    });
  }

  for (const status of [403, 429]) {
    it(`secondary limit (HTTP ${status}) with retry-after: waits that many seconds`, async () => {
      const { server, host, time } = await github();
      server.failNext(status, 1, { message: SECONDARY, headers: { 'retry-after': '30' } });
      expect((await host.ensurePullRequest(ghInput))?.number).toBe(1);
      expect(time.slept).toEqual([30_000]);
    });
  }

  it('body updates and comments on a pull request wait out a secondary limit the same way, and refuse one beyond the budget', async () => {
    const { server, host, time } = await github({ INKWELL_HOST_MAX_WAIT_MS: '60000' });
    const pr = (await host.ensurePullRequest(ghInput))!;
    const write = { repository: ghInput.repository, number: pr.number };
    server.failNext(403, 1, { message: SECONDARY, headers: { 'retry-after': '30' }, method: 'PATCH' });
    await host.updatePullRequest({ ...write, body: 'New body' });
    expect(server.pulls[0]!.body).toBe('New body');
    expect(time.slept).toEqual([30_000]);
    server.failNext(429, 1, { message: SECONDARY, headers: { 'retry-after': '3600' }, method: 'POST' });
    const err = await host.commentOnPullRequest({ ...write, body: 'A turn' }).catch((e) => e);
    expect(err).toBeInstanceOf(HostRateLimitedError);
    expect(err.message).toContain(`comment on pull request acme/docs#${pr.number}`);
    expect(server.comments).toEqual([]);
    await host.commentOnPullRequest({ ...write, body: 'A turn' });
    expect(server.comments).toMatchObject([{ number: pr.number, body: 'A turn' }]);
  });

  it('marking a draft ready (the GraphQL mutation) waits out a secondary limit the same way, and refuses one beyond the budget', async () => {
    const { server, host, time } = await github({ INKWELL_HOST_MAX_WAIT_MS: '60000' });
    const pr = (await host.ensurePullRequest({ ...ghInput, draft: true }))!;
    const target = { repository: ghInput.repository, number: pr.number };
    server.failNext(403, 1, { message: SECONDARY, headers: { 'retry-after': '3600' }, method: 'POST' });
    const err = await host.markPullRequestReady(target).catch((e) => e);
    expect(err).toBeInstanceOf(HostRateLimitedError);
    expect(err.message).toContain(`ready for review of pull request acme/docs#${pr.number}`);
    expect(server.pulls[0]!.draft).toBe(true);
    server.failNext(403, 1, { message: SECONDARY, headers: { 'retry-after': '30' }, method: 'POST' });
    await host.markPullRequestReady(target);
    expect(time.slept).toEqual([30_000]);
    expect(server.pulls[0]!.draft).toBe(false);
  });

  it('secondary limit without retry-after: waits a minute each time it persists', async () => {
    const { server, host, time } = await github();
    server.failNext(403, 2, { message: SECONDARY });
    expect((await host.ensurePullRequest(ghInput))?.number).toBe(1);
    expect(time.slept).toEqual([60_000, 60_000]);
  });

  it('reports each wait (for the run log) with the host and the kind of limit', async () => {
    gh = await startGitHubServer({ token: GH_TOKEN });
    const waits: HostWait[] = [];
    const time = fakeTime(Date.now());
    const host = createGitHubHost(testConfig({}, { GITHUB_API_URL: gh.apiUrl, GITHUB_TOKEN: GH_TOKEN }), { ...time, onWait: (w) => waits.push(w) });
    gh.failNext(429, 1, { message: SECONDARY, headers: { 'retry-after': '7' } });
    expect((await host.ensurePullRequest(ghInput))?.number).toBe(1);
    expect(waits).toEqual([{ host: 'GitHub', kind: 'rate_limited', waitMs: 7000, reason: 'secondary rate limit (wait 7 s)' }]);
  });

  for (const [status, message] of [
    [403, 'Resource not accessible by integration'],
    [429, 'Too many requests'],
  ] as const) {
    it(`a ${status} that is not one of GitHub's rate limits fails at once (no wait, no retry)`, async () => {
      const { server, host, time } = await github();
      server.failNext(status, 1, { message });
      const err = await host.ensurePullRequest(ghInput).catch((e) => e);
      expect(err).toBeInstanceOf(HostError);
      expect(err).not.toBeInstanceOf(HostRateLimitedError);
      expect(err.message).toContain(message);
      expect(time.slept).toEqual([]);
      expect(server.requests).toHaveLength(1);
    });
  }

  it('a reset beyond INKWELL_HOST_MAX_WAIT_MS fails at once with HostRateLimitedError naming GitHub and when to retry', async () => {
    const { server, host, time } = await github({ INKWELL_HOST_MAX_WAIT_MS: String(5 * 60_000) });
    const { reset } = resetIn(3600);
    server.failNext(403, 1, { message: 'API rate limit exceeded', headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) } });
    const err = await host.ensurePullRequest(ghInput).catch((e) => e);
    expect(err).toBeInstanceOf(HostRateLimitedError);
    expect(err.retryAt.getTime()).toBe(reset * 1000 + 1000);
    expect(err.message).toContain('GitHub rate limit');
    expect(err.message).toContain('acme/docs');
    expect(err.message).toContain(`retry after ${err.retryAt.toISOString()}`);
    expect(err.message).not.toContain(GH_TOKEN);
    expect(time.slept).toEqual([]);
    expect(server.pulls).toHaveLength(0);
  });

  it('waits add up: the wait that would pass the budget fails', async () => {
    const { server, host, time } = await github({ INKWELL_HOST_MAX_WAIT_MS: String(100_000) });
    server.failNext(429, 3, { message: SECONDARY, headers: { 'retry-after': '40' } });
    const err = await host.ensurePullRequest(ghInput).catch((e) => e);
    expect(err).toBeInstanceOf(HostRateLimitedError);
    expect(err.message).toContain('after waiting 1.3 min');
    expect(time.slept).toEqual([40_000, 40_000]);
    expect(server.pulls).toHaveLength(0);
  });

  it('a stopped run ends the wait', async () => {
    gh = await startGitHubServer({ token: GH_TOKEN });
    const host = createGitHubHost(testConfig({}, { GITHUB_API_URL: gh.apiUrl, GITHUB_TOKEN: GH_TOKEN })); // real sleep
    gh.failNext(429, 1, { message: SECONDARY, headers: { 'retry-after': '600' } });
    const controller = new AbortController();
    const pending = host.ensurePullRequest({ ...ghInput, signal: controller.signal }).catch((e) => e);
    // Stop once the host has answered 429: the wait has begun, or is about to; either way it ends now.
    while (gh.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort(new Error('stopped'));
    expect((await pending).message).toBe('stopped');
    expect(gh.pulls).toHaveLength(0);
  });

  it('a stopped run ends a 5xx retry too', async () => {
    gh = await startGitHubServer({ token: GH_TOKEN });
    const host = createGitHubHost(testConfig({}, { GITHUB_API_URL: gh.apiUrl, GITHUB_TOKEN: GH_TOKEN }));
    gh.failNext(503, 10);
    const controller = new AbortController();
    const pending = host.ensurePullRequest({ ...ghInput, signal: controller.signal }).catch((e) => e);
    while (gh.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort(new Error('stopped'));
    expect((await pending).message).toBe('stopped');
  });

  it('5xx on create after GitHub created it (answer lost): the retried create meets the existing one, no second pull request', async () => {
    const { server, host } = await github();
    server.failNext(502, 1, { method: 'POST', afterHandling: true });
    const pr = await host.ensurePullRequest(ghInput);
    expect(pr).toEqual({ url: 'https://github.com/acme/docs/pull/1', number: 1, created: false, draft: false, body: 'Fixed it.' });
    expect(server.pulls).toHaveLength(1);
    // Lookup, create (502, created), create again (422: it exists), lookup finds it.
    expect(server.requests.map((r) => r.method)).toEqual(['GET', 'POST', 'POST', 'GET']);
  });

  it('5xx every time: two retries, then host_error with the status', async () => {
    const { server, host, time } = await github();
    server.failNext(503, 10);
    const err = await host.ensurePullRequest(ghInput).catch((e) => e);
    expect(err).toBeInstanceOf(HostError);
    expect(err).not.toBeInstanceOf(HostRateLimitedError);
    expect(err.message).toContain('HTTP 503');
    expect(time.slept).toEqual([]);
    expect(server.requests).toHaveLength(3);
  });
});

const glInput = (server: GitLabServer) => ({
  repository: `${server.url}/acme/docs`,
  branch: 'inkwell/abc-fix',
  base: 'main',
  title: 'Fix typo',
  body: 'Fixed it.',
});

async function gitlab(env: Record<string, string> = {}) {
  gl = await startGitLabServer({ token: GL_TOKEN });
  const time = fakeTime();
  const host = createGitLabHost(testConfig({}, { GITLAB_URL: gl.url, GITLAB_TOKEN: GL_TOKEN, ...env }), time);
  return { server: gl, host, time };
}

describe('GitLab rate limits', () => {
  it('429 with Retry-After: one request, then waits as asked (gitbeaker’s own instant retries are off)', async () => {
    const { server, host, time } = await gitlab();
    server.failNext(429, 1, { message: 'Retry later', headers: { 'retry-after': '30' } });
    const mr = await host.ensurePullRequest(glInput(server));
    expect(mr?.number).toBe(1);
    expect(time.slept).toEqual([30_000]);
    expect(server.requests.map((r) => r.method)).toEqual(['GET', 'GET', 'POST']);
  });

  it('description updates and notes on a merge request wait out a 429 the same way, and refuse one beyond the budget', async () => {
    const { server, host, time } = await gitlab({ INKWELL_HOST_MAX_WAIT_MS: '60000' });
    const mr = (await host.ensurePullRequest(glInput(server)))!;
    const write = { repository: glInput(server).repository, number: mr.number };
    server.failNext(429, 1, { headers: { 'retry-after': '30' }, method: 'PUT' });
    await host.updatePullRequest({ ...write, body: 'New description' });
    expect(server.mergeRequests[0]!.description).toBe('New description');
    expect(time.slept).toEqual([30_000]);
    server.failNext(429, 1, { headers: { 'retry-after': '3600' }, method: 'POST' });
    const err = await host.commentOnPullRequest({ ...write, body: 'A turn' }).catch((e) => e);
    expect(err).toBeInstanceOf(HostRateLimitedError);
    expect(err.message).toContain('GitLab rate limit');
    expect(server.notes).toEqual([]);
    await host.commentOnPullRequest({ ...write, body: 'A turn' });
    expect(server.notes).toMatchObject([{ noteable: 'merge_requests', iid: mr.number, body: 'A turn' }]);
  });

  it('marking a draft ready waits out a 429 the same way, and refuses one beyond the budget', async () => {
    const { server, host, time } = await gitlab({ INKWELL_HOST_MAX_WAIT_MS: '60000' });
    const mr = (await host.ensurePullRequest({ ...glInput(server), draft: true }))!;
    const target = { repository: glInput(server).repository, number: mr.number };
    server.failNext(429, 1, { headers: { 'retry-after': '3600' }, method: 'PUT' });
    expect(await host.markPullRequestReady(target).catch((e) => e)).toBeInstanceOf(HostRateLimitedError);
    expect(server.mergeRequests[0]!.draft).toBe(true);
    server.failNext(429, 1, { headers: { 'retry-after': '30' }, method: 'PUT' });
    await host.markPullRequestReady(target);
    expect(time.slept).toEqual([30_000]);
    expect(server.mergeRequests[0]).toMatchObject({ draft: false, title: glInput(server).title });
  });

  it('429 with only RateLimit-Reset: waits until the reset', async () => {
    const { server, host, time } = await gitlab();
    server.failNext(429, 1, { headers: { 'ratelimit-reset': String(T0 / 1000 + 45) } });
    expect((await host.ensurePullRequest(glInput(server)))?.number).toBe(1);
    expect(time.slept).toEqual([46_000]);
  });

  it('429 without hints: waits a minute', async () => {
    const { server, host, time } = await gitlab();
    server.failNext(429, 1);
    expect((await host.ensurePullRequest(glInput(server)))?.number).toBe(1);
    expect(time.slept).toEqual([60_000]);
  });

  it('a Retry-After beyond INKWELL_HOST_MAX_WAIT_MS fails at once with HostRateLimitedError naming GitLab and when to retry', async () => {
    const { server, host, time } = await gitlab({ INKWELL_HOST_MAX_WAIT_MS: '60000' });
    server.failNext(429, 1, { headers: { 'retry-after': '3600' } });
    const err = await host.ensurePullRequest(glInput(server)).catch((e) => e);
    expect(err).toBeInstanceOf(HostRateLimitedError);
    expect(err.message).toContain('GitLab rate limit');
    expect(err.message).toContain(`retry after ${new Date(T0 + 3_600_000).toISOString()}`);
    expect(err.message).not.toContain(GL_TOKEN);
    expect(time.slept).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('502 on create after GitLab created it (answer lost): the retry finds it, no second merge request', async () => {
    const { server, host } = await gitlab();
    server.failNext(502, 1, { method: 'POST', afterHandling: true });
    const mr = await host.ensurePullRequest(glInput(server));
    expect(mr?.number).toBe(1);
    expect(server.mergeRequests).toHaveLength(1);
    expect(server.requests.map((r) => r.method)).toEqual(['GET', 'POST', 'GET']);
  });

  it('5xx every time: a few retries, then host_error with the status', async () => {
    const { server, host, time } = await gitlab();
    server.failNext(503, 10);
    const err = await host.ensurePullRequest(glInput(server)).catch((e) => e);
    expect(err).toBeInstanceOf(HostError);
    expect(err).not.toBeInstanceOf(HostRateLimitedError);
    expect(err.message).toContain('HTTP 503');
    expect(time.slept).toEqual([500, 2000]);
    expect(server.requests).toHaveLength(3);
  });
});
