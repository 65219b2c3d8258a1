// The tool-calling loop on the AI SDK: step limit, model retries with backoff, abort.
// Streaming (SSE) and one-shot responses run the same loop; config.model.streaming picks one.
import { APICallError, generateText, type ModelMessage, stepCountIs, streamText, type ToolSet, wrapLanguageModel } from 'ai';
import type { ProviderModel } from './models.ts';

export interface LoopInput {
  model: ProviderModel;
  system: string;
  messages: ModelMessage[];
  tools: ToolSet;
  maxSteps: number;
  streaming: boolean;
  maxRetries: number;
  retryBaseDelayMs: number;
  signal: AbortSignal;
  onAssistantText(text: string): Promise<void>;
  /** Tool calls the SDK rejected before running them (unknown tool, arguments that fail the schema). */
  onToolError?(part: { toolCallId: string; toolName: string; error: unknown }): Promise<void>;
  onRetry?(info: { attempt: number; delayMs: number; error: string }): void;
}

export interface LoopResult {
  responseMessages: ModelMessage[];
  text: string;
  steps: number;
  /** The model still wanted tools when the step limit stopped it. */
  stepLimitHit: boolean;
  usage: { inputTokens: number; outputTokens: number };
}

export class StepLimitError extends Error {
  constructor(
    readonly steps: number,
    readonly usage: LoopResult['usage'],
  ) {
    super(`the agent used all ${steps} steps and still wanted to call tools`);
    this.name = 'StepLimitError';
  }
}

/** A streamed response that broke off mid-body (connection dropped, body cut short): retried as a whole. */
export class StreamInterruptedError extends Error {
  constructor(cause: unknown) {
    super(`the model's streamed response broke off: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'StreamInterruptedError';
  }
}

export function isRetryableModelError(err: unknown): boolean {
  if (err instanceof StreamInterruptedError) return true;
  if (APICallError.isInstance(err)) return err.isRetryable || (err.statusCode !== undefined && (err.statusCode === 429 || err.statusCode >= 500));
  // Network failures (connection reset/refused, fetch failed) before any response.
  const e = err as { name?: string; cause?: { code?: string } };
  return e?.name === 'TypeError' && /fetch failed|terminated|socket/i.test(String((err as Error).message ?? ''));
}

/** Delay before retry `attempt` (1-based): exponential with jitter; a larger Retry-After wins (capped at 60 s). Pure. */
export function retryDelayMs(attempt: number, baseMs: number, headers: Record<string, string> | undefined, random = Math.random()): number {
  const backoff = baseMs * 2 ** (attempt - 1) * (0.75 + 0.5 * random);
  let hinted = 0;
  const ms = headers?.['retry-after-ms'];
  const s = headers?.['retry-after'];
  if (ms && /^\d+(\.\d+)?$/.test(ms)) hinted = Number(ms);
  else if (s && /^\d+(\.\d+)?$/.test(s)) hinted = Number(s) * 1000;
  else if (s) {
    const at = Date.parse(s);
    if (!Number.isNaN(at)) hinted = Math.max(0, at - Date.now());
  }
  return Math.round(Math.min(Math.max(backoff, hinted), 60_000));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

async function withRetry<T>(fn: () => PromiseLike<T>, input: LoopInput): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (input.signal.aborted || attempt > input.maxRetries || !isRetryableModelError(err)) throw err;
      const delayMs = retryDelayMs(attempt, input.retryBaseDelayMs, APICallError.isInstance(err) ? err.responseHeaders : undefined);
      input.onRetry?.({ attempt, delayMs, error: (err as Error).message });
      await sleep(delayMs, input.signal);
    }
  }
}

type StreamResult = Awaited<ReturnType<Exclude<ProviderModel, string>['doStream']>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;

/**
 * Reads a streamed response to its end before the SDK sees it, so a response that breaks off mid-body fails
 * this attempt (and is retried whole) instead of reaching the loop half done. The loop only acts on whole steps,
 * so nothing is lost by buffering one response.
 */
async function readWhole(doStream: () => PromiseLike<StreamResult>, signal: AbortSignal): Promise<StreamResult> {
  const result = await doStream();
  const parts: StreamPart[] = [];
  const reader = result.stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value.type === 'error' && isRetryableModelError(value.error)) throw new StreamInterruptedError(value.error);
      parts.push(value);
    }
  } catch (err) {
    if (signal.aborted || err instanceof StreamInterruptedError) throw err;
    throw new StreamInterruptedError(err);
  } finally {
    reader.releaseLock();
  }
  const stream = new ReadableStream<StreamPart>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
  return { ...result, stream };
}

/** Runs the loop to the end. Throws the model error (after retries), the abort reason, or StepLimitError. */
export async function runLoop(input: LoopInput): Promise<LoopResult> {
  // The AI SDK's own retries are off (maxRetries: 0): ours honour config.model.retryBaseDelayMs.
  const model = wrapLanguageModel({
    model: input.model,
    middleware: {
      specificationVersion: 'v3',
      wrapGenerate: ({ doGenerate }) => withRetry(doGenerate, input),
      wrapStream: ({ doStream }) => withRetry(() => readWhole(doStream, input.signal), input),
    },
  });
  // Some models end with an empty message after their last tool call: the summary is then the last text they wrote.
  let lastText = '';
  const common = {
    model,
    system: input.system,
    messages: input.messages,
    tools: input.tools,
    stopWhen: stepCountIs(input.maxSteps),
    maxRetries: 0,
    abortSignal: input.signal,
    onStepFinish: async (step: { text: string; content: ReadonlyArray<{ type: string }> }) => {
      if (step.text.trim() !== '') {
        lastText = step.text;
        await input.onAssistantText(step.text);
      }
      for (const part of step.content) {
        if (part.type === 'tool-error' && input.onToolError)
          await input.onToolError(part as unknown as { toolCallId: string; toolName: string; error: unknown });
      }
    },
  };
  let responseMessages: ModelMessage[];
  let text: string;
  let steps: Array<{ finishReason: string }>;
  let usage: { inputTokens: number | undefined; outputTokens: number | undefined };
  if (input.streaming) {
    let streamError: unknown = null;
    const result = streamText({ ...common, onError: () => {} });
    for await (const part of result.fullStream) {
      if (part.type === 'error') {
        streamError ??= part.error;
      }
    }
    if (input.signal.aborted) throw input.signal.reason;
    if (streamError) throw streamError;
    const response = await result.response;
    responseMessages = response.messages;
    text = await result.text;
    steps = await result.steps;
    usage = await result.totalUsage;
  } else {
    const result = await generateText(common);
    responseMessages = result.response.messages;
    text = result.text;
    steps = result.steps;
    usage = result.totalUsage;
  }
  const total = { inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0 };
  const last = steps[steps.length - 1];
  const stepLimitHit = steps.length >= input.maxSteps && last?.finishReason === 'tool-calls';
  if (stepLimitHit) throw new StepLimitError(steps.length, total);
  return { responseMessages, text: text.trim() === '' ? lastText : text, steps: steps.length, stepLimitHit, usage: total };
}
