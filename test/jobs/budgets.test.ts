// Budgets that stop a job, end to end: the HTTP API, the queue and worker, the real executor, a scripted model
// server that never finishes (it keeps calling tools) and reports token usage as the provider does, a real bare
// repository behind https://github.com/acme/docs and the fake GitHub API.
import { afterEach, expect, it } from 'vitest';
import { type AgentJobs, GITHUB_URL, startAgentJobs } from '../helpers/agent-jobs.ts';
import type { Seeded } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { type BareRepo, branchExists } from '../helpers/git.ts';
import type { GitHubServer } from '../helpers/github-server.ts';
import { type JobsTestApp, waitFor, waitForStatus } from '../helpers/jobs.ts';
import type { ModelReply, ModelScriptEntry, ModelServer } from '../helpers/model-server.ts';
import { hostedErrorErrors } from './schema.ts';

const TOKEN = `ghp_${'BudgetT0ken'.repeat(3)}`;
const MODEL = 'openai-compatible/test-model';

/** A model that never finishes: every reply writes one more file and asks for another step. */
const neverFinishes =
  (usage: { prompt: number; completion: number } = { prompt: 10, completion: 5 }): ModelScriptEntry =>
  (_req, i): ModelReply => ({ toolCalls: [{ name: 'write_file', args: { path: `docs/step-${i}.md`, content: 'half written\n' } }], usage });

