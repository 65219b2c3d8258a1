// GET /v2/agent/{projectId}/job/{id}/diff end to end on both databases: jobs run by the real executor (scripted
// model server, real git: a bare repository reached as https://github.com/acme/docs, the local GitHub fake),
// the worker storing the diff after each turn that pushed, and the API serving it over real HTTP.
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createRunExecutor } from '../../src/agent/execute.ts';
import { MAX_DIFF_TEXT_BYTES } from '../../src/git/diff.ts';
import { releaseWorktree } from '../../src/git/workspace.ts';
import type { Seeded } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { applyEnv, type BareRepo, createBareRepo, gitSync, insteadOfEnv, tempDir } from '../helpers/git.ts';
import { type GitHubServer, startGitHubServer } from '../helpers/github-server.ts';
import { type JobsTestApp, startJobsApp, waitForStatus } from '../helpers/jobs.ts';
import { type ModelScriptEntry, type ModelServer, startModelServer } from '../helpers/model-server.ts';

const GITHUB_URL = 'https://github.com/acme/docs';
const TOKEN = `ghp_${'DiffT0kenValue'.repeat(3)}`;
/** Text that appears only inside files the agent writes: it must never reach a log line. */
const MARKER = 'Ask the Acme desk 7f3a9c';

const EMPTY = { base: null, head: null, files: [], totals: { files: 0, additions: 0, deletions: 0 }, diff: '', truncated: false, updatedAt: null };

