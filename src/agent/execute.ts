// One agent turn end to end: workspace → model loop with tools → commit → push → pull request.
// Knows nothing of HTTP or the job table: the jobs worker hands in a RunInput and stores the result.
import fs from 'node:fs/promises';
import { AISDKError, type ModelMessage } from 'ai';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { infraFault } from '../db/errors.ts';
import { GitError } from '../git/run.ts';
import { commitAll, commitsAhead, prepareWorkspace, pushBranch } from '../git/workspace.ts';
import { HostError, HostRateLimitedError, hostConfigError, hostFor } from '../hosts/index.ts';
import { scrubSecrets } from '../lib/logger.ts';
import { isRetryableModelError, modelFailureKind, runLoop, StepLimitError } from './loop.ts';
import { createLanguageModel, ModelNotConfiguredError, modelConfigError } from './models.ts';
import { buildSystemPrompt, gatherRepoContext } from './prompt.ts';
import { describeChange } from './summary.ts';
import { createTools } from './tools.ts';

export type RunEvent = { type: 'assistant_message' | 'tool_call' | 'tool_result' | 'commit' | 'pull_request' | 'error'; data: Record<string, unknown> };

export interface RunInput {
  jobId: string;
  /** Project's repository URL or local path / file:// URL (never with credentials). */
  repository: string;
  /** Base branch (source.ref). */
  ref: string;
  /** Job branch (inkwell/<short-id>-<slug> or requested). */
  branch: string;
  /** '<provider>/<model>' */
  model: string;
  draft: boolean;
  /** Conversation of previous turns (empty on the first turn). */
  history: ModelMessage[];
  /** This turn's user message. */
  prompt: string;
  /** Abort = archive or shutdown: stops the model call and tools promptly (RunError 'aborted'). */
  signal: AbortSignal;
  onEvent: (e: RunEvent) => void | Promise<void>;
}

export interface RunResult {
  /** history + this turn's messages (stored by jobs for the next turn). */
  messages: ModelMessage[];
  /** The agent's final text. */
  summary: string;
  /** URL of the branch's open PR (created or reused); null for local hosts or when the branch was never pushed. */
  prLink: string | null;
  /** New commit of this turn, null when nothing changed. */
  commitSha: string | null;
  usage: { inputTokens: number; outputTokens: number };
}

export type RunErrorCode =
  | 'step_limit_exceeded'
  | 'run_deadline_exceeded'
  /** The model provider answered 429 on every try (or asked for a wait longer than Inkwell waits). */
  | 'model_rate_limited'
  /** 5xx, timeouts, cut streams or network failures on every try. */
  | 'model_unavailable'
  | 'model_error'
  | 'model_not_configured'
  | 'git_error'
  /** The data directory's filesystem is full (the workspace could not be fetched, checked out or committed). */
  | 'storage_full'
  /** The code host's rate limit outlasted INKWELL_HOST_MAX_WAIT_MS; the message says when to retry. */
  | 'host_rate_limited'
  | 'host_error'
  | 'aborted';

export class RunError extends Error {
  /** Tokens used before the failure, when known (add to the job's cumulative usage). */
  usage: { inputTokens: number; outputTokens: number } | null = null;
  constructor(
    readonly code: RunErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RunError';
  }
}

const MESSAGE_EVENT_CHARS = 20_000;

