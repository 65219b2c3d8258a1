// Providers over real HTTP: `openai/…` and `openai-compatible/…` both speak Chat Completions to the
// configured base URL, with the configured key.
import { afterEach, describe, expect, it } from 'vitest';
import { runLoop } from '../../src/agent/loop.ts';
import { createLanguageModel, ModelNotConfiguredError } from '../../src/agent/models.ts';
import { testConfig } from '../../src/config.ts';
import { type ModelServer, startModelServer } from '../helpers/model-server.ts';

let server: ModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function oneTurn(modelId: string, env: Record<string, string>) {
  const config = testConfig({}, env);
  return runLoop({
    model: createLanguageModel(modelId, config),
    system: 'be brief',
    messages: [{ role: 'user', content: 'hi' }],
    tools: {},
    maxSteps: 3,
    streaming: false,
    maxRetries: 0,
    retryBaseDelayMs: 1,
    signal: new AbortController().signal,
    onAssistantText: async () => {},
  });
}

describe('model providers', () => {
  it('openai/… uses the Chat Completions endpoint at OPENAI_BASE_URL with OPENAI_API_KEY', async () => {
    server = await startModelServer([{ text: 'hello' }]);
    const result = await oneTurn('openai/gpt-4.1-mini', { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: 'sk-test-openai' });
    expect(result.text).toBe('hello');
    expect(server.requests[0]).toMatchObject({ path: '/v1/chat/completions' });
    expect(server.requests[0]!.body.model).toBe('gpt-4.1-mini');
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-test-openai');
    expect(server.requests[0]!.body.messages[0]).toEqual({ role: 'system', content: 'be brief' });
  });

  it('openai-compatible/… sends the model name after the first slash and an optional key', async () => {
    server = await startModelServer([{ text: 'hi there' }, { text: 'again' }]);
    await oneTurn('openai-compatible/qwen/qwen3:8b', { OPENAI_COMPATIBLE_BASE_URL: server.baseUrl });
    expect(server.requests[0]!.body.model).toBe('qwen/qwen3:8b');
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
    await oneTurn('openai-compatible/llama', { OPENAI_COMPATIBLE_BASE_URL: server.baseUrl, OPENAI_COMPATIBLE_API_KEY: 'local-key' });
    expect(server.requests[1]!.headers.authorization).toBe('Bearer local-key');
  });

  it('refuses to build a model whose provider is not configured', () => {
    expect(() => createLanguageModel('anthropic/claude-x', testConfig())).toThrow(ModelNotConfiguredError);
  });
});

describe('anthropic provider', () => {
  it('anthropic/… calls the Messages API at ANTHROPIC_BASE_URL with the x-api-key header', async () => {
    const http = await import('node:http');
    const seen: Array<{ path: string; key: string | undefined; body: any }> = [];
    const srv = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => {
        raw += c;
      });
      req.on('end', () => {
        seen.push({ path: req.url ?? '', key: req.headers['x-api-key'] as string | undefined, body: JSON.parse(raw) });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: 'claude-test',
            content: [{ type: 'text', text: 'bonjour' }],
            stop_reason: 'end_turn',
            stop_sequence: null,
            usage: { input_tokens: 7, output_tokens: 3 },
          }),
        );
      });
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    try {
      const port = (srv.address() as import('node:net').AddressInfo).port;
      const result = await oneTurn('anthropic/claude-test', { ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}/v1`, ANTHROPIC_API_KEY: 'sk-ant-test' });
      expect(result.text).toBe('bonjour');
      expect(result.usage).toEqual({ inputTokens: 7, outputTokens: 3 });
      expect(seen[0]).toMatchObject({ path: '/v1/messages', key: 'sk-ant-test' });
      expect(seen[0]!.body.model).toBe('claude-test');
      expect(JSON.stringify(seen[0]!.body.system)).toContain('be brief');
    } finally {
      srv.closeAllConnections();
      await new Promise<void>((r) => srv.close(() => r()));
    }
  });
});
