// The tool-calling loop on the AI SDK: step limit, model retries with backoff (Retry-After honoured), per-request timeout, abort.
// Streaming (SSE) and one-shot responses run the same loop; config.model.streaming picks one.
import { APICallError, generateText, type ModelMessage, stepCountIs, streamText, type ToolSet, wrapLanguageModel } from 'ai';
import { parseRetryAfter, sleep } from '../lib/wait.ts';
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
  /** One model call (one step) must answer within this (streaming: send its next chunk within this); else it is retried. */
  requestTimeoutMs?: number;
  signal: AbortSignal;
  /** Waits between retries (tests inject one that records and returns at once). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  onAssistantText(text: string): Promise<void>;
  /** Tool calls the SDK rejected before running them (unknown tool, arguments that fail the schema). */
  onToolError?(part: { toolCallId: string; toolName: string; error: unknown }): Promise<void>;
  onRetry?(info: { attempt: number; delayMs: number; error: string }): void;
  /**
   * Asked at each step boundary the model wants to go past, with this turn's steps and tokens so far: a reached
   * budget's message ends the loop there with BudgetExhaustedError.
   */
  budgetReached?(progress: LoopProgress): string | null;
  /** This turn's steps and tokens after each step (what was used is known even when a later step fails). */
  onProgress?(progress: LoopProgress): void;
}

export interface LoopProgress {
  steps: number;
  inputTokens: number;
  outputTokens: number;
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

/** A budget was reached at a step boundary: the loop stopped before the model's next step. */
export class BudgetExhaustedError extends Error {
  constructor(
    readonly reached: string,
    readonly usage: LoopResult['usage'],
  ) {
    super(`budget exhausted: ${reached}`);
    this.name = 'BudgetExhaustedError';
  }
}

/** How many steps and tokens `steps` add up to. */
function progressOf(steps: ReadonlyArray<{ usage: { inputTokens: number | undefined; outputTokens: number | undefined } }>): LoopProgress {
  let inputTokens = 0;
  let outputTokens = 0;
  for (const step of steps) {
    inputTokens += step.usage.inputTokens ?? 0;
    outputTokens += step.usage.outputTokens ?? 0;
  }
  return { steps: steps.length, inputTokens, outputTokens };
}

/** A streamed response that broke off mid-body (connection dropped, body cut short): retried as a whole. */
export class StreamInterruptedError extends Error {
  constructor(cause: unknown) {
    super(`the model's streamed response broke off: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'StreamInterruptedError';
  }
}

/** A model call that did not answer (streaming: did not send its next chunk) within the per-request timeout: retried. */
export class ModelTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`the model did not answer within ${Math.round(timeoutMs / 100) / 10} s (INKWELL_MODEL_REQUEST_TIMEOUT_MS)`);
    this.name = 'ModelTimeoutError';
  }
}

export function isRetryableModelError(err: unknown): boolean {
  if (err instanceof StreamInterruptedError || err instanceof ModelTimeoutError) return true;
  if (APICallError.isInstance(err)) return err.isRetryable || (err.statusCode !== undefined && (err.statusCode === 429 || err.statusCode >= 500));
  // Network failures (connection reset/refused, fetch failed) before any response.
  const e = err as { name?: string; cause?: { code?: string } };
  return e?.name === 'TypeError' && /fetch failed|terminated|socket/i.test(String((err as Error).message ?? ''));
}

/** Why a model call failed, as the job's error code: rate limited (429), unavailable (5xx, timeouts, cut streams, network) or other. */
export type ModelFailureKind = 'rate_limited' | 'unavailable' | 'other';

export function modelFailureKind(err: unknown): ModelFailureKind {
  if (err instanceof ModelRetriesExhaustedError) return err.kind;
  if (APICallError.isInstance(err) && err.statusCode === 429) return 'rate_limited';
  return isRetryableModelError(err) ? 'unavailable' : 'other';
}

/**
 * Retries ran out (or the provider asked for a wait longer than Inkwell waits): the last error, how many
 * calls were made and, when the provider said, when to try again.
 */
export class ModelRetriesExhaustedError extends Error {
  constructor(
    readonly kind: 'rate_limited' | 'unavailable',
    readonly attempts: number,
    readonly retryAt: Date | null,
    cause: unknown,
  ) {
    const what = kind === 'rate_limited' ? 'the model provider rate-limited the request' : 'the model provider was unavailable';
    const when = retryAt ? `; it asks to retry after ${retryAt.toISOString()}` : '';
    super(`${what} (${attempts} ${attempts === 1 ? 'call' : 'calls'})${when}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'ModelRetriesExhaustedError';
  }
}

/** A provider's wait hint (`retry-after-ms`, `retry-after` in seconds or as an HTTP date), in ms; null when absent. Pure. */
export function retryAfterHintMs(headers: Record<string, string> | undefined, now = Date.now()): number | null {
  const ms = headers?.['retry-after-ms'];
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Number(ms);
  return parseRetryAfter(headers?.['retry-after'], now);
}

/** The longest wait a provider's Retry-After gets; a longer hint fails the call at once (it names when to retry). */
export const MODEL_MAX_HINTED_WAIT_MS = 60_000;

/** Delay before retry `attempt` (1-based): exponential with jitter; a larger Retry-After wins (capped at 60 s). Pure. */
export function retryDelayMs(attempt: number, baseMs: number, headers: Record<string, string> | undefined, random = Math.random()): number {
  const backoff = baseMs * 2 ** (attempt - 1) * (0.75 + 0.5 * random);
  const hinted = retryAfterHintMs(headers) ?? 0;
  return Math.round(Math.min(Math.max(backoff, hinted), 60_000));
}

/** One attempt's signal: the run's signal plus the per-request timeout, which `touch()` restarts (a streamed chunk arrived). */
interface Attempt {
  signal: AbortSignal;
  touch(): void;
  timedOut(): boolean;
  done(): void;
}

function startAttempt(input: LoopInput): Attempt {
  const ms = input.requestTimeoutMs;
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    if (!ms) return;
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new ModelTimeoutError(ms)), ms);
  };
  arm();
  return {
    signal: AbortSignal.any([input.signal, controller.signal]),
    touch: arm,
    timedOut: () => controller.signal.aborted && !input.signal.aborted,
    done: () => clearTimeout(timer),
  };
}