function clipText(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

function errorText(err: unknown, secrets: ReadonlyArray<string | undefined> = []): string {
  const e = err as { message?: unknown; statusCode?: unknown };
  let text = scrubSecrets(typeof e?.message === 'string' ? e.message : String(err));
  for (const secret of secrets) if (secret && secret.length >= 6) text = text.split(secret).join('[redacted]');
  return text.slice(0, 1000);
}

export function createRunExecutor(config: Config, logger: Logger): { execute(input: RunInput): Promise<RunResult> } {
  async function execute(input: RunInput): Promise<RunResult> {
    const log = logger.child({ jobId: input.jobId, branch: input.branch, model: input.model });
    const deadline = AbortSignal.timeout(config.agent.runTimeoutMs);
    const signal = AbortSignal.any([input.signal, deadline]);
    let usage: RunResult['usage'] | null = null;
    // Wall time per phase of the run, logged with the outcome (where a slow run spends its time).
    const phasesMs: Record<string, number> = {};
    let phaseStart = performance.now();
    const phase = (name: string) => {
      const t = performance.now();
      phasesMs[name] = Math.round((t - phaseStart) * 10) / 10;
      phaseStart = t;
    };

    const emit = async (type: RunEvent['type'], data: Record<string, unknown>): Promise<void> => {
      try {
        await input.onEvent({ type, data });
      } catch (err) {
        log.warn({ err, eventType: type }, 'run event handler failed; continuing');
      }
    };

    const secrets = [
      config.hosts.githubToken,
      config.hosts.gitlabToken,
      config.model.anthropicApiKey,
      config.model.openaiApiKey,
      config.model.openaiCompatibleApiKey,
    ];
    // A RunError for every expected failure; anything else (a bug, a full disk) is rethrown as is.
    const classify = (err: unknown): unknown => {
      if (err instanceof RunError) return err;
      if (input.signal.aborted) return new RunError('aborted', 'The run was stopped');
      if (deadline.aborted) return new RunError('run_deadline_exceeded', `The run exceeded its deadline of ${Math.round(config.agent.runTimeoutMs / 1000)} s`);
      if (err instanceof StepLimitError) {
        usage = err.usage;
        return new RunError('step_limit_exceeded', `The agent reached the step limit (${config.agent.maxSteps}) before finishing`);
      }
      if (err instanceof ModelNotConfiguredError) return new RunError('model_not_configured', err.message);
      // A full disk under the workspace is named as such (git's message or the file system's ENOSPC); a later
      // retry succeeds once there is space again.
      if (infraFault(err) === 'storage_full') {
        return new RunError('storage_full', `The server's disk is full; the turn could not prepare or commit the workspace: ${errorText(err, secrets)}`);
      }
      if (err instanceof GitError) return new RunError('git_error', errorText(err, secrets));
      if (err instanceof HostRateLimitedError) return new RunError('host_rate_limited', errorText(err, secrets));
      if (err instanceof HostError) return new RunError('host_error', errorText(err, secrets));
      const modelFailure = modelFailureKind(err);
      if (modelFailure === 'rate_limited') return new RunError('model_rate_limited', `The model call failed: ${errorText(err, secrets)}`);
      if (modelFailure === 'unavailable') return new RunError('model_unavailable', `The model call failed: ${errorText(err, secrets)}`);
      if (AISDKError.isInstance(err) || isRetryableModelError(err)) return new RunError('model_error', `The model call failed: ${errorText(err, secrets)}`);
      return err;
    };

    try {
      signal.throwIfAborted();
      const modelProblem = modelConfigError(input.model, config);
      if (modelProblem) throw new RunError('model_not_configured', modelProblem);
      if (input.branch === input.ref) throw new RunError('git_error', `The job branch "${input.branch}" must differ from the base ref`);
      const hostProblem = hostConfigError(input.repository, config);
      if (hostProblem) throw new RunError('host_error', hostProblem);
      const host = hostFor(input.repository, config, {
        onWait: ({ host: name, kind, waitMs, reason }) =>
          log.warn({ host: name, kind, waitMs, reason: scrubSecrets(reason) }, 'code host asks to wait; retrying'),
      });
      const model = createLanguageModel(input.model, config);

      log.info({ history: input.history.length }, 'agent run: preparing workspace');
      const ws = await prepareWorkspace(config, { repository: input.repository, ref: input.ref, branch: input.branch, jobId: input.jobId, signal });
      phase('workspace');
      if (ws.mirrorConfigRestored) {
        log.warn(
          { repository: input.repository },
          'agent run: the mirror’s git config, hooks or a worktree config had been changed outside Inkwell; restored Inkwell’s',
        );
      }
      const root = await fs.realpath(ws.dir);
      const context = await gatherRepoContext(root);
      phase('context');
      const system = buildSystemPrompt({ ref: input.ref, branch: input.branch, context });
      const userMessage: ModelMessage = { role: 'user', content: input.prompt };
      const executed = new Set<string>();
      const tools = createTools(
        root,
        {
          toolCall: (id, tool, args) => {
            executed.add(id);
            return emit('tool_call', { toolCallId: id, tool, args });
          },
          toolResult: (id, tool, ok, summary) => emit('tool_result', { toolCallId: id, tool, ok, summary }),
        },
        signal,
      );

      const loop = await runLoop({
        model,
        system,
        messages: [...input.history, userMessage],
        tools,
        maxSteps: config.agent.maxSteps,
        streaming: config.model.streaming,
        maxRetries: config.model.maxRetries,
        retryBaseDelayMs: config.model.retryBaseDelayMs,
        requestTimeoutMs: config.model.requestTimeoutMs,
        signal,
        onAssistantText: (text) => emit('assistant_message', { text: text.length > MESSAGE_EVENT_CHARS ? `${text.slice(0, MESSAGE_EVENT_CHARS)}…` : text }),
        onToolError: async ({ toolCallId, toolName, error }) => {
          if (executed.has(toolCallId)) return;
          // Rejected by the SDK before running (unknown tool, invalid arguments): the model got the error; record it too.
          await emit('tool_call', { toolCallId, tool: toolName, args: { invalid: true } });
          await emit('tool_result', { toolCallId, tool: toolName, ok: false, summary: clipText(errorText(error), 300) });
        },
        onRetry: ({ attempt, delayMs, error }) => log.warn({ attempt, delayMs, error: scrubSecrets(error) }, 'model call failed; retrying'),
      });
      usage = loop.usage;
      signal.throwIfAborted();
      phase('model');

      const summary = loop.text.trim();
      const change = describeChange(summary, input.prompt, input.jobId);
      const restoredBefore = ws.mirrorConfigRestored;
      const commitSha = await commitAll(ws, {
        message: change.commitMessage,
        authorName: config.agent.gitAuthorName,
        authorEmail: config.agent.gitAuthorEmail,
      });
      if (ws.mirrorConfigRestored && !restoredBefore) {
        log.warn({ repository: input.repository }, 'agent run: the mirror’s git config or hooks changed during the turn; restored Inkwell’s before committing');
      }
      phase('commit');
      if (commitSha) {
        await pushBranch(ws, input.branch, signal);
        await emit('commit', { sha: commitSha, branch: input.branch, message: change.title });
        log.info({ commitSha }, 'agent run: pushed');
      }
      phase('push');
      let prLink: string | null = null;
      // A branch with commits of its own needs its pull request, even on a turn that changed nothing
      // (an earlier turn may have pushed and then crashed before opening it).
      if (commitSha || (ws.remoteBranchExists && (await commitsAhead(ws, input.ref, input.branch)) > 0)) {
        const pr = await host.ensurePullRequest({
          repository: input.repository,
          branch: input.branch,
          base: input.ref,
          title: change.title,
          body: change.prBody,
          draft: input.draft,
          signal,
        });
        if (pr) {
          prLink = pr.url;
          await emit('pull_request', { url: pr.url, number: pr.number, branch: input.branch, base: input.ref });
        }
      }
      phase('pullRequest');
      log.info({ prLink, commitSha, usage, phasesMs }, 'agent run: finished');
      return { messages: [...input.history, userMessage, ...loop.responseMessages], summary, prLink, commitSha, usage: loop.usage };
    } catch (err) {
      const classified = classify(err);
      if (!(classified instanceof RunError)) {
        log.error({ err }, 'agent run crashed');
        throw classified;
      }
      if (usage && !classified.usage) classified.usage = usage;
      log.warn({ code: classified.code, error: classified.message }, 'agent run failed');
      throw classified;
    }
  }
  return { execute };
}
