// One agent turn end to end: workspace → model loop with tools → commit → push → pull request.
// Knows nothing of HTTP or the job table: the jobs worker hands in a RunInput and stores the result.
import fs from 'node:fs/promises';
import { AISDKError, type ModelMessage } from 'ai';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { infraFault } from '../db/errors.ts';
import { type BranchDiff, branchDiff } from '../git/diff.ts';
import { GitError } from '../git/run.ts';
import { commitAll, commitOf, commitsAhead, prepareWorkspace, pushBranch, type Workspace } from '../git/workspace.ts';
import { HostError, HostRateLimitedError, hostConfigError, hostFor } from '../hosts/index.ts';
import type { CodeHost, PullRequestRef } from '../hosts/types.ts';
import { scrubSecrets } from '../lib/logger.ts';
import { budgetMessage, exhaustedBudget, type RunBudget, resolveBudget, type Usage, wallTimeReached } from './budget.ts';
import { type CheckOutcome, checkAndRepair, checksSection, createDocsChecker, type DocsChecker, docsCheckOn, docsOutcome, withScope } from './checks.ts';
import { BudgetExhaustedError, isRetryableModelError, type LoopProgress, type LoopResult, modelFailureKind, runLoop, StepLimitError } from './loop.ts';
import { createLanguageModel, ModelNotConfiguredError, modelConfigError, type ProviderModel } from './models.ts';
import { followUpComment, pullRequestBody, readPullRequestTemplate } from './pr-body.ts';
import { type PullRequestState, pullRequestState } from './pr-state.ts';
import type { BodySection } from './pr-template.ts';
import { costOf, type ModelPrice, priceOf } from './prices.ts';
import { buildSystemPrompt } from './prompt.ts';
import { gatherRepoContext } from './repo-context.ts';
import { RunError } from './run-error.ts';
import { justificationsFrom, requestsFrom, type ScopeOutcome, scopeEventData, scopeSection, TurnScope } from './scope.ts';
import { commitMessage, commitTurn, describeChange } from './summary.ts';
import { createTools } from './tools.ts';

export { RunError, type RunErrorCode } from './run-error.ts';

export type RunEvent = {
  type: 'assistant_message' | 'tool_call' | 'tool_result' | 'check' | 'scope' | 'commit' | 'pull_request' | 'error';
  data: Record<string, unknown>;
};

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
  /** This turn's number in the job (1 for the first); default: the history's user messages plus one. */
  turn?: number;
  /** Abort = archive or shutdown: stops the model call and tools promptly (RunError 'aborted'). */
  signal: AbortSignal;
  onEvent: (e: RunEvent) => void | Promise<void>;
  /** The branch's diff against its base, after a turn that pushed (or found the branch pushed): stored for the API. */
  onDiff?: (diff: BranchDiff) => Promise<void>;
  /** The budgets this turn runs under and what the job (and its project today) used before it; default: the server's budgets, nothing used. */
  budget?: RunBudget;
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
  /** This turn's tokens, and their cost when the model's price is known. */
  usage: Usage;
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

/** What the steps of one run share. */
interface Turn {
  readonly input: RunInput;
  readonly config: Config;
  readonly log: Logger;
  /** Aborted when the worker stops the run or the run's own deadline passes. */
  readonly signal: AbortSignal;
  readonly deadline: AbortSignal;
  /** Configured credentials, redacted from every error text a run reports. */
  readonly secrets: readonly (string | undefined)[];
  /** Tokens used so far (after each model step), with their cost when the price is known. */
  usage: RunResult['usage'] | null;
  readonly budget: RunBudget;
  readonly price: ModelPrice | null;
  /** Aborted by `signal` or when the turn's wall-time budget passes; what the workspace and the model loop run under. */
  readonly work: AbortSignal;
  /** True once the wall-time budget stopped the work. */
  timeBudgetSpent(): boolean;
  /** Milliseconds since the turn started. */
  elapsedMs(): number;
  /** The model loop is over: the wall-time budget no longer applies (the commit and pull request are not cut off). */
  endWork(): void;
  /** Wall time per phase of the run, logged with the outcome (where a slow run spends its time). */
  readonly phasesMs: Record<string, number>;
  /** Ends the phase `name` now and starts the next one. */
  phase(name: string): void;
  /** Hands an event to the worker; a failing handler is logged and the run goes on. */
  emit(type: RunEvent['type'], data: Record<string, unknown>): Promise<void>;
}

