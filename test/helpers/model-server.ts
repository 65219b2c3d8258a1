// A real HTTP server speaking the OpenAI Chat Completions protocol (`POST /v1/chat/completions`),
// streaming (SSE chunks with tool_call deltas, then `data: [DONE]`) and non-streaming. Scripted by a
// list of replies consumed one per request; records every request.
//
//   const model = await startModelServer([
//     { toolCalls: [{ name: 'write_file', args: { path: 'a.md', content: 'hi' } }] },
//     { text: 'Add a.md\n\nCreated the page.' },
//   ]);
//   config.model.openaiCompatibleBaseUrl = model.baseUrl;   // http://127.0.0.1:PORT/v1
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedModelRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Raw request body text (what went over the wire). */
  raw: string;
  body: any;
  stream: boolean;
}

export interface ScriptedToolCall {
  name: string;
  args: unknown;
  id?: string;
}

export type ModelReply =
  | { text: string; usage?: { prompt: number; completion: number } }
  | { toolCalls: ScriptedToolCall[]; text?: string; usage?: { prompt: number; completion: number } }
  /** An HTTP error response with the OpenAI error body. */
  | { status: number; message?: string; headers?: Record<string, string> }
  /** Never answer (until the client goes away) — for deadline and abort tests. */
  | { hang: true }
  /** Wait, then answer with `reply`. */
  | { delayMs: number; reply: ModelReply }
  /**
   * Streamed requests: send the status line and the first `afterChunks` SSE chunks of `reply`, then drop the
   * connection (`stall: true`: keep it open and send nothing more). Non-streamed requests: drop (or hold) the connection.
   */
  | { cutStream: { afterChunks: number; reply: Extract<ModelReply, { text: string } | { toolCalls: ScriptedToolCall[] }>; stall?: boolean } };

export type ModelScriptEntry = ModelReply | ((req: RecordedModelRequest, index: number) => ModelReply | Promise<ModelReply>);

export interface ModelServer {
  /** Base URL including `/v1` (what OPENAI_COMPATIBLE_BASE_URL / OPENAI_BASE_URL take). */
  baseUrl: string;
  requests: RecordedModelRequest[];
  /** Adds replies to the end of the script. */
  push(...entries: ModelScriptEntry[]): void;
  /** Replies used once the script is exhausted (default: a 400 error saying so). */
  setFallback(entry: ModelScriptEntry | null): void;
  /** Number of requests whose connection is still open (hung replies). */
  openConnections(): number;
  close(): Promise<void>;
}

let counter = 0;

function completionId(): string {
  counter += 1;
  return `chatcmpl-test${counter}`;
}

function toolCallsOf(reply: { toolCalls: ScriptedToolCall[] }) {
  return reply.toolCalls.map((c, i) => ({
    id: c.id ?? `call_${counter}_${i}`,
    type: 'function' as const,
    function: { name: c.name, arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args) },
  }));
}

function usageOf(reply: { usage?: { prompt: number; completion: number } }) {
  const u = reply.usage ?? { prompt: 10, completion: 5 };
  return { prompt_tokens: u.prompt, completion_tokens: u.completion, total_tokens: u.prompt + u.completion };
}

function writeJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function chunk(id: string, model: string, delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) {
  return {
    id,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  };
}

