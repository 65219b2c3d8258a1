// How a turn fails: every failure is a RunError with its own code, never a hang.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRunExecutor } from '../../src/agent/execute.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { branchExists, readBranchFile } from '../helpers/git.ts';
import { type Harness, runError, startHarness, TOKEN } from './harness.ts';

let h: Harness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

/** Waits for the model server to see every connection closed (the server learns of it asynchronously). */
async function closedModelConnections(): Promise<void> {
  await vi.waitFor(() => expect(h?.model.openConnections()).toBe(0), { timeout: 60_000, interval: 10 });
}

describe('agent run failures', () => {
  for (const streaming of ['1', '0']) {
    it(`model HTTP 500 every time → model_unavailable after the configured retries (streaming=${streaming})`, async () => {
      h = await startHarness({ env: { INKWELL_MODEL_STREAMING: streaming, INKWELL_MODEL_MAX_RETRIES: '2', INKWELL_MODEL_RETRY_BASE_MS: '20' } });
      h.model.setFallback({ status: 500, message: 'upstream exploded' });
      const started = Date.now();
      const err = await runError(h.execute());
      expect(err.code).toBe('model_unavailable');
      expect(err.message).toContain('upstream exploded');
      expect(err.message).toContain('3 calls');
      // 1 try + 2 retries, with backoff between them (20 ms, then ~40 ms, ±25 %).
      expect(h.model.requests).toHaveLength(3);
      expect(Date.now() - started).toBeGreaterThanOrEqual(40);
      expect(branchExists(h.repo, 'inkwell/test1-update-intro')).toBe(false);
    });
  }

  it('429 then success: the run retries and completes', async () => {
    h = await startHarness({
      script: [{ status: 429, message: 'slow down', headers: { 'retry-after-ms': '30' } }, { status: 503 }, { text: 'Nothing to change.' }],
    });
    const result = await h.execute();
    expect(result.summary).toBe('Nothing to change.');
    expect(h.model.requests).toHaveLength(3);
  });

  it('a streamed response cut off mid-body is retried as a whole: the tool runs once and the run completes', async () => {
    const edit = { name: 'edit_file', args: { path: 'docs/intro.mdx', old_string: 'Hello from Acme.', new_string: 'Hello again from Acme.' } };
    h = await startHarness({
      // The tool call's name and half its arguments arrive, then the connection drops.
      script: [{ cutStream: { afterChunks: 3, reply: { toolCalls: [edit] } } }, { toolCalls: [edit] }, { text: 'Reword the intro\n\nDone.' }],
    });
    const result = await h.execute();
    expect(result.summary).toBe('Reword the intro\n\nDone.');
    expect(h.model.requests).toHaveLength(3);
    expect(h.model.requests.every((r) => r.stream)).toBe(true);
    // The retried request is the same conversation (nothing of the broken response reached it).
    expect(h.model.requests[1]!.raw).toBe(h.model.requests[0]!.raw);
    const calls = h.events.filter((e) => e.type === 'tool_call');
    expect(calls).toHaveLength(1);
    expect(readBranchFile(h.repo, 'inkwell/test1-update-intro', 'docs/intro.mdx')).toContain('Hello again from Acme.');
  });

  it('a stream cut off on every attempt → model_unavailable after the configured retries', async () => {
    h = await startHarness({ env: { INKWELL_MODEL_MAX_RETRIES: '2' } });
    h.model.setFallback({ cutStream: { afterChunks: 2, reply: { text: 'A summary that never arrives in full.' } } });
    const err = await runError(h.execute());
    expect(err.code).toBe('model_unavailable');
    expect(err.message).toContain('broke off');
    expect(h.model.requests).toHaveLength(3);
    expect(h.events.filter((e) => e.type === 'assistant_message')).toHaveLength(0);
  });

  it('a 400 from the model is not retried', async () => {
    h = await startHarness({ script: [{ status: 400, message: 'bad request: context too long' }] });
    const err = await runError(h.execute());
    expect(err.code).toBe('model_error');
    expect(err.message).toContain('context too long');
    expect(h.model.requests).toHaveLength(1);
  });

  it('step limit → step_limit_exceeded when the model still wants tools', async () => {
    h = await startHarness({ env: { INKWELL_MAX_STEPS: '3' } });
    h.model.setFallback({ toolCalls: [{ name: 'list_files', args: {} }] });
    const err = await runError(h.execute());
    expect(err.code).toBe('step_limit_exceeded');
    expect(err.message).toContain('3');
    expect(h.model.requests).toHaveLength(3);
    expect(err.usage).toEqual({ inputTokens: 30, outputTokens: 15 });
  });

  it('finishing on the last allowed step is not a step-limit failure', async () => {
    h = await startHarness({
      env: { INKWELL_MAX_STEPS: '2' },
      script: [{ toolCalls: [{ name: 'list_files', args: {} }] }, { text: 'Done, nothing to change.' }],
    });
    const result = await h.execute();
    expect(result.summary).toBe('Done, nothing to change.');
  });

  for (const streaming of ['1', '0']) {
    it(`run deadline → run_deadline_exceeded (model never answers, streaming=${streaming})`, async () => {
      h = await startHarness({ env: { INKWELL_RUN_TIMEOUT_MS: '400', INKWELL_MODEL_STREAMING: streaming } });
      h.model.setFallback({ hang: true });
      // The model never answers, so only the deadline can end the run (a hang would hit the test's timeout).
      const err = await runError(h.execute());
      expect(err.code).toBe('run_deadline_exceeded');
      await closedModelConnections();
    });
  }

  it('deadline during a long tool loop ends the run too', async () => {
    const step = { toolCalls: [{ name: 'list_files', args: {} }] };
    h = await startHarness({ script: [step, step] });
    h.model.setFallback({ hang: true });
    // The test holds the deadline: it passes once the run has got through two tool steps and waits for a third
    // model answer that never comes, so only the deadline can end the run, inside the loop.
    const deadline = new AbortController();
    const executor = createRunExecutor(h.config, createLogger(h.config), { deadline: () => deadline.signal });
    const pending = runError(executor.execute(h.input()));
    await vi.waitFor(() => expect(h?.model.openConnections()).toBe(1), { timeout: 60_000, interval: 10 });
    deadline.abort(new DOMException('The run deadline passed', 'TimeoutError'));
    const err = await pending;
    expect(err.code).toBe('run_deadline_exceeded');
    expect(h.events.filter((e) => e.type === 'tool_call')).toHaveLength(2);
    expect(h.model.requests).toHaveLength(3);
    await closedModelConnections();
  });

  for (const streaming of ['1', '0']) {
    it(`abort signal → aborted promptly, the model connection is closed (streaming=${streaming})`, async () => {
      h = await startHarness({ env: { INKWELL_MODEL_STREAMING: streaming } });
      h.model.setFallback({ hang: true });
      const controller = new AbortController();
      const pending = h.execute({ signal: controller.signal });
      await vi.waitFor(() => expect(h?.model.requests.length).toBeGreaterThan(0), { timeout: 60_000, interval: 10 });
      controller.abort();
      // The model never answers: the run ends only because the abort reached the request in flight.
      const err = await runError(pending);
      expect(err.code).toBe('aborted');
      await closedModelConnections();
    });
  }

  it('abort between tool calls: no file is written after the signal', async () => {
    const controller = new AbortController();
    h = await startHarness({
      script: [
        () => {
          controller.abort();
          return { toolCalls: [{ name: 'write_file', args: { path: 'late.md', content: 'late\n' } }] };
        },
        { text: 'done' },
      ],
    });
    const err = await runError(h.execute({ signal: controller.signal }));
    expect(err.code).toBe('aborted');
    expect(h.events.filter((e) => e.type === 'tool_call')).toHaveLength(0);
    expect(branchExists(h.repo, 'inkwell/test1-update-intro')).toBe(false);
  });

  it('an already aborted signal never reaches the model', async () => {
    h = await startHarness();
    const err = await runError(h.execute({ signal: AbortSignal.abort() }));
    expect(err.code).toBe('aborted');
    expect(h.model.requests).toHaveLength(0);
  });

  it('model provider without credentials → model_not_configured before any work', async () => {
    h = await startHarness();
    const err = await runError(h.execute({ model: 'anthropic/claude-sonnet-4-5' }));
    expect(err.code).toBe('model_not_configured');
    expect(err.message).toContain('ANTHROPIC_API_KEY');
    expect(h.model.requests).toHaveLength(0);
  });

  it('missing base ref → git_error naming the ref', async () => {
    h = await startHarness();
    const err = await runError(h.execute({ ref: 'does-not-exist' }));
    expect(err.code).toBe('git_error');
    expect(err.message).toContain('does-not-exist');
    expect(h.model.requests).toHaveLength(0);
  });

  it('unreachable repository → git_error without secrets', async () => {
    h = await startHarness();
    const err = await runError(h.execute({ repository: '/nonexistent/repo.git' }));
    expect(err.code).toBe('git_error');
    expect(err.message).not.toContain(TOKEN);
  });

  it('GitHub repository without GITHUB_TOKEN → host_error before the model runs', async () => {
    h = await startHarness({ env: { GITHUB_TOKEN: '' } });
    const err = await runError(h.execute());
    expect(err.code).toBe('host_error');
    expect(err.message).toContain('GITHUB_TOKEN');
    expect(h.model.requests).toHaveLength(0);
  });

  it('a job branch equal to the base ref is refused (nothing pushed to the base)', async () => {
    h = await startHarness();
    const err = await runError(h.execute({ branch: 'main' }));
    expect(err.code).toBe('git_error');
    expect(h.model.requests).toHaveLength(0);
  });

  it('model error bodies that echo a configured key are redacted', async () => {
    const key = 'local-model-key-0123456789';
    h = await startHarness({ env: { OPENAI_COMPATIBLE_API_KEY: key, INKWELL_MODEL_MAX_RETRIES: '0' } });
    h.model.setFallback((req) => ({ status: 401, message: `invalid key ${String(req.headers.authorization)}` }));
    const err = await runError(h.execute());
    expect(err.code).toBe('model_error');
    expect(err.message).toContain('invalid key');
    expect(err.message).not.toContain(key);
  });

  it('a model that ends with an empty message: the summary is its last text', async () => {
    h = await startHarness({
      script: [
        { text: 'Add a changelog entry\n\nNoted the release.', toolCalls: [{ name: 'write_file', args: { path: 'CHANGELOG.md', content: '- release\n' } }] },
        { text: '' },
      ],
    });
    const result = await h.execute();
    expect(result.summary).toBe('Add a changelog entry\n\nNoted the release.');
    expect(h.github.pulls[0]?.title).toBe('Add a changelog entry');
  });

  it('a GitHub rate limit longer than INKWELL_HOST_MAX_WAIT_MS → host_rate_limited naming when to retry; the next run opens the pull request', async () => {
    h = await startHarness({
      env: { INKWELL_HOST_MAX_WAIT_MS: '60000' },
      script: [{ toolCalls: [{ name: 'write_file', args: { path: 'c.md', content: 'c\n' } }] }, { text: 'Add c' }],
    });
    const reset = Math.floor(Date.now() / 1000) + 3600;
    h.github.failNext(403, 1, {
      message: 'API rate limit exceeded for user ID 1.',
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
    });
    const err = await runError(h.execute());
    expect(err.code).toBe('host_rate_limited');
    expect(err.message).toContain('GitHub rate limit');
    expect(err.message).toContain(`retry after ${new Date(reset * 1000 + 1000).toISOString()}`);
    expect(err.message).not.toContain(TOKEN);
    expect(readBranchFile(h.repo, 'inkwell/test1-update-intro', 'c.md')).toBe('c\n');
    expect(h.github.pulls).toHaveLength(0);
    h.model.push({ text: 'c.md is there already.' });
    const again = await h.execute();
    expect(again.prLink).toBe('https://github.com/acme/docs/pull/1');
    expect(h.github.pulls).toHaveLength(1);
  });

  it('a short GitHub secondary rate limit is waited out and the pull request opened', async () => {
    h = await startHarness({ script: [{ toolCalls: [{ name: 'write_file', args: { path: 'd.md', content: 'd\n' } }] }, { text: 'Add d' }] });
    h.github.failNext(403, 1, { message: 'You have exceeded a secondary rate limit.', headers: { 'retry-after': '1' } });
    const result = await h.execute();
    expect(result.prLink).toBe('https://github.com/acme/docs/pull/1');
    expect(h.github.pulls).toHaveLength(1);
  });

  it('a failing event handler does not end the run', async () => {
    h = await startHarness({ script: [{ toolCalls: [{ name: 'list_files', args: {} }] }, { text: 'Nothing to change.' }] });
    const result = await h.execute({
      onEvent: () => {
        throw new Error('event store down');
      },
    });
    expect(result.summary).toBe('Nothing to change.');
  });
});
