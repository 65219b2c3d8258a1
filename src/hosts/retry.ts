// Waiting as a code host asks. One pull-request step (look up, else create) is retried as a whole, so a create
// whose answer was lost is found by the next lookup instead of being sent twice:
//   - rate limits (GitHub's primary and secondary limits, GitLab's 429): wait as long as the host says, all
//     waits of the step together at most `maxWaitMs` (INKWELL_HOST_MAX_WAIT_MS); a longer one fails at once
//     with HostRateLimitedError naming when to retry;
//   - transient failures (5xx, network, timeouts): a few retries after `retryDelaysMs`.
// Sleep and clock are injectable: tests never wait for real.
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
  /** Delays before the retries of a transient failure (5xx, network). */
  retryDelaysMs?: number[];
  onWait?: (wait: HostWait) => void;
}

/** Transient failures (5xx, network) are retried after these delays. */
export const HOST_RETRY_DELAYS_MS = [500, 2000];

/** GitHub: wait at least a minute after a secondary rate limit without retry-after (doubling when it persists). */
export const SECONDARY_LIMIT_WAIT_MS = 60_000;

/** Rate-limit waits per step, whatever the budget (a host answering 429 with a zero wait forever must not spin). */
const MAX_RATE_LIMIT_WAITS = 10;

function minutes(ms: number): string {
  if (ms < 60_000) return `${Math.ceil(ms / 1000)} s`;
  return `${Math.round(ms / 6000) / 10} min`;
}

export interface HostRetryOptions extends HostDeps {
  /** Host name for messages ("GitHub", "GitLab"). */
  host: string;
  /** What the step is, for messages ("pull request for acme/docs branch x"). */
  what: string;
  maxWaitMs: number;
  signal?: AbortSignal;
  /** `limitedBefore`: rate-limit waits already made in this step (for growing waits). */
  classify(err: unknown, limitedBefore: number, now: number): HostFailure;
}

export async function withHostRetry<T>(fn: () => Promise<T>, opts: HostRetryOptions): Promise<T> {
  const wait = opts.sleep ?? sleep;
  const now = opts.now ?? Date.now;
  const delays = opts.retryDelaysMs ?? HOST_RETRY_DELAYS_MS;
  let waited = 0;
  let transient = 0;
  let limited = 0;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      // One reading of the clock for the wait and the time to retry (two readings differed by a millisecond).
      const at = now();
      const failure = opts.classify(err, limited, at);
      if (failure.kind === 'fatal') throw err;
      if (failure.kind === 'transient') {
        const delay = delays[transient++];
        if (delay === undefined) throw err;
        const ms = Math.max(delay, Math.min(failure.waitMs ?? 0, opts.maxWaitMs - waited));
        waited += ms;
        opts.onWait?.({ host: opts.host, kind: 'transient', waitMs: ms, reason: (err as Error)?.message ?? String(err) });
        await wait(ms, opts.signal);
        continue;
      }
      const retryAt = new Date(at + failure.waitMs);
      if (waited + failure.waitMs > opts.maxWaitMs || limited >= MAX_RATE_LIMIT_WAITS) {
        const spent = waited > 0 ? ` after waiting ${minutes(waited)}` : '';
        throw new HostRateLimitedError(
          `${opts.host} rate limit for the ${opts.what}: ${failure.reason}; the wait of ${minutes(failure.waitMs)} exceeds what Inkwell waits ` +
            `(INKWELL_HOST_MAX_WAIT_MS = ${minutes(opts.maxWaitMs)})${spent}; retry after ${retryAt.toISOString()}`,
          retryAt,
        );
      }
      limited++;
      waited += failure.waitMs;
      opts.onWait?.({ host: opts.host, kind: 'rate_limited', waitMs: failure.waitMs, reason: failure.reason });
      await wait(failure.waitMs, opts.signal);
    }
  }
}
