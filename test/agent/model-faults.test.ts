// Faults of the model provider, against the scripted model server over real HTTP, streaming and not: 429 with
// Retry-After, 5xx, a stream cut mid-reply (also right after a tool call arrived), a request that hangs past
// the per-request timeout. Each is retried and the run completes with every tool run exactly once; when
// retries run out the job's error code names the cause.
import { afterEach, describe, expect, it } from 'vitest';
import { runLoop } from '../../src/agent/loop.ts';
import { createLanguageModel } from '../../src/agent/models.ts';
import { testConfig } from '../../src/config.ts';
import { readBranchFile } from '../helpers/git.ts';
import { type ModelServer, startModelServer } from '../helpers/model-server.ts';
import { type Harness, runError, startHarness } from './harness.ts';

const BRANCH = 'inkwell/test1-update-intro';
const NOTES = '# Release notes\n\nThe first line.\nThe second line.\n';
const write = { name: 'write_file', args: { path: 'docs/notes.md', content: NOTES } };

let h: Harness | null = null;
let server: ModelServer | null = null;
afterEach(async () => {
  await h?.close();
  await server?.close();
  h = null;
  server = null;
});

/** The write ran once (one tool_call event, one result) and its file is on the pushed branch. */
function expectWrittenOnce(harness: Harness): void {
  const calls = harness.events.filter((e) => e.type === 'tool_call');
  expect(calls).toHaveLength(1);
  expect(calls[0]!.data).toMatchObject({ tool: 'write_file' });
  expect(harness.events.filter((e) => e.type === 'tool_result')).toHaveLength(1);
  expect(readBranchFile(harness.repo, BRANCH, 'docs/notes.md')).toBe(NOTES);
  expect(harness.github.pulls).toHaveLength(1);
}

