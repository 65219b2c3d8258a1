// A pull request's draft state and title across turns, end to end on both databases: HTTP API, queue and worker,
// the real executor with the docs checks, a scripted model, a real repository (a Mintlify site) and the GitHub and
// GitLab fakes. A draft opened because the checks failed is marked ready by the follow-up that makes them pass; a
// draft the job asked for stays one; a follow-up whose checks fail on a ready pull request leaves it ready and says
// so; a follow-up renames the pull request only with `Title:`.
import { afterEach, expect, it } from 'vitest';
import { createRunExecutor } from '../../src/agent/execute.ts';
import { CHECKS_DRAFT_MARKER } from '../../src/agent/pr-state.ts';
import { releaseWorktree } from '../../src/git/workspace.ts';
import { type AgentJobs, jobApi, startAgentJobs } from '../helpers/agent-jobs.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { applyEnv, createBareRepo, insteadOfEnv } from '../helpers/git.ts';
import { startGitLabServer } from '../helpers/gitlab-server.ts';
import { startJobsApp, waitForStatus } from '../helpers/jobs.ts';
import { type ModelScriptEntry, startModelServer } from '../helpers/model-server.ts';

const GH_TOKEN = `ghp_${'StateT0kenValue'.repeat(3)}`;
const GL_TOKEN = `glpat-${'StateT0ken'.repeat(3)}`;
const DOCS_JSON = (pages: string[]) => `${JSON.stringify({ name: 'Acme', navigation: [{ group: 'Start', pages }] }, null, 2)}\n`;
const FILES = {
  'docs.json': DOCS_JSON(['intro', 'guides/setup']),
  'intro.mdx': '---\ntitle: Intro\n---\n\nHello.\n',
  'guides/setup.mdx': '---\ntitle: Setup\n---\n\n## Install the CLI\n',
};
const ENV = { INKWELL_CHECK_REPAIR_ROUNDS: '1' };
const FAQ = (link: string) => `---\ntitle: FAQ\n---\n\nSee [setup](${link}).\n`;

/** Turn 1 adds a page whose link the model cannot fix (checks fail twice); turn 2 fixes it (checks pass). */
const BROKEN_THEN_FIXED: ModelScriptEntry[] = [
  {
    toolCalls: [
      { name: 'write_file', args: { path: 'guides/faq.mdx', content: FAQ('/guides/nowhere') } },
      { name: 'write_file', args: { path: 'docs.json', content: DOCS_JSON(['intro', 'guides/setup', 'guides/faq']) } },
    ],
  },
  { text: 'Add an FAQ page\n\nA new FAQ page.' },
  { text: 'Add an FAQ page\n\nI could not find the page the link should point to.' },
  { toolCalls: [{ name: 'edit_file', args: { path: 'guides/faq.mdx', old_string: '/guides/nowhere', new_string: '/guides/setup' } }] },
  { text: 'Fix the FAQ link\n\nThe link points at the setup page.' },
];