export interface RunExecutorOptions {
  /** The run's deadline signal, started when a run begins (default: `AbortSignal.timeout(runTimeoutMs)`). */
  deadline?: (runTimeoutMs: number) => AbortSignal;
}

function startTurn(config: Config, logger: Logger, input: RunInput, options: RunExecutorOptions): Turn {
  const log = logger.child({ jobId: input.jobId, branch: input.branch, model: input.model });
  const ms = config.agent.runTimeoutMs;
  const deadline = options.deadline ? options.deadline(ms) : AbortSignal.timeout(ms);
  const phasesMs: Record<string, number> = {};
  const started = performance.now();
  let phaseStart = started;
  const signal = AbortSignal.any([input.signal, deadline]);
  const budget = input.budget ?? { limits: resolveBudget(config.budget), before: { inputTokens: 0, outputTokens: 0 } };
  const timeBudget = new AbortController();
  const maxTurnMs = budget.limits.maxTurnMs;
  const timer = maxTurnMs === undefined ? undefined : setTimeout(() => timeBudget.abort(new Error('the wall-time budget of the turn passed')), maxTurnMs);
  return {
    input,
    config,
    log,
    signal,
    deadline,
    secrets: [config.hosts.githubToken, config.hosts.gitlabToken, config.model.anthropicApiKey, config.model.openaiApiKey, config.model.openaiCompatibleApiKey],
    usage: null,
    budget,
    price: priceOf(input.model, config.model.prices),
    work: AbortSignal.any([signal, timeBudget.signal]),
    timeBudgetSpent: () => timeBudget.signal.aborted,
    elapsedMs: () => performance.now() - started,
    endWork: () => clearTimeout(timer),
    phasesMs,
    phase(name) {
      const t = performance.now();
      phasesMs[name] = Math.round((t - phaseStart) * 10) / 10;
      phaseStart = t;
    },
    async emit(type, data) {
      try {
        await input.onEvent({ type, data });
      } catch (err) {
        log.warn({ err, eventType: type }, 'run event handler failed; continuing');
      }
    },
  };
}

/** Refuses, before any work, a turn that cannot run: stopped already, or a model, branch or host that is not usable. */
function refuseUnrunnable(turn: Turn): void {
  const { input, config } = turn;
  turn.signal.throwIfAborted();
  const modelProblem = modelConfigError(input.model, config);
  if (modelProblem) throw new RunError('model_not_configured', modelProblem);
  if (input.branch === input.ref) throw new RunError('git_error', `The job branch "${input.branch}" must differ from the base ref`);
  const hostProblem = hostConfigError(input.repository, config);
  if (hostProblem) throw new RunError('host_error', hostProblem);
  // A job (or its project today) that used up a budget takes no more turns.
  const reached = budgetReached(turn, { steps: 0, inputTokens: 0, outputTokens: 0 });
  if (reached) throw new RunError('budget_exhausted', budgetMessage(reached));
}

/** This turn's tokens with their cost (left out when the model's price is unknown). */
function priced(turn: Turn, p: { inputTokens: number; outputTokens: number }): Usage {
  const costUsd = costOf(p, turn.price);
  return { inputTokens: p.inputTokens, outputTokens: p.outputTokens, ...(costUsd === null ? {} : { costUsd }) };
}

/** The first budget reached with this turn's progress so far, or null. */
function budgetReached(turn: Turn, p: LoopProgress): string | null {
  return exhaustedBudget(turn.budget, { ...priced(turn, p), steps: p.steps, elapsedMs: turn.elapsedMs() });
}

/** The job's worktree at its branch, its real path (the tools' root), and the system prompt made from its contents. */
async function openWorkspace(turn: Turn): Promise<{ ws: Workspace; root: string; system: string }> {
  const { input, config, log } = turn;
  log.info({ history: input.history.length }, 'agent run: preparing workspace');
  const ws = await prepareWorkspace(config, { repository: input.repository, ref: input.ref, branch: input.branch, jobId: input.jobId, signal: turn.work });
  turn.phase('workspace');
  if (ws.mirrorConfigRestored) {
    log.warn(
      { repository: input.repository },
      'agent run: the mirror’s git config, hooks or a worktree config had been changed outside Inkwell; restored Inkwell’s',
    );
  }
  const root = await fs.realpath(ws.dir);
  const context = await gatherRepoContext(root);
  turn.phase('context');
  const maxChangedFiles = turn.budget.limits.maxChangedFiles ?? config.budget.maxChangedFiles;
  return { ws, root, system: buildSystemPrompt({ ref: input.ref, branch: input.branch, context, request: input.prompt, maxChangedFiles }) };
}

