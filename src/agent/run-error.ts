// The one error a turn fails with on purpose. Its own module, without dependencies, so the jobs worker
// (which stores the code) and test doubles of the executor import it without loading the agent.

export const RUN_ERROR_CODES = [
  'step_limit_exceeded',
  /** A job, project or server budget was reached (src/agent/budget.ts); the message names it. */
  'budget_exhausted',
  'run_deadline_exceeded',
  /** The model provider answered 429 on every try (or asked for a wait longer than Inkwell waits). */
  'model_rate_limited',
  /** 5xx, timeouts, cut streams or network failures on every try. */
  'model_unavailable',
  'model_error',
  'model_not_configured',
  'git_error',
  /** The data directory's filesystem is full (the workspace could not be fetched, checked out or committed). */
  'storage_full',
  /** The code host's rate limit outlasted INKWELL_HOST_MAX_WAIT_MS; the message says when to retry. */
  'host_rate_limited',
  'host_error',
  'aborted',
] as const;

export type RunErrorCode = (typeof RUN_ERROR_CODES)[number];

/** Every code a failed job's `error.code` can carry: a run's, or the worker's own. */
export const JOB_ERROR_CODES = [...RUN_ERROR_CODES, 'worker_lost', 'internal_error'] as const;

export class RunError extends Error {
  /** Tokens used before the failure, when known (add to the job's cumulative usage). */
  usage: { inputTokens: number; outputTokens: number; costUsd?: number | null } | null = null;
  constructor(
    readonly code: RunErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RunError';
  }
}
