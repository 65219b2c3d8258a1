// Waiting as a code host asks, within one budget per pull-request step (look up, else create):
//   - rate limits: wait as long as the host says, all waits of the step together at most `maxWaitMs`
//     (INKWELL_HOST_MAX_WAIT_MS); a longer one fails at once with HostRateLimitedError naming when to retry;
//   - transient failures (5xx, network, timeouts): a few retries (GitLab here; GitHub through Octokit's retry plugin).
// Which answers are rate limits is each host's business: Octokit's throttling plugin for GitHub, gitlabFailure
// for GitLab. Sleep and clock are injectable: tests never wait for real.
import { sleep } from '../lib/wait.ts';

export class HostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HostError';
  }
}

/** The host's rate limit outlasted the waiting budget: `retryAt` is when the host said it would accept requests again. */
export class HostRateLimitedError extends HostError {
  constructor(
    message: string,
    readonly retryAt: Date,
  ) {
    super(message);
    this.name = 'HostRateLimitedError';
  }
}

export type HostFailure =
  /** Wait `waitMs`, then try again; `reason` says which limit, for logs and the final error. */
  { kind: 'rate_limited'; waitMs: number; reason: string } | { kind: 'transient'; waitMs?: number } | { kind: 'fatal' };

export interface HostWait {
  host: string;
  kind: 'rate_limited' | 'transient';
  waitMs: number;
  reason: string;
}

/** What a host needs from its environment for waiting (all optional; tests inject sleep and clock). */
export interface HostDeps {
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  now?: () => number;
  onWait?: (wait: HostWait) => void;
}

/** Rate-limit waits per step, whatever the budget (a host answering 429 with a zero wait forever must not spin). */
const MAX_RATE_LIMIT_WAITS = 10;

function minutes(ms: number): string {
  if (ms < 60_000) return `${Math.ceil(ms / 1000)} s`;
  return `${Math.round(ms / 6000) / 10} min`;
}

interface WaitBudgetOptions extends HostDeps {
  /** Host name for messages ("GitHub", "GitLab"). */
  host: string;
  /** What the step is, for messages ("pull request for acme/docs branch x"). */
  what: string;
  maxWaitMs: number;
  signal?: AbortSignal;
}

/** The waits of one pull-request step. */
export class WaitBudget {
  private waited = 0;
  private limited = 0;
  private refused: { waitMs: number; reason: string; at: number } | null = null;
  readonly now: () => number;

  constructor(private readonly opts: WaitBudgetOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** Rate-limit waits made so far (for waits that grow while a limit persists). */
  get rateLimitWaits(): number {
    return this.limited;
  }

  /**
   * Waits `waitMs` as the host asked and returns true; or, when that wait would pass the budget, remembers the
   * refusal (see `refusal`) and returns false without waiting. `at` is the clock reading the wait was computed from.
   */
  async rateLimited(waitMs: number, reason: string, at = this.now()): Promise<boolean> {
    if (this.waited + waitMs > this.opts.maxWaitMs || this.limited >= MAX_RATE_LIMIT_WAITS) {
      this.refused = { waitMs, reason, at };
      return false;
    }
    this.limited++;
    await this.wait('rate_limited', waitMs, reason);
    return true;
  }

  /**
   * The error a refused wait ends the step with (null when none was refused). `retryAt` defaults to the refusal's
   * clock reading plus the wait; a host that named the exact time passes it.
   */
  refusal(retryAt?: Date): HostRateLimitedError | null {
    if (!this.refused) return null;
    const { host, what, maxWaitMs } = this.opts;
    const { waitMs, reason, at } = this.refused;
    const when = retryAt ?? new Date(at + waitMs);
    const spent = this.waited > 0 ? ` after waiting ${minutes(this.waited)}` : '';
    return new HostRateLimitedError(
      `${host} rate limit for the ${what}: ${reason}; the wait of ${minutes(waitMs)} exceeds what Inkwell waits ` +
        `(INKWELL_HOST_MAX_WAIT_MS = ${minutes(maxWaitMs)})${spent}; retry after ${when.toISOString()}`,
      when,
    );
  }

  /** Waits before retrying a transient failure; counts against the budget too. */
  async transient(waitMs: number, reason: string): Promise<void> {
    await this.wait('transient', waitMs, reason);
  }

  /** What is left of the budget, in ms. */
  get leftMs(): number {
    return Math.max(0, this.opts.maxWaitMs - this.waited);
  }

  private async wait(kind: HostWait['kind'], waitMs: number, reason: string): Promise<void> {
    this.waited += waitMs;
    this.opts.onWait?.({ host: this.opts.host, kind, waitMs, reason });
    await (this.opts.sleep ?? sleep)(waitMs, this.opts.signal);
  }
}

/** Transient failures (5xx, network) are retried after these delays. */
const RETRY_DELAYS_MS = [500, 2000];

/**
 * Runs a step, retrying it as a whole (so a create whose answer was lost is found by the next lookup instead of
 * being sent twice). `classify` says what a failure is; `rateLimitWaits` is how many rate-limit waits came before.
 */
export async function withHostRetry<T>(
  fn: () => Promise<T>,
  budget: WaitBudget,
  signal: AbortSignal | undefined,
  classify: (err: unknown, rateLimitWaits: number, now: number) => HostFailure,
): Promise<T> {
  let transient = 0;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (signal?.aborted) throw err;
      // One reading of the clock for the wait and the time to retry (two readings differed by a millisecond).
      const at = budget.now();
      const failure = classify(err, budget.rateLimitWaits, at);
      if (failure.kind === 'fatal') throw err;
      if (failure.kind === 'transient') {
        const delay = RETRY_DELAYS_MS[transient++];
        if (delay === undefined) throw err;
        await budget.transient(Math.max(delay, Math.min(failure.waitMs ?? 0, budget.leftMs)), (err as Error)?.message ?? String(err));
        continue;
      }
      if (!(await budget.rateLimited(failure.waitMs, failure.reason, at))) throw budget.refusal();
    }
  }
}
