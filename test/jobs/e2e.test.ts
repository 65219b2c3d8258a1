// Jobs end to end with the real agent executor: the HTTP API, the database queue and worker, a scripted
// model server (OpenAI-compatible chat completions over real HTTP), a real bare repository reached as
// https://github.com/acme/docs through url.<local>.insteadOf, and a fake GitHub pull-request API.

import fs from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { worktreePath } from '../../src/git/workspace.ts';
import { type AgentJobs, startAgentJobs } from '../helpers/agent-jobs.ts';
import type { Seeded } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { type BareRepo, branchExists, commitsBetween, readBranchFile } from '../helpers/git.ts';
import type { GitHubServer } from '../helpers/github-server.ts';
import { type JobsTestApp, waitFor, waitForStatus } from '../helpers/jobs.ts';
import type { ModelScriptEntry, ModelServer } from '../helpers/model-server.ts';
import { agentJobErrors } from './schema.ts';

const TOKEN = `ghp_${'E2eT0kenValue'.repeat(3)}`;

describeEachDialect('jobs end to end (real executor)', (dialect) => {
  let e: AgentJobs | null = null;
  let t: JobsTestApp;
  let repo: BareRepo;
  let model: ModelServer;
  let github: GitHubServer;
  let s: Seeded;

  async function setup(script: ModelScriptEntry[], env: Record<string, string> = {}, fallback?: ModelScriptEntry) {
    const files = { 'README.md': '# Acme docs\n', 'docs/intro.mdx': '# Intro\n\nHello from Acme.\n' };
    e = await startAgentJobs(dialect, {
      files,
      script,
      fallback,
      token: TOKEN,
      env: { INKWELL_MODEL_MAX_RETRIES: '1', INKWELL_MODEL_RETRY_BASE_MS: '5', ...env },
    });
    ({ t, repo, model, github, s } = e);
  }

  afterEach(async () => {
    await e?.close();
    e = null;
  });

  const api = (method: string, p: string, body?: unknown) => t.request(method, `/v2/agent/${s.project.id}${p}`, { key: s.adminKey, ...(body ? { body } : {}) });
  const settle = (id: string) => waitForStatus(t, s.adminKey, s.project.id, id, ['completed', 'failed', 'archived']);

  it('prompt → completed with prLink = the pull request; follow-up: same branch and PR, prLink null while active', async () => {
    let answerFollowUp!: () => void;
    const followUpAsked = new Promise<void>((r) => {
      answerFollowUp = r;
    });
    await setup([
      { toolCalls: [{ name: 'edit_file', args: { path: 'docs/intro.mdx', old_string: 'Hello from Acme.', new_string: 'Welcome to Acme.' } }] },
      { text: 'Reword the intro greeting\n\nThe intro now welcomes readers.' },
      // Follow-up: the first reply waits until the test has seen the job active.
      async () => {
        await followUpAsked;
        return { toolCalls: [{ name: 'write_file', args: { path: 'docs/faq.mdx', content: '# FAQ\n' } }] };
      },
      { text: 'Add an FAQ page' },
    ]);
    const c = await api('POST', '/job', { prompt: 'Reword the intro greeting' });
    expect(c.status).toBe(201);
    const job = await settle(c.body.id);
    expect(job.status).toBe('completed');
    expect(agentJobErrors(job)).toBeNull();
    expect(github.pulls).toHaveLength(1);
    const pr = github.pulls[0]!;
    expect(job.prLink).toBe(github.htmlUrl(pr));
    expect(pr).toMatchObject({ head: job.branch, base: 'main', state: 'open' });
    expect(readBranchFile(repo, job.branch, 'docs/intro.mdx')).toBe('# Intro\n\nWelcome to Acme.\n');
    expect(readBranchFile(repo, 'main', 'docs/intro.mdx')).toBe('# Intro\n\nHello from Acme.\n');
    expect(job.usage.inputTokens).toBeGreaterThan(0);
    // The finished worktree is cleaned up (the branch lives on the remote).
    await waitFor(async () => !fs.existsSync(worktreePath(t.ctx.config, job.id)));

    const m = await api('POST', `/job/${job.id}/message`, { prompt: 'Add an FAQ page' });
    expect(m.status).toBe(200);
    expect(m.body).toMatchObject({ status: 'active', prLink: null });
    await waitFor(async () => model.requests.length >= 3);
    const during = await api('GET', `/job/${job.id}`);
    expect(during.body).toMatchObject({ status: 'active', prLink: null });
    answerFollowUp();
    const after = await settle(job.id);
    expect(after.status).toBe('completed');
    expect(after.prLink).toBe(job.prLink);
    expect(after.branch).toBe(job.branch);
    expect(github.pulls).toHaveLength(1);
    expect(readBranchFile(repo, job.branch, 'docs/faq.mdx')).toBe('# FAQ\n');
    expect(readBranchFile(repo, job.branch, 'docs/intro.mdx')).toBe('# Intro\n\nWelcome to Acme.\n');
    expect(commitsBetween(repo, 'main', job.branch)).toHaveLength(2);
    // The follow-up's model request carried the first turn's conversation.
    const followUp = JSON.stringify(model.requests[2]!.body.messages);
    expect(followUp).toContain('Reword the intro greeting');
    expect(followUp).toContain('Add an FAQ page');
    expect(followUp).not.toContain(TOKEN);

    const events = (await api('GET', `/job/${job.id}/events`)).body.events as { seq: number; type: string }[];
    const types = new Set(events.map((e) => e.type));
    for (const ty of ['status', 'user_message', 'assistant_message', 'tool_call', 'tool_result', 'commit', 'pull_request'])
      expect(types.has(ty), ty).toBe(true);
    expect(JSON.stringify(events)).not.toContain(TOKEN);
  });

  it('a prompt that changes nothing → completed, prLink null, no pull request, no branch', async () => {
    await setup([{ toolCalls: [{ name: 'read_file', args: { path: 'README.md' } }] }, { text: 'Nothing needed: the README is fine.' }]);
    const c = await api('POST', '/job', { prompt: 'Check the README' });
    const job = await settle(c.body.id);
    expect(job).toMatchObject({ status: 'completed', prLink: null, error: null });
    expect(github.pulls).toHaveLength(0);
    expect(branchExists(repo, job.branch)).toBe(false);
  });

  it('model HTTP 500 every time → failed with model_error, never stuck active', async () => {
    await setup([], {}, { status: 500, message: 'upstream exploded' });
    const c = await api('POST', '/job', { prompt: 'Anything' });
    const job = await settle(c.body.id);
    expect(job.status).toBe('failed');
    expect(job.error.code).toBe('model_unavailable');
    expect(model.requests.length).toBe(2); // one try plus INKWELL_MODEL_MAX_RETRIES=1
  });

  it('the step limit ends the run as failed step_limit_exceeded', async () => {
    await setup([], { INKWELL_MAX_STEPS: '2' }, { toolCalls: [{ name: 'list_files', args: {} }] });
    const c = await api('POST', '/job', { prompt: 'Loop forever' });
    const job = await settle(c.body.id);
    expect(job.status).toBe('failed');
    expect(job.error.code).toBe('step_limit_exceeded');
  });

  it('the run deadline ends the run as failed run_deadline_exceeded', async () => {
    await setup([{ hang: true }], { INKWELL_RUN_TIMEOUT_MS: '500' });
    const c = await api('POST', '/job', { prompt: 'Hang' });
    const job = await settle(c.body.id);
    expect(job.status).toBe('failed');
    expect(job.error.code).toBe('run_deadline_exceeded');
  });

  it('archive of an active job → archived, the hung model call is closed and the model server sees no further request', async () => {
    await setup([{ hang: true }], {}, { text: 'should never be asked' });
    const c = await api('POST', '/job', { prompt: 'Take your time' });
    await waitFor(async () => model.requests.length === 1);
    const a = await api('POST', `/job/${c.body.id}/archive`);
    expect(a.body.status).toBe('archived');
    // The model never answers: only the archive's abort can close its connection and end the run.
    await waitFor(async () => model.openConnections() === 0);
    await waitFor(async () => t.workers[0]!.running().length === 0);
    await new Promise((r) => setTimeout(r, 300));
    expect(model.requests).toHaveLength(1);
    expect((await api('GET', `/job/${c.body.id}`)).body.status).toBe('archived');
  });

  it('archive while the run waits out a model Retry-After (59 s) ends the wait: the run stops long before the retry is due', async () => {
    await setup([{ status: 429, message: 'slow down', headers: { 'retry-after': '59' } }], { INKWELL_MODEL_MAX_RETRIES: '3' }, { text: 'never asked' });
    const c = await api('POST', '/job', { prompt: 'Wait for it' });
    await waitFor(async () => model.requests.length === 1);
    // The 429 answered; the run is now in its backoff wait (the worker still runs the job).
    await waitFor(async () => t.workers[0]!.running().length === 1);
    expect((await api('POST', `/job/${c.body.id}/archive`)).body.status).toBe('archived');
    // Only the archive can end a 59 s wait before its time: half of it is the bound, not a speed.
    await waitFor(async () => t.workers[0]!.running().length === 0, 30_000);
    expect(model.requests).toHaveLength(1);
    expect((await api('GET', `/job/${c.body.id}`)).body).toMatchObject({ status: 'archived', error: null });
  });
});
