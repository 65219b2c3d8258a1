// Tokens reach git only through the credential helper (GIT_CONFIG_* + an environment variable of the
// git child): proven against a real smart-HTTP git server that demands Basic auth.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRunExecutor, type RunEvent } from '../../src/agent/execute.ts';
import { testConfig } from '../../src/config.ts';
import { CREDENTIAL_HELPER, credentialsFor, TOKEN_ENV } from '../../src/git/credentials.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { createBareRepo, readBranchFile, tempDir } from '../helpers/git.ts';
import { startGitHubServer } from '../helpers/github-server.ts';
import { startModelServer } from '../helpers/model-server.ts';
import { startGitHttpServer } from './http-git-server.ts';

const TOKEN = `ghp_${'S3cretTok'.repeat(4)}x`;

function allFiles(dir: string): string[] {
  const out: string[] = [];
  const visit = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) visit(p);
      else if (e.isFile()) out.push(p);
    }
  };
  visit(dir);
  return out;
}

/** A project root where the bare repository is served as acme/docs.git. */
function servedAs(bare: string): string {
  const root = tempDir('inkwell-serve-');
  fs.mkdirSync(path.join(root, 'acme'));
  fs.symlinkSync(bare, path.join(root, 'acme', 'docs.git'));
  return root;
}

describe('credentialsFor (pure)', () => {
  const config = testConfig({}, { GITHUB_TOKEN: 'ghp_tokA', GITLAB_TOKEN: 'glpat-tokB', GITLAB_URL: 'https://git.example.com' });

  it('scopes the GitHub token to the GitHub origin and passes it by environment only', () => {
    const c = credentialsFor('https://github.com/acme/docs.git', config);
    expect(c.config).toEqual([['credential.https://github.com.helper', CREDENTIAL_HELPER]]);
    expect(c.env[TOKEN_ENV]).toBe('ghp_tokA');
    expect(JSON.stringify(c.config)).not.toContain('ghp_tokA');
  });

  it('uses the GitLab token (oauth2) for GitLab hosts, including self-managed ones', () => {
    const c = credentialsFor('https://git.example.com/group/sub/docs.git', config);
    expect(c.config[0]![0]).toBe('credential.https://git.example.com.helper');
    expect(c.env).toMatchObject({ INKWELL_GIT_USERNAME: 'oauth2', [TOKEN_ENV]: 'glpat-tokB' });
  });

  it('gives no token to other hosts or local repositories', () => {
    expect(credentialsFor('https://evil.example.org/acme/docs.git', config)).toEqual({ config: [], env: {} });
    expect(credentialsFor('/srv/git/docs.git', config)).toEqual({ config: [], env: {} });
    expect(credentialsFor('https://github.com/acme/docs', testConfig())).toEqual({ config: [], env: {} });
  });
});

describe('token through the credential helper (real smart-HTTP git server)', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c();
    cleanups.length = 0;
  });

  it('fetches and pushes with the token, opens the pull request, and stores the token nowhere', async () => {
    const repo = createBareRepo({ files: { 'README.md': '# Docs\n' } });
    cleanups.push(() => repo.cleanup());
    const github = await startGitHubServer({ token: TOKEN });
    cleanups.push(() => github.close());
    // One host serves git (Basic auth) and, under /api/v3, the pull-request API: a GitHub Enterprise Server.
    const projectRoot = servedAs(repo.dir);
    cleanups.push(() => fs.rmSync(projectRoot, { recursive: true, force: true }));
    const server = await startGitHttpServer({ projectRoot, username: 'x-access-token', password: TOKEN, apiProxy: github.apiUrl });
    cleanups.push(() => server.close());
    const model = await startModelServer([
      { toolCalls: [{ name: 'write_file', args: { path: 'new.md', content: 'new page\n' } }] },
      { text: 'Add a new page' },
    ]);
    cleanups.push(() => model.close());
    const dataDir = tempDir('inkwell-data-');
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const config = testConfig({ dataDir }, { GITHUB_API_URL: `${server.url}/api/v3`, GITHUB_TOKEN: TOKEN, OPENAI_COMPATIBLE_BASE_URL: model.baseUrl });
    const events: RunEvent[] = [];
    const repository = `${server.url}/acme/docs.git`;
    const result = await createRunExecutor(config, createLogger(config)).execute({
      jobId: 'job_cred',
      repository,
      ref: 'main',
      branch: 'inkwell/cred-add-page',
      model: 'openai-compatible/m',
      draft: false,
      history: [],
      prompt: 'Add a page',
      signal: new AbortController().signal,
      onEvent: (e) => {
        events.push(e);
      },
    });

    expect(readBranchFile(repo, 'inkwell/cred-add-page', 'new.md')).toBe('new page\n');
    expect(result.prLink).toBe('https://github.com/acme/docs/pull/1');
    expect(github.pulls[0]).toMatchObject({ owner: 'acme', repo: 'docs', head: 'inkwell/cred-add-page', base: 'main' });
    // git asked without credentials first (401), then came back with the token from the helper.
    expect(server.requests[0]!.status).toBe(401);
    expect(server.requests[0]!.authorization).toBeUndefined();
    const authed = server.requests.filter((r) => r.authorization);
    expect(authed.length).toBeGreaterThan(0);
    expect(authed.every((r) => r.authorization === `Basic ${Buffer.from(`x-access-token:${TOKEN}`).toString('base64')}`)).toBe(true);
    expect(server.requests.some((r) => r.path.endsWith('/git-receive-pack') && r.status === 200)).toBe(true);

    // Nowhere at rest, in events or in what the model saw.
    for (const file of allFiles(dataDir)) expect(fs.readFileSync(file, 'latin1').includes(TOKEN), file).toBe(false);
    expect(fs.readFileSync(path.join(dataDir, 'worktrees', 'job_cred', '.git'), 'utf8')).not.toContain(TOKEN);
    expect(JSON.stringify(events)).not.toContain(TOKEN);
    expect(model.requests.map((r) => r.raw).join('')).not.toContain(TOKEN);
  });

  it('without a token the fetch fails with git_error (no prompt, no hang)', async () => {
    const repo = createBareRepo({ files: { 'README.md': '# Docs\n' } });
    cleanups.push(() => repo.cleanup());
    const projectRoot = servedAs(repo.dir);
    cleanups.push(() => fs.rmSync(projectRoot, { recursive: true, force: true }));
    const server = await startGitHttpServer({ projectRoot, username: 'x-access-token', password: TOKEN });
    cleanups.push(() => server.close());
    const dataDir = tempDir('inkwell-data-');
    cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    // A self-hosted git server that is neither GitHub nor GitLab: no token is offered to it.
    const config = testConfig({ dataDir }, { OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1', GITHUB_TOKEN: TOKEN });
    const { prepareWorkspace } = await import('../../src/git/workspace.ts');
    const err = await prepareWorkspace(config, { repository: `${server.url}/acme/docs.git`, ref: 'main', branch: 'b', jobId: 'job_x' }).catch((e) => e);
    expect(err.name).toBe('GitError');
    expect(String(err.message)).not.toContain(TOKEN);
    expect(server.requests.every((r) => r.authorization === undefined)).toBe(true);
  });
});
