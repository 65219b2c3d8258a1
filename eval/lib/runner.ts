// One task with one model through the worker's own executor (createRunExecutor): a fresh bare repository from
// the fixture, each turn on the same job branch with the conversation so far, then the pushed branch checked out
// and scored. The repository is a local path, so the local code host applies: no network but the model's.
import type { ModelMessage } from 'ai';
import type { Logger } from 'pino';
import { createRunExecutor, RunError, type RunEvent } from '../../src/agent/execute.ts';
import type { Config } from '../../src/config.ts';
import { runDocsChecks } from '../../src/docs-checks/run.ts';
import type { ChangedFile } from '../../src/docs-checks/types.ts';
import { releaseWorktree } from '../../src/git/workspace.ts';
import { navEntries } from './nav.ts';
import { checkoutBranch, createTaskRepo } from './repo.ts';
import { failedCriteria, scoreTask } from './score.ts';
import type { CriterionResult, EvalTask, Outcome } from './types.ts';

export interface TaskResult {
  model: string;
  task: string;
  kind: EvalTask['kind'];
  fixture: string;
  success: boolean;
  /** Names of the criteria that failed. */
  failed: string[];
  criteria: CriterionResult[];
  /** Model steps over all turns (each model reply is one); null when a turn failed before reporting them. */
  steps: number | null;
  inputTokens: number;
  outputTokens: number;
  /** USD, when the price table knows the model. */
  costUsd: number | null;
  wallMs: number;
  /** The last turn's summary (the pull request's title and body). */
  summary: string;
  /** RunError code and message of a failed turn. */
  error: string | null;
  /** Tool calls the agent made, and automatic docs-check rounds that found problems. */
  toolCalls: number;
  failedCheckRounds: number;
}

const assistantCount = (messages: readonly ModelMessage[]) => messages.filter((m) => m.role === 'assistant').length;

export interface RunTaskInput {
  task: EvalTask;
  model: string;
  fixtureDir: string;
  config: Config;
  logger: Logger;
  /** Unique per run of the whole eval (job ids and branches derive from it). */
  runId: string;
  signal: AbortSignal;
}

export async function runTask(input: RunTaskInput): Promise<TaskResult> {
  const { task, model, config } = input;
  const executor = createRunExecutor(config, input.logger);
  const repo = await createTaskRepo(input.fixtureDir, task.files);
  const slug = task.name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
  const jobId = `job_eval_${input.runId}_${slug}`;
  const branch = `inkwell/eval-${slug}`;
  let history: ModelMessage[] = [];
  let summary = '';
  let steps: number | null = 0;
  let inputTokens = 0;
  let outputTokens = 0;
  let cost: number | null = 0;
  let error: string | null = null;
  let toolCalls = 0;
  let failedCheckRounds = 0;
  const onEvent = (e: RunEvent) => {
    if (e.type === 'tool_call') toolCalls++;
    if (e.type === 'check' && e.data.status === 'failed') failedCheckRounds++;
  };
  const addUsage = (u: { inputTokens: number; outputTokens: number; costUsd?: number | null } | null | undefined) => {
    if (!u) return;
    inputTokens += u.inputTokens;
    outputTokens += u.outputTokens;
    cost = cost === null || u.costUsd === undefined || u.costUsd === null ? null : cost + u.costUsd;
  };
  const started = performance.now();
  try {
    for (const turn of task.turns) {
      try {
        const result = await executor.execute({
          jobId,
          repository: repo.dir,
          ref: 'main',
          branch,
          model,
          draft: false,
          history,
          prompt: turn.prompt,
          signal: input.signal,
          onEvent,
        });
        steps = steps === null ? null : steps + assistantCount(result.messages) - assistantCount(history);
        history = result.messages;
        summary = result.summary;
        addUsage(result.usage);
      } catch (err) {
        // A crash (not a RunError: a bug, a full disk) is this task's failure too; the other tasks go on.
        error = err instanceof RunError ? `${err.code}: ${err.message}` : `crashed: ${String((err as Error)?.message ?? err).slice(0, 500)}`;
        steps = null;
        if (err instanceof RunError) addUsage(err.usage);
        break;
      }
    }
    const wallMs = performance.now() - started;
    const outcome = await readOutcome(repo, branch, task, summary, error);
    const criteria = scoreTask(task.expect, outcome);
    const failed = failedCriteria(criteria);
    return {
      model,
      task: task.name,
      kind: task.kind,
      fixture: task.fixture,
      success: failed.length === 0,
      failed,
      criteria,
      steps,
      inputTokens,
      outputTokens,
      costUsd: cost,
      wallMs: Math.round(wallMs),
      summary,
      error,
      toolCalls,
      failedCheckRounds,
    };
  } finally {
    await releaseWorktree(config, jobId).catch(() => {});
    await repo.cleanup();
  }
}

async function readOutcome(
  repo: Awaited<ReturnType<typeof createTaskRepo>>,
  branch: string,
  task: EvalTask,
  reply: string,
  error: string | null,
): Promise<Outcome> {
  const checkout = await checkoutBranch(repo, branch);
  let nav: string[] | null = null;
  try {
    nav = await navEntries(checkout.files);
  } catch {
    nav = null; // A navigation file that no longer parses: the nav criteria fail, and so do the docs checks.
  }
  const changes: ChangedFile[] = [...checkout.changed];
  for (const file of task.expect.checks?.alsoCheck ?? []) {
    if (checkout.files.has(file) && !changes.some((c) => c.path === file)) changes.push({ path: file, status: 'modified', oldPath: null });
  }
  const checks = task.expect.checks ? await runDocsChecks({ root: checkout.dir, changes, signal: AbortSignal.timeout(60_000) }) : null;
  return { files: checkout.files, changed: checkout.changed, nav, checks, reply, error };
}