for (const streaming of ['1', '0']) {
  const mode = streaming === '1' ? 'streaming' : 'one-shot';

  describe(`model faults are retried (${mode})`, () => {
    it('429 with Retry-After, then success', async () => {
      h = await startHarness({
        env: { INKWELL_MODEL_STREAMING: streaming },
        script: [{ status: 429, message: 'rate limited', headers: { 'retry-after-ms': '20' } }, { toolCalls: [write] }, { text: 'Add release notes\n\nDone.' }],
      });
      const result = await h.execute();
      expect(result.summary).toBe('Add release notes\n\nDone.');
      expect(h.model.requests).toHaveLength(3);
      expect(h.model.requests.every((r) => r.stream === (streaming === '1'))).toBe(true);
      expectWrittenOnce(h);
    });

    it('500 and 503, then success', async () => {
      h = await startHarness({
        env: { INKWELL_MODEL_STREAMING: streaming },
        script: [{ toolCalls: [write] }, { status: 500, message: 'internal' }, { status: 503, message: 'overloaded' }, { text: 'Add release notes\n\nDone.' }],
      });
      const result = await h.execute();
      expect(result.summary).toBe('Add release notes\n\nDone.');
      expect(h.model.requests).toHaveLength(4);
      // The retried request is the same conversation as the failed one (the tool result once).
      expect(h.model.requests[2]!.raw).toBe(h.model.requests[1]!.raw);
      expectWrittenOnce(h);
    });

    // Chunks of the scripted write_file reply: 1 role, 2 the tool call's id and name, 3–5 its arguments,
    // 6 finish_reason, 7 usage; then [DONE]. Cut after 6: everything but the usage and [DONE] arrived.
    // One-shot requests just lose their connection.
    for (const afterChunks of [2, 4, 5, 6]) {
      it(`a reply cut after ${afterChunks} chunks (the tool call partly or wholly received) is retried; the tool runs once`, async () => {
        h = await startHarness({
          env: { INKWELL_MODEL_STREAMING: streaming },
          script: [{ cutStream: { afterChunks, reply: { toolCalls: [write] } } }, { toolCalls: [write] }, { text: 'Add release notes\n\nDone.' }],
        });
        const result = await h.execute();
        expect(result.summary).toBe('Add release notes\n\nDone.');
        expect(h.model.requests).toHaveLength(3);
        expect(h.model.requests[1]!.raw).toBe(h.model.requests[0]!.raw);
        expectWrittenOnce(h);
      });
    }

    it('a request that hangs past INKWELL_MODEL_REQUEST_TIMEOUT_MS is abandoned and retried', async () => {
      h = await startHarness({
        env: { INKWELL_MODEL_STREAMING: streaming, INKWELL_MODEL_REQUEST_TIMEOUT_MS: '300' },
        script: [{ toolCalls: [write] }, { hang: true }, { text: 'Add release notes\n\nDone.' }],
      });
      const result = await h.execute();
      expect(result.summary).toBe('Add release notes\n\nDone.');
      expect(h.model.requests).toHaveLength(3);
      expectWrittenOnce(h);
      await new Promise((r) => setTimeout(r, 50));
      expect(h.model.openConnections()).toBe(0);
    });

    it('a reply that stalls mid-body past the timeout is abandoned and retried; the tool runs once', async () => {
      h = await startHarness({
        env: { INKWELL_MODEL_STREAMING: streaming, INKWELL_MODEL_REQUEST_TIMEOUT_MS: '300' },
        script: [{ cutStream: { afterChunks: 4, reply: { toolCalls: [write] }, stall: true } }, { toolCalls: [write] }, { text: 'Add release notes\n\nDone.' }],
      });
      const result = await h.execute();
      expect(result.summary).toBe('Add release notes\n\nDone.');
      expect(h.model.requests).toHaveLength(3);
      expectWrittenOnce(h);
      await new Promise((r) => setTimeout(r, 50));
      expect(h.model.openConnections()).toBe(0);
    });
  });

  describe(`when retries run out, the code names the cause (${mode})`, () => {
    it('429 every time → model_rate_limited', async () => {
      h = await startHarness({ env: { INKWELL_MODEL_STREAMING: streaming, INKWELL_MODEL_MAX_RETRIES: '2' } });
      h.model.setFallback({ status: 429, message: 'Rate limit reached for requests', headers: { 'retry-after-ms': '10' } });
      const err = await runError(h.execute());
      expect(err.code).toBe('model_rate_limited');
      expect(err.message).toContain('rate-limited');
      expect(err.message).toContain('Rate limit reached for requests');
      expect(h.model.requests).toHaveLength(3);
    });

    it('a Retry-After longer than Inkwell waits (60 s) → model_rate_limited at once, naming when to retry', async () => {
      h = await startHarness({ env: { INKWELL_MODEL_STREAMING: streaming } });
      h.model.setFallback({ status: 429, message: 'daily quota used up', headers: { 'retry-after': '3600' } });
      const before = Date.now();
      const err = await runError(h.execute());
      expect(err.code).toBe('model_rate_limited');
      expect(err.message).toMatch(/retry after \d{4}-\d\d-\d\dT/);
      const retryAt = Date.parse(/retry after (\S+Z)/.exec(err.message)![1]!);
      expect(retryAt).toBeGreaterThanOrEqual(before + 3_600_000 - 1000);
      expect(h.model.requests).toHaveLength(1);
    });

    it('a model that never answers → model_unavailable after the retries, each request timed out', async () => {
      h = await startHarness({ env: { INKWELL_MODEL_STREAMING: streaming, INKWELL_MODEL_REQUEST_TIMEOUT_MS: '200', INKWELL_MODEL_MAX_RETRIES: '1' } });
      h.model.setFallback({ hang: true });
      const err = await runError(h.execute());
      expect(err.code).toBe('model_unavailable');
      expect(err.message).toContain('did not answer within 0.2 s');
      expect(h.model.requests).toHaveLength(2);
      await new Promise((r) => setTimeout(r, 50));
      expect(h.model.openConnections()).toBe(0);
    });

    it('a 401 is not retried → model_error', async () => {
      h = await startHarness({ env: { INKWELL_MODEL_STREAMING: streaming } });
      h.model.setFallback({ status: 401, message: 'invalid api key' });
      const err = await runError(h.execute());
      expect(err.code).toBe('model_error');
      expect(h.model.requests).toHaveLength(1);
    });
  });

  describe(`Retry-After is honoured as given (${mode}, recorded waits, nothing waits for real)`, () => {
    for (const [headers, expected] of [
      [{ 'retry-after': '7' }, 7000],
      [{ 'retry-after-ms': '1500' }, 1500],
    ] as const) {
      it(`${JSON.stringify(headers)} → waits ${expected} ms before the retry`, async () => {
        server = await startModelServer([{ status: 429, headers: { ...headers } }, { status: 503, headers: { 'retry-after': '2' } }, { text: 'ok' }]);
        const config = testConfig({}, { OPENAI_COMPATIBLE_BASE_URL: server.baseUrl });
        const slept: number[] = [];
        const result = await runLoop({
          model: createLanguageModel('openai-compatible/test-model', config),
          system: 'test',
          messages: [{ role: 'user', content: 'hi' }],
          tools: {},
          maxSteps: 2,
          streaming: streaming === '1',
          maxRetries: 3,
          retryBaseDelayMs: 10,
          signal: new AbortController().signal,
          onAssistantText: async () => {},
          sleep: async (ms) => {
            slept.push(ms);
          },
        });
        expect(result.text).toBe('ok');
        expect(slept).toEqual([expected, 2000]);
        expect(server.requests).toHaveLength(3);
      });
    }
  });
}

it('the per-request timeout defaults to 5 minutes and is configurable', () => {
  expect(testConfig().model.requestTimeoutMs).toBe(300_000);
  expect(testConfig({}, { INKWELL_MODEL_REQUEST_TIMEOUT_MS: '1000' }).model.requestTimeoutMs).toBe(1000);
});