/** Splits a string into a few pieces so deltas really arrive in parts. */
function pieces(s: string, n = 3): string[] {
  if (s.length < n * 2) return [s];
  const size = Math.ceil(s.length / n);
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

function sendStream(
  res: http.ServerResponse,
  reply: Extract<ModelReply, { text: string } | { toolCalls: ScriptedToolCall[] }>,
  model: string,
  cutAfterChunks = Number.POSITIVE_INFINITY,
  stall = false,
): void {
  const id = completionId();
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  let sent = 0;
  const send = (obj: unknown) => {
    if (sent++ >= cutAfterChunks) return;
    res.write(`data: ${JSON.stringify(obj)}\n\n`);
  };
  send(chunk(id, model, { role: 'assistant', content: '' }, null));
  const text = 'text' in reply ? reply.text : undefined;
  if (text) for (const p of pieces(text)) send(chunk(id, model, { content: p }, null));
  let finish = 'stop';
  if ('toolCalls' in reply) {
    finish = 'tool_calls';
    toolCallsOf(reply).forEach((call, index) => {
      send(chunk(id, model, { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }, null));
      for (const p of pieces(call.function.arguments)) send(chunk(id, model, { tool_calls: [{ index, function: { arguments: p } }] }, null));
    });
  }
  send(chunk(id, model, {}, finish));
  send({ id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model, choices: [], usage: usageOf(reply) });
  if (sent > cutAfterChunks && stall) return;
  if (sent > cutAfterChunks) {
    // The connection drops mid-body (after what was written has gone out).
    res.once('drain', () => res.destroy());
    if (!res.writableNeedDrain) setTimeout(() => res.destroy(), 20);
    return;
  }
  res.write('data: [DONE]\n\n');
  res.end();
}

function sendJson(res: http.ServerResponse, reply: Extract<ModelReply, { text: string } | { toolCalls: ScriptedToolCall[] }>, model: string): void {
  const isTools = 'toolCalls' in reply;
  writeJson(res, 200, {
    id: completionId(),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply.text ?? null, ...(isTools ? { tool_calls: toolCallsOf(reply) } : {}) },
        finish_reason: isTools ? 'tool_calls' : 'stop',
      },
    ],
    usage: usageOf(reply),
  });
}

export async function startModelServer(script: ModelScriptEntry[] = [], opts: { fallback?: ModelScriptEntry } = {}): Promise<ModelServer> {
  const queue: ModelScriptEntry[] = [...script];
  let fallback: ModelScriptEntry | null = opts.fallback ?? null;
  const requests: RecordedModelRequest[] = [];
  const open = new Set<http.ServerResponse>();

  async function respond(req: RecordedModelRequest, res: http.ServerResponse, reply: ModelReply): Promise<void> {
    const model = String(req.body?.model ?? 'test-model');
    if ('hang' in reply) {
      open.add(res);
      res.on('close', () => open.delete(res));
      return;
    }
    if ('delayMs' in reply) {
      await new Promise((r) => setTimeout(r, reply.delayMs));
      if (res.destroyed || res.writableEnded) return;
      return respond(req, res, reply.reply);
    }
    if ('status' in reply) {
      writeJson(res, reply.status, { error: { message: reply.message ?? `scripted HTTP ${reply.status}`, type: 'server_error', code: null } }, reply.headers);
      return;
    }
    if ('cutStream' in reply) {
      if (reply.cutStream.stall) {
        open.add(res);
        res.on('close', () => open.delete(res));
      }
      if (req.stream) sendStream(res, reply.cutStream.reply, model, reply.cutStream.afterChunks, reply.cutStream.stall);
      else if (!reply.cutStream.stall) res.destroy();
      return;
    }
    if (req.stream) sendStream(res, reply, model);
    else sendJson(res, reply, model);
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: any = null;
        try {
          body = raw ? JSON.parse(raw) : null;
        } catch {
          body = null;
        }
        const path = (req.url ?? '/').split('?')[0]!;
        const recorded: RecordedModelRequest = { method: req.method ?? 'GET', path, headers: req.headers, raw, body, stream: body?.stream === true };
        if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
          writeJson(res, 404, { error: { message: `model-server: no route ${req.method} ${path}`, type: 'invalid_request_error' } });
          return;
        }
        requests.push(recorded);
        const index = requests.length - 1;
        const entry = queue.shift() ?? fallback;
        if (!entry) {
          writeJson(res, 400, { error: { message: 'model-server: script exhausted', type: 'invalid_request_error' } });
          return;
        }
        const reply = typeof entry === 'function' ? await entry(recorded, index) : entry;
        await respond(recorded, res, reply);
      })().catch((err) => {
        if (!res.headersSent) writeJson(res, 500, { error: { message: `model-server failure: ${String(err)}` } });
        else res.end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    push: (...entries) => {
      queue.push(...entries);
    },
    setFallback: (entry) => {
      fallback = entry;
    },
    openConnections: () => open.size,
    close: async () => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The text of every message the client sent in a request (system prompt, user, tool results). */
export function requestText(req: RecordedModelRequest): string {
  return JSON.stringify(req.body?.messages ?? []);
}