describeEachDialect('pull request state across turns (GitHub)', (dialect) => {
  let a: AgentJobs | null = null;
  afterEach(async () => {
    await a?.close();
    a = null;
  });
  const { api, settle } = jobApi(() => a!);
  const graphqlCalls = () => a!.github.requests.filter((r) => r.path === '/graphql');

  it('a draft opened because the checks failed is marked ready by the follow-up that makes them pass; the title stays', async () => {
    a = await startAgentJobs(dialect, { files: FILES, script: BROKEN_THEN_FIXED, token: GH_TOKEN, env: ENV });
    const job = await settle((await api('POST', '/job', { prompt: 'Add an FAQ page' })).body.id);
    expect(job).toMatchObject({ status: 'completed', error: null });
    const pr = a.github.pulls[0]!;
    expect(pr).toMatchObject({ draft: true, title: 'Add an FAQ page' });
    expect(pr.body).toContain('This pull request is a draft: the docs checks still fail after 1 repair round.');
    expect(pr.body).toContain(CHECKS_DRAFT_MARKER);

    await api('POST', `/job/${job.id}/message`, { prompt: 'Point the FAQ link at the setup page' });
    expect(await settle(job.id)).toMatchObject({ status: 'completed', error: null, prLink: job.prLink });
    expect(a.github.pulls).toHaveLength(1);
    expect(pr).toMatchObject({ draft: false, title: 'Add an FAQ page' });
    expect(graphqlCalls()).toHaveLength(1);
    expect(pr.body).toMatch(/### Docs checks\n\nPassed/);
    expect(pr.body).not.toContain(CHECKS_DRAFT_MARKER);
    expect(a.github.comments).toHaveLength(1);
    expect(a.github.comments[0]!.body).toContain('The docs checks pass now: the pull request is marked ready for review.');
  });

  it('a code host that refuses to mark it ready: the turn completes, the comment says to mark it ready by hand', async () => {
    a = await startAgentJobs(dialect, { files: FILES, script: BROKEN_THEN_FIXED, token: GH_TOKEN, env: ENV });
    const job = await settle((await api('POST', '/job', { prompt: 'Add an FAQ page' })).body.id);
    expect(a.github.pulls[0]!.draft).toBe(true);
    // The follow-up's first POST is the mutation (the comment comes after it).
    a.github.failNext(403, 1, { method: 'POST', message: 'Resource not accessible by integration' });
    await api('POST', `/job/${job.id}/message`, { prompt: 'Point the FAQ link at the setup page' });
    expect(await settle(job.id)).toMatchObject({ status: 'completed', error: null });
    expect(graphqlCalls()).toHaveLength(1);
    expect(a.github.pulls[0]!.draft).toBe(true);
    expect(a.github.comments).toHaveLength(1);
    expect(a.github.comments[0]!.body).toContain('could not be marked ready for review: mark it ready yourself.');
    // Still a draft because of its checks (its body says so), so a later turn whose checks pass tries again.
    expect(a.github.pulls[0]!.body).toContain(CHECKS_DRAFT_MARKER);
    expect(a.github.pulls[0]!.body).toMatch(/### Docs checks\n\nPassed/);
  });

  it('a draft the job asked for stays a draft when a follow-up makes the checks pass', async () => {
    a = await startAgentJobs(dialect, { files: FILES, script: BROKEN_THEN_FIXED, token: GH_TOKEN, env: ENV });
    const job = await settle((await api('POST', '/job', { prompt: 'Add an FAQ page', draft: true })).body.id);
    expect(job.status).toBe('completed');
    expect(a.github.pulls[0]!.draft).toBe(true);
    expect(a.github.pulls[0]!.body).not.toContain(CHECKS_DRAFT_MARKER);
    await api('POST', `/job/${job.id}/message`, { prompt: 'Point the FAQ link at the setup page' });
    expect(await settle(job.id)).toMatchObject({ status: 'completed', error: null });
    expect(a.github.pulls[0]!.draft).toBe(true);
    expect(a.github.pulls[0]!.body).toMatch(/### Docs checks\n\nPassed/);
    expect(graphqlCalls()).toHaveLength(0);
    expect(a.github.comments[0]!.body).not.toContain('ready for review');
  });

  it('a follow-up whose checks fail on a ready pull request leaves it ready and says so; `Title:` renames it', async () => {
    a = await startAgentJobs(dialect, {
      files: FILES,
      token: GH_TOKEN,
      env: ENV,
      script: [
        {
          toolCalls: [
            { name: 'write_file', args: { path: 'guides/faq.mdx', content: FAQ('/guides/setup') } },
            { name: 'write_file', args: { path: 'docs.json', content: DOCS_JSON(['intro', 'guides/setup', 'guides/faq']) } },
          ],
        },
        { text: 'Add an FAQ page\n\nA new FAQ page.' },
        { toolCalls: [{ name: 'edit_file', args: { path: 'guides/faq.mdx', old_string: '/guides/setup', new_string: '/guides/glossary' } }] },
        { text: 'Title: Add an FAQ page and link the glossary\n\nThe FAQ links the glossary.' },
        { text: 'Title: Add an FAQ page and link the glossary\n\nThere is no glossary page to link to yet.' },
      ],
    });
    const job = await settle((await api('POST', '/job', { prompt: 'Add an FAQ page' })).body.id);
    expect(job.status).toBe('completed');
    const pr = a.github.pulls[0]!;
    expect(pr).toMatchObject({ draft: false, title: 'Add an FAQ page' });
    await api('POST', `/job/${job.id}/message`, { prompt: 'Link the glossary from the FAQ' });
    expect(await settle(job.id)).toMatchObject({ status: 'completed', error: null });
    expect(pr).toMatchObject({ draft: false, title: 'Add an FAQ page and link the glossary' });
    expect(pr.body).toContain(
      '### Docs checks: failed\n\nThe docs checks still fail after 1 repair round; the pull request was ready for review and stays so.',
    );
    expect(pr.body).not.toContain(CHECKS_DRAFT_MARKER);
    expect(a.github.comments[0]!.body).toContain('The docs checks fail after this turn; the pull request stays ready for review');
    expect(graphqlCalls()).toHaveLength(0);
    const patch = a.github.requests.find((r) => r.method === 'PATCH')!;
    expect(patch.body.title).toBe('Add an FAQ page and link the glossary');
  });
});

describeEachDialect('pull request state across turns (GitLab)', (dialect) => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.reverse()) await c();
    cleanups.length = 0;
  });

  /** The jobs stack on a GitLab repository (the fake GitLab API, a bare repository, the scripted model). */
  async function stack() {
    const repo = createBareRepo({ files: FILES });
    cleanups.push(() => repo.cleanup());
    const gitlab = await startGitLabServer({ token: GL_TOKEN });
    cleanups.push(() => gitlab.close());
    const model = await startModelServer(BROKEN_THEN_FIXED);
    cleanups.push(() => model.close());
    const repository = `${gitlab.url}/acme/docs.git`;
    cleanups.push(applyEnv(insteadOfEnv({ [repository]: repo.dir })));
    const env = { OPENAI_COMPATIBLE_BASE_URL: model.baseUrl, GITLAB_URL: gitlab.url, GITLAB_TOKEN: GL_TOKEN, INKWELL_POLL_INTERVAL_MS: '20', ...ENV };
    const t = await startJobsApp(dialect, {}, env);
    cleanups.push(() => t.close());
    const { adminKey: key, project } = await t.seed({ repository, ref: 'main' });
    t.startWorker(createRunExecutor(t.ctx.config, t.ctx.logger), { releaseWorktree: (id) => releaseWorktree(t.ctx.config, id) });
    const api = (method: string, p: string, body?: unknown) => t.request(method, `/v2/agent/${project.id}${p}`, { key, ...(body ? { body } : {}) });
    const settle = (id: string) => waitForStatus(t, key, project.id, id, ['completed', 'failed']);
    return { gitlab, api, settle };
  }

  it('a merge request opened as a draft because the checks failed loses its Draft: prefix when a follow-up makes them pass', async () => {
    const { gitlab, api, settle } = await stack();
    const job = await settle((await api('POST', '/job', { prompt: 'Add an FAQ page' })).body.id);
    expect(job).toMatchObject({ status: 'completed', error: null });
    const mr = gitlab.mergeRequests[0]!;
    expect(mr).toMatchObject({ title: 'Draft: Add an FAQ page', draft: true });
    expect(mr.description).toContain(CHECKS_DRAFT_MARKER);

    await api('POST', `/job/${job.id}/message`, { prompt: 'Point the FAQ link at the setup page' });
    expect(await settle(job.id)).toMatchObject({ status: 'completed', error: null, prLink: job.prLink });
    expect(gitlab.mergeRequests).toHaveLength(1);
    expect(mr).toMatchObject({ title: 'Add an FAQ page', draft: false });
    expect(mr.description).toMatch(/### Docs checks\n\nPassed/);
    expect(mr.description).not.toContain(CHECKS_DRAFT_MARKER);
    expect(gitlab.notes.map((n) => n.body.includes('The docs checks pass now: the pull request is marked ready for review.'))).toEqual([true]);
  });

  it('a merge request the job asked to be a draft keeps its Draft: prefix when a follow-up makes the checks pass', async () => {
    const { gitlab, api, settle } = await stack();
    const job = await settle((await api('POST', '/job', { prompt: 'Add an FAQ page', draft: true })).body.id);
    expect(job.status).toBe('completed');
    const mr = gitlab.mergeRequests[0]!;
    expect(mr).toMatchObject({ title: 'Draft: Add an FAQ page', draft: true });
    await api('POST', `/job/${job.id}/message`, { prompt: 'Point the FAQ link at the setup page' });
    expect(await settle(job.id)).toMatchObject({ status: 'completed', error: null });
    expect(mr).toMatchObject({ title: 'Draft: Add an FAQ page', draft: true });
    expect(mr.description).toMatch(/### Docs checks\n\nPassed/);
    expect(gitlab.requests.filter((r) => r.method === 'PUT').map((r) => Object.keys(r.body))).toEqual([['description']]);
  });
});