/** A loop's step-limit or budget error with the turn's tokens (its earlier loops included), not the loop's own. */
function withTurnTokens(err: unknown, before: LoopResult['usage']): unknown {
  const add = (u: LoopResult['usage']) => ({ inputTokens: before.inputTokens + u.inputTokens, outputTokens: before.outputTokens + u.outputTokens });
  if (err instanceof BudgetExhaustedError) return new BudgetExhaustedError(err.reached, add(err.usage));
  if (err instanceof StepLimitError) return new StepLimitError(err.steps, add(err.usage));
  return err;
}

/**
 * One model loop over `messages` with the tools over `root`; every tool call and assistant text becomes an event.
 * A turn may run several (the docs checks' repair rounds): the token budgets count the turn's earlier loops too.
 */
async function converse(
  turn: Turn,
  model: ProviderModel,
  root: string,
  system: string,
  messages: ModelMessage[],
  checker: DocsChecker,
  scope: TurnScope,
): Promise<LoopResult> {
  const { config, emit } = turn;
  const signal = turn.work;
  const before = turn.usage ?? { inputTokens: 0, outputTokens: 0 };
  const soFar = (p: LoopProgress): LoopProgress => ({
    steps: p.steps,
    inputTokens: before.inputTokens + p.inputTokens,
    outputTokens: before.outputTokens + p.outputTokens,
  });
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
    checker,
    scope,
  );
  const loop = await runLoop({
    model,
    system,
    messages,
    tools,
    maxSteps: turn.budget.limits.maxSteps ?? config.agent.maxSteps,
    streaming: config.model.streaming,
    maxRetries: config.model.maxRetries,
    retryBaseDelayMs: config.model.retryBaseDelayMs,
    requestTimeoutMs: config.model.requestTimeoutMs,
    signal,
    onAssistantText: (text) => emit('assistant_message', { text: clipText(text, MESSAGE_EVENT_CHARS) }),
    onToolError: async ({ toolCallId, toolName, error }) => {
      if (executed.has(toolCallId)) return;
      // Rejected by the SDK before running (unknown tool, invalid arguments): the model got the error; record it too.
      await emit('tool_call', { toolCallId, tool: toolName, args: { invalid: true } });
      await emit('tool_result', { toolCallId, tool: toolName, ok: false, summary: clipText(errorText(error), 300) });
    },
    onRetry: ({ attempt, delayMs, error }) => turn.log.warn({ attempt, delayMs, error: scrubSecrets(error) }, 'model call failed; retrying'),
    budgetReached: (p) => budgetReached(turn, soFar(p)),
    onProgress: (p) => {
      turn.usage = priced(turn, soFar(p));
    },
  }).catch((err: unknown) => {
    throw withTurnTokens(err, before);
  });
  turn.usage = priced(turn, soFar({ steps: loop.steps, ...loop.usage }));
  signal.throwIfAborted();
  turn.phase('model');
  return loop;
}

/** This turn's number: the worker's, else the history's user messages plus one. */
function turnNumber(input: RunInput): number {
  return input.turn ?? input.history.filter((m) => m.role === 'user').length + 1;
}

/**
 * Commits the worktree's changes as the turn's one commit and pushes the branch; the turn's commit, or null when
 * it changed nothing. A retried turn (its earlier attempt pushed and stopped before its outcome was stored) finds
 * its commit at the branch's tip by the `Inkwell-Job`/`Inkwell-Turn` trailers: changing nothing more, that commit
 * is the turn's; changing more, the commit is replaced (same parent, pushed with a lease on exactly that commit),
 * so a turn never leaves two commits.
 */