describeEachDialect('job budgets', (dialect) => {
  let e: AgentJobs | null = null;
  let t: JobsTestApp;
  let repo: BareRepo;
  let model: ModelServer;
  let github: GitHubServer;
  let s: Seeded;

  async function setup(script: ModelScriptEntry[], fallback: ModelScriptEntry | undefined, env: Record<string, string> = {}) {
    e = await startAgentJobs(dialect, {
      files: { 'README.md': '# Acme docs\n' },
      script,
      fallback,
      token: TOKEN,
      env: { INKWELL_MODEL_MAX_RETRIES: '0', ...env },
    });
    ({ t, repo, model, github, s } = e);
  }

  afterEach(async () => {
    await e?.close();
    e = null;
  });

  const create = (body: Record<string, unknown>, seeded: Seeded = s) =>
    t.request('POST', `/v2/agent/${seeded.project.id}/job`, { key: seeded.adminKey, body: { prompt: 'Rewrite every page', ...body } });
  const settle = (id: string, seeded: Seeded = s) => waitForStatus(t!, seeded.adminKey, seeded.project.id, id, ['completed', 'failed', 'archived']);
  const events = async (id: string) =>
    (await t.request('GET', `/v2/agent/${s.project.id}/job/${id}/events`, { key: s.adminKey })).body.events as { type: string; data: any }[];

  /** The job failed with budget_exhausted naming `reached`, pushed nothing and opened no pull request. */
  async function expectStopped(job: any, reached: string) {
    expect(job.status).toBe('failed');
    expect(job.error.code).toBe('budget_exhausted');
    expect(job.error.message).toContain(reached);
    expect(job.prLink).toBeNull();
    expect(branchExists(repo, job.branch)).toBe(false);
    expect(github.pulls).toHaveLength(0);
    const types = (await events(job.id)).map((e) => e.type);
    expect(types).not.toContain('commit');
    expect((await events(job.id)).find((e) => e.type === 'error')?.data).toMatchObject({ code: 'budget_exhausted' });
  }

  it.each([
    ['steps', { maxSteps: 2 }, 'steps: 2 of 2 used', 2],
    ['input tokens', { maxInputTokens: 25 }, 'input tokens: 30 of 25 used', 3],
    ['output tokens', { maxOutputTokens: 15 }, 'output tokens: 15 of 15 used', 3],
  ])('%s: the budget stops a model that never finishes at the step boundary; nothing is committed', async (_kind, budget, reached, steps) => {
    await setup([], neverFinishes());
    const c = await create({ budget });
    expect(c.status).toBe(201);
    const job = await settle(c.body.id);
    await expectStopped(job, reached);
    // The step that reached the budget ran; no step after it was asked for.
    expect(model.requests).toHaveLength(steps);
    expect(job.usage).toEqual({ inputTokens: 10 * steps, outputTokens: 5 * steps });
  });

  it('output tokens count over the whole job: a follow-up to a job that used its budget fails at once, asking the model nothing', async () => {
    await setup([], neverFinishes({ prompt: 100, completion: 10_000 }));
    const job = await settle((await create({ budget: { maxOutputTokens: 20_000 } })).body.id);
    await expectStopped(job, 'output tokens: 20,000 of 20,000 used');
    expect(model.requests).toHaveLength(2);
    const m = await t.request('POST', `/v2/agent/${s.project.id}/job/${job.id}/message`, { key: s.adminKey, body: { prompt: 'Go on' } });
    expect(m.status).toBe(200);
    const again = await waitFor(async () => {
      const j = (await t.request('GET', `/v2/agent/${s.project.id}/job/${job.id}`, { key: s.adminKey })).body;
      return j.status === 'failed' ? j : null;
    });
    expect(again.error.message).toContain('output tokens: 20,000 of 20,000 used');
    expect(model.requests).toHaveLength(2);
    expect(again.usage).toEqual({ inputTokens: 200, outputTokens: 20_000 });
  });

  it('a spend budget stops the job; usage.costUsd is the tokens at the configured price', async () => {
    // 10 input + 5 output tokens a step at $1,000 / $2,000 per million: $0.02 a step.
    await setup([], neverFinishes(), { INKWELL_MODEL_PRICES: JSON.stringify({ [MODEL]: { input: 1000, output: 2000 } }) });
    const job = await settle((await create({ budget: { maxCostUsd: 0.05 } })).body.id);
    await expectStopped(job, 'spend: $0.0600 of $0.0500 used');
    expect(model.requests).toHaveLength(3);
    expect(job.usage.inputTokens).toBe(30);
    expect(job.usage.costUsd).toBeCloseTo((job.usage.inputTokens * 1000 + job.usage.outputTokens * 2000) / 1_000_000, 10);
  });

  it('a wall-time budget stops a turn whose model never answers, and closes the model call', async () => {
    await setup([{ hang: true }], neverFinishes());
    const job = await settle((await create({ budget: { maxTurnMs: 50 } })).body.id);
    await expectStopped(job, 'wall time per turn:');
    expect(job.error.message).toContain('of 50 ms used');
    await waitFor(async () => model.openConnections() === 0);
  });

  it("the project's daily token budget, counted from stored usage, stops the next job before it asks the model anything", async () => {
    await setup(
      [
        { toolCalls: [{ name: 'list_files', args: {} }], usage: { prompt: 10, completion: 5 } },
        { text: 'Nothing to change', usage: { prompt: 10, completion: 5 } },
      ],
      neverFinishes(),
    );
    await t.ctx.projects.changeBudget(s.project.id, { dailyTokens: '30' });
    const first = await settle((await create({})).body.id);
    // The model finished in the step that reached the budget: the turn's work is whole, it completes.
    expect(first).toMatchObject({ status: 'completed', usage: { inputTokens: 20, outputTokens: 10 } });
    const second = await settle((await create({})).body.id);
    await expectStopped(second, 'project daily tokens: 30 of 30 used today (UTC)');
    expect(second.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    expect(model.requests).toHaveLength(2);
  });

  it("a job's own budget beats the project's default, which beats the server's", async () => {
    await setup([], neverFinishes(), { INKWELL_MAX_OUTPUT_TOKENS: '10' });
    await t.ctx.projects.changeBudget(s.project.id, { maxOutputTokens: '15' });
    const other = await t.seed({ repository: GITHUB_URL, ref: 'main' });
    const own = await create({ budget: { maxOutputTokens: 25 } });
    const project = await create({});
    const server = await create({}, other);
    expect((await settle(own.body.id)).error.message).toContain('output tokens: 25 of 25 used');
    expect((await settle(project.body.id)).error.message).toContain('output tokens: 15 of 15 used');
    expect((await settle(server.body.id, other)).error.message).toContain('output tokens: 10 of 10 used');
  });

  it('bad budget values are 400s naming the field; nothing is stored', async () => {
    await setup([], undefined);
    const cases: [Record<string, unknown>, string, string][] = [
      [{ maxSteps: 0 }, 'invalid_request', 'budget.maxSteps'],
      [{ maxSteps: 1001 }, 'invalid_request', 'budget.maxSteps'],
      [{ maxOutputTokens: 1.5 }, 'invalid_request', 'budget.maxOutputTokens'],
      [{ maxInputTokens: -1 }, 'invalid_request', 'budget.maxInputTokens'],
      [{ maxTurnMs: '10m' }, 'invalid_request', 'budget.maxTurnMs'],
      [{ maxCostUsd: -1 }, 'invalid_request', 'budget.maxCostUsd'],
      [{ maxWords: 5 }, 'unknown_field', 'budget.maxWords'],
      // The test model has no price: a spend budget could never be checked.
      [{ maxCostUsd: 1 }, 'invalid_request', 'budget.maxCostUsd'],
    ];
    for (const [budget, code, field] of cases) {
      const r = await create({ budget });
      expect(r.status, JSON.stringify(budget)).toBe(400);
      expect(r.body.code).toBe(code);
      expect(r.body.details.map((d: { path: string }) => d.path)).toContain(field);
      expect(r.body.error).toContain(field);
      expect(hostedErrorErrors(r.body)).toBeNull();
    }
    expect((await t.request('GET', `/v2/agent/${s.project.id}/jobs`, { key: s.adminKey })).body.jobs).toEqual([]);
  });
});