async function withRetry<T>(fn: (attempt: Attempt) => PromiseLike<T>, input: LoopInput): Promise<T> {
  const wait = input.sleep ?? sleep;
  for (let attempt = 1; ; attempt++) {
    const current = startAttempt(input);
    try {
      return await fn(current);
    } catch (caught) {
      // A timed-out attempt surfaces as whatever the fetch or the SDK made of the abort: name the cause.
      const err = current.timedOut() ? new ModelTimeoutError(input.requestTimeoutMs!) : caught;
      if (input.signal.aborted || !isRetryableModelError(err)) throw err;
      const kind = modelFailureKind(err) === 'rate_limited' ? 'rate_limited' : 'unavailable';
      const headers = APICallError.isInstance(err) ? err.responseHeaders : undefined;
      const hint = retryAfterHintMs(headers);
      const retryAt = hint !== null ? new Date(Date.now() + hint) : null;
      if (attempt > input.maxRetries || (hint !== null && hint > MODEL_MAX_HINTED_WAIT_MS)) throw new ModelRetriesExhaustedError(kind, attempt, retryAt, err);
      const delayMs = retryDelayMs(attempt, input.retryBaseDelayMs, headers);
      input.onRetry?.({ attempt, delayMs, error: (err as Error).message });
      await wait(delayMs, input.signal);
    } finally {
      current.done();
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
async function readWhole(doStream: () => PromiseLike<StreamResult>, attempt: Attempt): Promise<StreamResult> {
  const result = await doStream();
  attempt.touch();
  const parts: StreamPart[] = [];
  const reader = result.stream.getReader();
  // A stalled stream (no chunk within the per-request timeout) ends the read even if the body never errors.
  const stalled = new Promise<never>((_, reject) => {
    const onAbort = () => reject(attempt.signal.reason);
    if (attempt.signal.aborted) onAbort();
    else attempt.signal.addEventListener('abort', onAbort, { once: true });
  });
  stalled.catch(() => {});
  const signal = attempt.signal;
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), stalled]);
      if (done) break;
      attempt.touch();
      if (value.type === 'error' && isRetryableModelError(value.error)) throw new StreamInterruptedError(value.error);
      parts.push(value);
    }
  } catch (err) {
    if (signal.aborted) {
      void reader.cancel().catch(() => {});
      throw err;
    }
    if (err instanceof StreamInterruptedError) throw err;
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

/** Longest tool error text the model gets back (the SDK's invalid-input error quotes the whole input). */
export const TOOL_ERROR_CHARS = 1000;

/**
 * The messages with every tool error text clipped to TOOL_ERROR_CHARS, keeping its end (where the SDK puts the
 * reason: "Error message: …"). A malformed call with a 50 KB argument would otherwise be echoed back whole
 * into every later request of the run.
 */
export function clipToolErrors(messages: ModelMessage[]): ModelMessage[] {
  let changed = false;
  const out = messages.map((m) => {
    if (m.role !== 'tool') return m;
    const content = m.content.map((part) => {
      if (part.type !== 'tool-result' || part.output.type !== 'error-text' || part.output.value.length <= TOOL_ERROR_CHARS) return part;
      changed = true;
      const v = part.output.value;
      const half = TOOL_ERROR_CHARS / 2;
      return { ...part, output: { ...part.output, value: `${v.slice(0, half)} … (${v.length - 2 * half} characters left out) … ${v.slice(-half)}` } };
    });
    return { ...m, content };
  });
  return changed ? out : messages;
}

/** Runs the loop to the end. Throws the model error (after retries), the abort reason, StepLimitError or BudgetExhaustedError. */
export async function runLoop(input: LoopInput): Promise<LoopResult> {
  // The AI SDK's own retries are off (maxRetries: 0): ours honour config.model.retryBaseDelayMs.
  const model = wrapLanguageModel({
    model: input.model,
    middleware: {
      specificationVersion: 'v3',
      // Each attempt calls the provider model itself with its own signal (the run's plus the per-request timeout).
      wrapGenerate: ({ model, params }) => withRetry((attempt) => model.doGenerate({ ...params, abortSignal: attempt.signal }), input),
      wrapStream: ({ model, params }) => withRetry((attempt) => readWhole(() => model.doStream({ ...params, abortSignal: attempt.signal }), attempt), input),
    },
  });
  // Some models end with an empty message after their last tool call: the summary is then the last text they wrote.
  let lastText = '';
  let budgetStop: string | null = null;
  const done: Array<{ usage: { inputTokens: number | undefined; outputTokens: number | undefined } }> = [];
  const common = {
    model,
    system: input.system,
    messages: input.messages,
    tools: input.tools,
    stopWhen: [
      stepCountIs(input.maxSteps),
      ({ steps }: { steps: ReadonlyArray<{ usage: { inputTokens: number | undefined; outputTokens: number | undefined } }> }) => {
        budgetStop = input.budgetReached?.(progressOf(steps)) ?? null;
        return budgetStop !== null;
      },
    ],
    prepareStep: ({ messages }: { messages: ModelMessage[] }) => ({ messages: clipToolErrors(messages) }),
    maxRetries: 0,
    abortSignal: input.signal,
    onStepFinish: async (step: {
      text: string;
      content: ReadonlyArray<{ type: string }>;
      usage: { inputTokens: number | undefined; outputTokens: number | undefined };
    }) => {
      done.push(step);
      input.onProgress?.(progressOf(done));
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
  if (budgetStop !== null) throw new BudgetExhaustedError(budgetStop, total);
  const last = steps[steps.length - 1];
  const stepLimitHit = steps.length >= input.maxSteps && last?.finishReason === 'tool-calls';
  if (stepLimitHit) throw new StepLimitError(steps.length, total);
  return { responseMessages, text: text.trim() === '' ? lastText : text, steps: steps.length, stepLimitHit, usage: total };
}