async function commitAndPush(turn: Turn, ws: Workspace, message: string, title: string): Promise<string | null> {
  const { input, config, log } = turn;
  const restoredBefore = ws.mirrorConfigRestored;
  // Inkwell's own commit (its author) naming this job and turn; a person's commit is never replaced.
  const head = ws.remoteBranchExists ? await commitOf(ws, ws.startSha) : null;
  const tip = head && head.authorEmail === config.agent.gitAuthorEmail ? commitTurn(head.message) : null;
  const retried = tip !== null && tip.jobId === input.jobId && tip.turn === turnNumber(input);
  const commitSha = await commitAll(ws, {
    message,
    authorName: config.agent.gitAuthorName,
    authorEmail: config.agent.gitAuthorEmail,
    amend: retried,
  });
  if (ws.mirrorConfigRestored && !restoredBefore) {
    log.warn({ repository: input.repository }, 'agent run: the mirror’s git config or hooks changed during the turn; restored Inkwell’s before committing');
  }
  turn.phase('commit');
  if (commitSha) {
    await pushBranch(ws, input.branch, turn.signal, retried ? { replacing: ws.startSha } : {});
    await turn.emit('commit', { sha: commitSha, branch: input.branch, message: title });
    log.info({ commitSha, replaced: retried ? ws.startSha : undefined }, 'agent run: pushed');
  } else if (retried) {
    log.info({ commitSha: ws.startSha }, 'agent run: the turn’s commit was pushed by an earlier attempt');
  }
  turn.phase('push');
  return commitSha ?? (retried ? ws.startSha : null);
}

/**
 * The pushed branch's diff against its base, handed to `onDiff`: after a turn that pushed, and after one that
 * found the branch pushed already (an earlier attempt may have pushed and stopped before storing it). A diff
 * that cannot be read or stored is logged without its text; the turn goes on (the branch is pushed). The diff
 * (null when there is none or it could not be read) lists the files in the pull request's body.
 */
async function reportDiff(turn: Turn, ws: Workspace, commitSha: string | null): Promise<BranchDiff | null> {
  const { input, log } = turn;
  const head = commitSha ?? (ws.remoteBranchExists ? ws.startSha : null);
  if (!head) return null;
  let diff: BranchDiff | null = null;
  try {
    diff = await branchDiff(ws.git, `refs/remotes/origin/${input.ref}`, head);
    await input.onDiff?.(diff);
    log.info({ files: diff.files.length, truncated: diff.truncated }, 'agent run: diff recorded');
  } catch (err) {
    turn.signal.throwIfAborted();
    log.warn({ error: errorText(err, turn.secrets).split('\n')[0] }, 'agent run: could not record the diff');
  }
  turn.phase('diff');
  return diff;
}

/**
 * Opens (or finds) the branch's pull request; null for hosts without them or a branch with no commits of its
 * own. A branch with commits of its own needs its pull request even on a turn that changed nothing (an earlier
 * turn may have pushed and then crashed before opening it).
 */
async function openPullRequest(
  turn: Turn,
  ws: Workspace,
  host: CodeHost,
  pr: { title: string; body: string; draft: boolean },
  commitSha: string | null,
): Promise<PullRequestRef | null> {
  const { input } = turn;
  let ref: PullRequestRef | null = null;
  if (commitSha || (ws.remoteBranchExists && (await commitsAhead(ws, input.ref, input.branch)) > 0)) {
    ref = await host.ensurePullRequest({ repository: input.repository, branch: input.branch, base: input.ref, ...pr, signal: turn.signal });
    if (ref) await turn.emit('pull_request', { url: ref.url, number: ref.number, branch: input.branch, base: input.ref });
  }
  turn.phase('pullRequest');
  return ref;
}

/**
 * A pull request that was open already (an earlier turn's) gets the body for the branch's new state (and a new
 * title when the follow-up gave one), is marked ready for review when its checks pass now (pr-state.ts), and on a
 * follow-up turn gets a comment summarising the turn. The push and the pull request already happened: a host
 * that refuses any of these is logged and the turn goes on.
 */