describeEachDialect('job diff (real executor, real git, real HTTP)', (dialect) => {
  let t: JobsTestApp;
  let repo: BareRepo;
  let model: ModelServer;
  let github: GitHubServer;
  let restoreEnv: () => void;
  let s: Seeded;
  const logs: string[] = [];

  beforeAll(async () => {
    repo = createBareRepo({
      files: {
        'README.md': '# Acme docs\n',
        'docs/intro.mdx': '# Intro\n\nHello from Acme.\n',
        'docs/setup.mdx': '# Setup\n\nInstall the CLI.\nRun it.\n',
        'img/logo.gif': 'GIF89a\u0000\u0001\u0002\u0003',
      },
    });
    model = await startModelServer();
    github = await startGitHubServer({ token: TOKEN });
    restoreEnv = applyEnv(insteadOfEnv({ [GITHUB_URL]: repo.dir }));
    const logStream = new Writable({
      write(chunk, _enc, cb) {
        logs.push(String(chunk));
        cb();
      },
    });
    t = await startJobsApp(
      dialect,
      { logLevel: 'debug' },
      { OPENAI_COMPATIBLE_BASE_URL: model.baseUrl, GITHUB_API_URL: github.apiUrl, GITHUB_TOKEN: TOKEN, INKWELL_POLL_INTERVAL_MS: '20' },
      { logDestination: logStream },
    );
    const config = t.ctx.config;
    t.startWorker(createRunExecutor(config, t.ctx.logger), { releaseWorktree: (id) => releaseWorktree(config, id) });
    s = await t.seed({ repository: GITHUB_URL, ref: 'main' });
  });
  afterAll(async () => {
    await t?.close();
    restoreEnv?.();
    await model?.close();
    await github?.close();
    repo?.cleanup();
  });

  const api = (method: string, p: string, body?: unknown) => t.request(method, `/v2/agent/${s.project.id}${p}`, { key: s.adminKey, ...(body ? { body } : {}) });
  const diffOf = async (id: string, query = '') => {
    const r = await api('GET', `/job/${id}/diff${query}`);
    expect(r.status, r.text).toBe(200);
    return r;
  };
  /** Runs one turn (a new job, or a message to `jobId`) scripted by `script`, until the job settles. */
  async function runTurn(prompt: string, script: ModelScriptEntry[], jobId?: string): Promise<any> {
    model.push(...script);
    const r = jobId ? await api('POST', `/job/${jobId}/message`, { prompt }) : await api('POST', '/job', { prompt });
    expect(r.status, r.text).toBeLessThan(300);
    const job = await waitForStatus(t, s.adminKey, s.project.id, r.body.id, ['completed', 'failed', 'archived']);
    expect(job.status, JSON.stringify(job.error)).toBe('completed');
    return job;
  }
  const sha = (ref: string) => gitSync(['rev-parse', ref], repo.dir).trim();
  /** The +/- lines of a unified diff (not the ---/+++ file headers). */
  const changedLines = (diff: string) => diff.split('\n').filter((l) => /^[+-]/.test(l) && !/^(\+\+\+|---) /.test(l));

  it('edits and additions: exactly those lines and stats; the patch applies on the base; a follow-up updates it; served without git', async () => {
    const job = await runTurn('Reword the intro and add an FAQ', [
      {
        toolCalls: [
          { name: 'edit_file', args: { path: 'docs/intro.mdx', old_string: 'Hello from Acme.', new_string: 'Welcome to Acme.' } },
          { name: 'write_file', args: { path: 'docs/faq.mdx', content: `# FAQ\n\n${MARKER}.\n` } },
        ],
      },
      { text: 'Reword the intro and add an FAQ' },
    ]);
    const first = (await diffOf(job.id)).body;
    expect(first).toMatchObject({ base: sha('main'), head: sha(job.branch), truncated: false, updatedAt: expect.any(String) });
    expect(first.files).toEqual([
      { path: 'docs/faq.mdx', oldPath: null, status: 'added', additions: 3, deletions: 0, binary: false },
      { path: 'docs/intro.mdx', oldPath: null, status: 'modified', additions: 1, deletions: 1, binary: false },
    ]);
    expect(first.totals).toEqual({ files: 2, additions: 4, deletions: 1 });
    expect(changedLines(first.diff)).toEqual(['+# FAQ', '+', `+${MARKER}.`, '-Hello from Acme.', '+Welcome to Acme.']);

    // The patch form: the same text, which git applies on the base and which gives the branch's tree.
    const patch = await diffOf(job.id, '?format=patch');
    expect(patch.headers.get('content-type')).toBe('text/x-diff; charset=utf-8');
    expect(patch.headers.get('x-content-type-options')).toBe('nosniff');
    expect(patch.headers.get('inkwell-diff-truncated')).toBe('false');
    expect(patch.text).toBe(first.diff);
    const tmp = tempDir('inkwell-apply-');
    try {
      const work = path.join(tmp, 'clone');
      const patchFile = path.join(tmp, 'job.patch');
      fs.writeFileSync(patchFile, patch.text);
      gitSync(['clone', '-q', repo.dir, work], tmp);
      gitSync(['checkout', '-q', '--detach', first.base], work);
      gitSync(['apply', '--check', patchFile], work);
      gitSync(['apply', '--index', patchFile], work);
      expect(gitSync(['write-tree'], work).trim()).toBe(sha(`${job.branch}^{tree}`));
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }

    // A follow-up turn replaces the stored diff: same base, the new head, the README too.
    await runTurn(
      'Shorten the README title',
      [{ toolCalls: [{ name: 'edit_file', args: { path: 'README.md', old_string: '# Acme docs', new_string: '# Docs' } }] }, { text: 'Shorten the title' }],
      job.id,
    );
    const second = (await diffOf(job.id)).body;
    expect(second.base).toBe(first.base);
    expect(second.head).toBe(sha(job.branch));
    expect(second.head).not.toBe(first.head);
    expect(second.files.map((f: { path: string }) => f.path)).toEqual(['README.md', 'docs/faq.mdx', 'docs/intro.mdx']);
    expect(second.files[0]).toEqual({ path: 'README.md', oldPath: null, status: 'modified', additions: 1, deletions: 1, binary: false });
    expect(second.totals).toEqual({ files: 3, additions: 5, deletions: 2 });
    expect(changedLines(second.diff)).toEqual(['-# Acme docs', '+# Docs', '+# FAQ', '+', `+${MARKER}.`, '-Hello from Acme.', '+Welcome to Acme.']);

    // The API reads the database only: without the git mirror the answer is the same.
    fs.rmSync(path.join(t.ctx.config.dataDir, 'mirrors'), { recursive: true, force: true });
    expect((await diffOf(job.id)).body).toEqual(second);

    // The dashboard's session cookie reads it too; another project's job is a 404 like every job endpoint.
    const session = await t.request('POST', '/v1/session', { body: { key: s.adminKey } });
    const cookie = session.headers
      .getSetCookie()
      .find((c) => c.startsWith('inkwell_session='))!
      .split(';')[0]!;
    const viaCookie = await t.request('GET', `/v2/agent/${s.project.id}/job/${job.id}/diff`, { headers: { cookie } });
    expect(viaCookie.status).toBe(200);
    expect(viaCookie.body).toEqual(second);
    const other = await t.seed({ name: 'Other', repository: GITHUB_URL });
    const foreign = await t.request('GET', `/v2/agent/${other.project.id}/job/${job.id}/diff`, { key: other.adminKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('job_not_found');
    expect(foreign.text).not.toContain(MARKER);
    const crossed = await t.request('GET', `/v2/agent/${other.project.id}/job/${job.id}/diff`, { key: s.adminKey });
    expect(crossed.status).toBe(404);
    expect((await api('GET', '/job/job_doesNotExist123/diff')).body.code).toBe('job_not_found');
    // Repository content is data: never in a log line.
    expect(logs.join('')).not.toContain(MARKER);
  });

  it('a job that changed nothing: 200 with no files and an empty diff; a bad format is a 400 naming it', async () => {
    const job = await runTurn('Check the README', [{ toolCalls: [{ name: 'read_file', args: { path: 'README.md' } }] }, { text: 'Nothing to change.' }]);
    expect((await diffOf(job.id)).body).toEqual(EMPTY);
    const patch = await diffOf(job.id, '?format=patch');
    expect(patch.text).toBe('');
    expect(patch.headers.get('inkwell-diff-truncated')).toBe('false');
    const bad = await api('GET', `/job/${job.id}/diff?format=xml`);
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_request');
    expect(JSON.stringify(bad.body.details)).toContain('format');
  });

  it('a rename and binary files: the old path, the status, the binary flag, no content', async () => {
    const job = await runTurn('Move the setup page and replace the logo', [
      {
        toolCalls: [
          { name: 'move_file', args: { from: 'docs/setup.mdx', to: 'docs/guide/setup.mdx' } },
          { name: 'write_file', args: { path: 'img/diagram.png', content: '\u0089PNG\u0000\u0001\u0002 not text' } },
          { name: 'delete_file', args: { path: 'img/logo.gif' } },
        ],
      },
      { text: 'Move the setup page' },
    ]);
    const d = (await diffOf(job.id)).body;
    expect(d.files).toEqual([
      { path: 'docs/guide/setup.mdx', oldPath: 'docs/setup.mdx', status: 'renamed', additions: 0, deletions: 0, binary: false },
      { path: 'img/diagram.png', oldPath: null, status: 'added', additions: 0, deletions: 0, binary: true },
      { path: 'img/logo.gif', oldPath: null, status: 'deleted', additions: 0, deletions: 0, binary: true },
    ]);
    expect(d.totals).toEqual({ files: 3, additions: 0, deletions: 0 });
    expect(d.diff).toContain('rename from docs/setup.mdx\nrename to docs/guide/setup.mdx\n');
    expect(d.diff).toContain('Binary files /dev/null and b/img/diagram.png differ');
    expect(d.diff).toContain('Binary files a/img/logo.gif and /dev/null differ');
    expect(d.diff).not.toContain('not text');
    expect(d.diff).not.toContain('\u0000');
  });

  it('a diff over 1 MiB: whole files up to the cap, truncated, the stats complete', async () => {
    const big = Array.from({ length: 40_000 }, (_, i) => `row ${i + 1} of the generated table`).join('\n');
    const job = await runTurn('Add the table', [
      {
        toolCalls: [
          { name: 'write_file', args: { path: 'a-note.mdx', content: 'A short note.\n' } },
          { name: 'write_file', args: { path: 'table.txt', content: `${big}\n` } },
        ],
      },
      { text: 'Add the table' },
    ]);
    const d = (await diffOf(job.id)).body;
    expect(d.truncated).toBe(true);
    expect(d.files).toEqual([
      { path: 'a-note.mdx', oldPath: null, status: 'added', additions: 1, deletions: 0, binary: false },
      { path: 'table.txt', oldPath: null, status: 'added', additions: 40_000, deletions: 0, binary: false },
    ]);
    expect(d.totals).toEqual({ files: 2, additions: 40_001, deletions: 0 });
    expect(changedLines(d.diff)).toEqual(['+A short note.']);
    expect(Buffer.byteLength(d.diff)).toBeLessThanOrEqual(MAX_DIFF_TEXT_BYTES);
    const patch = await diffOf(job.id, '?format=patch');
    expect(patch.headers.get('inkwell-diff-truncated')).toBe('true');
    expect(patch.text).toBe(d.diff);
  });
});