async function refreshPullRequest(
  turn: Turn,
  host: CodeHost,
  pr: PullRequestRef,
  update: { body: (state: PullRequestState) => string; state: PullRequestState },
  comment: ((state: PullRequestState) => { body: string; marker: string }) | null,
): Promise<void> {
  const { input, log } = turn;
  const { state } = update;
  const target = { repository: input.repository, number: pr.number, signal: turn.signal };
  const attempt = async (what: string, fn: () => Promise<void>): Promise<boolean> => {
    try {
      await fn();
      return true;
    } catch (err) {
      turn.signal.throwIfAborted();
      log.warn({ prNumber: pr.number, error: errorText(err, turn.secrets).split('\n')[0] }, `agent run: could not ${what}; the turn goes on`);
      return false;
    }
  };
  // Ready first: a pull request the host would not mark ready stays a draft whose body still says why (its marker).
  const ready = state.markReady && (await attempt('mark the pull request ready for review', () => host.markPullRequestReady(target)));
  const told = state.markReady && !ready ? { ...state, draft: true, checksDraft: true, markReady: false, note: NOT_MARKED_READY } : state;
  await attempt('update the pull request body', () => host.updatePullRequest({ ...target, body: update.body(told), title: told.title, draft: told.draft }));
  // Once per turn: a retried turn whose earlier attempt commented finds that comment by its marker.
  if (comment) await attempt('comment on the pull request', async () => void (await host.commentOnPullRequest({ ...target, ...comment(told) })));
  turn.phase('pullRequestUpdate');
}

/** The comment's note when the checks pass but the code host would not mark the pull request ready. */
const NOT_MARKED_READY = 'The docs checks pass now, but the pull request could not be marked ready for review: mark it ready yourself.';

/** The job's first request (the first user message of the history); null on the first turn. */
function firstRequest(history: readonly ModelMessage[]): string | null {
  const first = history.find((m) => m.role === 'user');
  if (!first) return null;
  if (typeof first.content === 'string') return first.content;
  return first.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/**
 * Commit, push, diff, then the pull request: opened with the body written from the run (a draft when the job
 * asked for one, the checks fail or the changes are over the changed-files budget), or brought up to date with
 * its state (pr-state.ts).
 */
async function publish(
  turn: Turn,
  ws: Workspace,
  root: string,
  host: CodeHost,
  summary: string,
  outcome: CheckOutcome | null,
  scope: BodySection | null,
  overBudget: boolean,
) {
  const { input } = turn;
  const change = describeChange(summary, input.prompt);
  const message = commitMessage({ change, request: input.prompt, checks: outcome, jobId: input.jobId, turn: turnNumber(input) });
  const commitSha = await commitAndPush(turn, ws, message, change.title);
  const diff = await reportDiff(turn, ws, commitSha);
  const template = host.kind === 'local' ? null : await readPullRequestTemplate(root);
  const stateFor = (existing: PullRequestRef | null) =>
    pullRequestState({
      jobDraft: input.draft,
      overBudget,
      checks: outcome?.status ?? null,
      existing: existing ? { draft: existing.draft ?? false, body: existing.body ?? null } : null,
      newTitle: existing && input.history.length > 0 && change.explicitTitle ? change.title : null,
    });
  const bodyFor = (state: PullRequestState) =>
    pullRequestBody({
      summary: change.body || change.title,
      firstRequest: firstRequest(input.history),
      request: input.prompt,
      files: diff?.files ?? null,
      checks: checksSection(outcome, state.draft),
      scope,
      template,
      jobId: input.jobId,
      checksDraft: state.checksDraft,
    });
  const opening = stateFor(null);
  const pr = await openPullRequest(turn, ws, host, { title: change.title, body: bodyFor(opening), draft: opening.draft }, commitSha);
  if (pr && pr.created === false) {
    const state = stateFor(pr);
    const comment =
      input.history.length > 0
        ? (told: PullRequestState) =>
            followUpComment({ summary: summary.trim(), request: input.prompt, commitSha, jobId: input.jobId, turn: turnNumber(input), note: told.note })
        : null;
    await refreshPullRequest(turn, host, pr, { body: bodyFor, state }, comment);
  }
  return { commitSha, prLink: pr?.url ?? null };
}

/**
 * The end of the model work: unjustified out-of-scope files are put back as they are at the base (never
 * committed), and the `scope` event says what was reverted, what was kept and why, and the budget.
 */
async function finishScope(turn: Turn, scope: TurnScope): Promise<ScopeOutcome> {
  const outcome = await scope.finish();
  const data = scopeEventData(outcome);
  if (data) await turn.emit('scope', data);
  if (outcome.reverted.length > 0) turn.log.info({ reverted: outcome.reverted.map((f) => f.path) }, 'agent run: reverted out-of-scope changes');
  turn.phase('scope');
  return outcome;
}

/** A RunError for every expected failure; anything else (a bug, a full disk) is returned as is. */
function classify(turn: Turn, err: unknown): unknown {
  const { config, secrets } = turn;
  if (err instanceof RunError) return err;
  if (turn.input.signal.aborted) return new RunError('aborted', 'The run was stopped');
  if (turn.deadline.aborted) return new RunError('run_deadline_exceeded', `The run exceeded its deadline of ${Math.round(config.agent.runTimeoutMs / 1000)} s`);
  if (err instanceof BudgetExhaustedError) {
    turn.usage = priced(turn, err.usage);
    return new RunError('budget_exhausted', budgetMessage(err.reached));
  }
  if (turn.timeBudgetSpent()) {
    return new RunError('budget_exhausted', budgetMessage(wallTimeReached(turn.elapsedMs(), turn.budget.limits.maxTurnMs ?? 0)));
  }
  if (err instanceof StepLimitError) {
    turn.usage = priced(turn, err.usage);
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
}

/** The error a failed run ends with (classified, with the tokens used so far), logged once. */
function failure(turn: Turn, err: unknown): unknown {
  const classified = classify(turn, err);
  if (!(classified instanceof RunError)) {
    turn.log.error({ err }, 'agent run crashed');
    return classified;
  }
  if (turn.usage && !classified.usage) classified.usage = turn.usage;
  turn.log.warn({ code: classified.code, error: classified.message }, 'agent run failed');
  return classified;
}

export function createRunExecutor(config: Config, logger: Logger, options: RunExecutorOptions = {}): { execute(input: RunInput): Promise<RunResult> } {
  async function execute(input: RunInput): Promise<RunResult> {
    const turn = startTurn(config, logger, input, options);
    try {
      refuseUnrunnable(turn);
      const host = hostFor(input.repository, config, {
        onWait: ({ host: name, kind, waitMs, reason }) =>
          turn.log.warn({ host: name, kind, waitMs, reason: scrubSecrets(reason) }, 'code host asks to wait; retrying'),
      });
      const model = createLanguageModel(input.model, config);
      const { ws, root, system } = await openWorkspace(turn);
      const userMessage: ModelMessage = { role: 'user', content: input.prompt };
      const scope = new TurnScope({
        ws,
        root,
        ref: input.ref,
        maxChangedFiles: turn.budget.limits.maxChangedFiles ?? config.budget.maxChangedFiles,
        earlier: justificationsFrom(input.history),
        requests: [...requestsFrom(input.history), input.prompt],
      });
      const docsChecker = createDocsChecker(ws, root, input.ref, turn.work);
      // The docs checks and the scope check (src/agent/scope.ts) together: what the check tool and the repair rounds see.
      const docsOn = docsCheckOn(root, turn.work);
      const checker: DocsChecker = async () => {
        const { docs, scope: found } = await scope.check(docsOn);
        return withScope(docs, found);
      };
      const loop = await converse(turn, model, root, system, [...input.history, userMessage], checker, scope);
      // The automatic docs check and its repair rounds (src/agent/checks.ts).
      const checked = await checkAndRepair({
        rounds: config.agent.checkRepairRounds,
        check: checker,
        converse: (messages) => converse(turn, model, root, system, messages, checker, scope),
        emit: (data) => turn.emit('check', data),
        messages: [...input.history, userMessage, ...loop.responseMessages],
        summary: loop.text.trim(),
        usage: loop.usage,
      });
      // The model work is over: the wall-time budget no longer applies (the commit and pull request are not cut off).
      turn.endWork();
      turn.usage = priced(turn, checked.usage);
      turn.phase('checks');
      const scoped = await finishScope(turn, scope);
      // Files the scope check reverted may have been pages the last check read: the docs checks run again.
      const outcome = docsOutcome(checked.outcome, checked.outcome && scoped.reverted.length > 0 ? await scope.serial(docsChecker) : undefined);
      const summary = checked.summary;
      const { commitSha, prLink } = await publish(turn, ws, root, host, summary, outcome, scopeSection(scoped), scoped.overBudget);
      turn.log.info(
        { prLink, commitSha, usage: turn.usage, phasesMs: turn.phasesMs, checks: outcome?.status ?? 'off', reverted: scoped.reverted.length },
        'agent run: finished',
      );
      return { messages: checked.messages, summary, prLink, commitSha, usage: priced(turn, checked.usage) };
    } catch (err) {
      throw failure(turn, err);
    } finally {
      turn.endWork();
    }
  }
  return { execute };
}
