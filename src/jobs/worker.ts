// The worker loop: `concurrency` slots, each claiming a turn, running the agent executor under a
// renewed lease, and recording the outcome. The loop never throws: errors are caught, recorded on the
// job when they belong to one, logged with the job id, and followed by a back-off.
import crypto from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import type { RunEvent, RunInput, RunResult } from '../agent/execute.ts';
import { RunError } from '../agent/run-error.ts';
import type { BranchDiff } from '../git/diff.ts';
import { scrubSecrets } from '../lib/logger.ts';
import type { BudgetSource } from './budgets.ts';
import { mergeConversation } from './conversation.ts';
import { EVENT_TYPES, type JobEventType } from './events.ts';
import { IDEMPOTENCY_TTL_MS } from './idempotency.ts';
import type { JobNotifier } from './notify.ts';
import { type Claim, createQueue } from './queue.ts';
import type { JobsStore } from './store.ts';

export type { RunEvent, RunInput, RunResult } from '../agent/execute.ts';

export interface RunExecutor {
  execute(input: RunInput): Promise<RunResult>;
}

// ---- the worker ------------------------------------------------------------------------------------

export interface WorkerOptions {
  store: JobsStore;
  notifier: JobNotifier;
  executor: RunExecutor;
  /** Done with a settled job's worktree (kept as a spare or removed). */
  releaseWorktree: (jobId: string) => Promise<void>;
  logger: Logger;
  concurrency: number;
  leaseMs: number;
  pollIntervalMs: number;
  maxAttempts: number;
  /** Run deadline; the worker aborts a run that overruns it by a grace period (the executor enforces it first). */
  runTimeoutMs: number;
  now?: () => number;
  workerId?: string;
  /** How long stop() waits for runs to notice the abort before handing their leases back itself. */
  stopGraceMs?: number;
  /** The budgets of a claimed turn (src/jobs/budgets.ts); default: the executor's (the server's budgets). */
  budgetFor?: BudgetSource;
  /** Told once a turn's outcome is stored (not for an archived job, a lost lease or a hand-back); a failure is logged. */
  onTurnEnded?: (ended: TurnEnded) => Promise<void>;
}

/** How a turn ended, once stored: what it changed, or why it could not. */
export type TurnEnded = { jobId: string; projectId: string; turnNo: number } & (
  | { ok: true; prLink: string | null; commitSha: string | null; branch: string; summary: string }
  | { ok: false; code: string; message: string }
);

type AbortReason = 'archived' | 'lost' | 'shutdown' | 'deadline';

interface Running {
  claim: Claim;
  abort(reason: AbortReason): void;
  done: Promise<void>;
}

/** A claimed turn while it runs: why it was stopped (null while it was not), and its log. */
interface ClaimedRun {
  readonly claim: Claim;
  readonly jobId: string;
  readonly log: Logger;
  readonly signal: AbortSignal;
  reason: AbortReason | null;
  abort(reason: AbortReason): void;
}

/** How the executor ended: its result, or what it threw. */
type Outcome = { ok: true; result: RunResult } | { ok: false; error: unknown };

export interface Worker {
  readonly id: string;
  start(): void;
  stop(): Promise<void>;
  /** Jobs this worker is running right now. */
  running(): string[];
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

const MAX_BACKOFF_MS = 5000;
const PURGE_EVERY_MS = 10 * 60_000;

export function createWorker(opts: WorkerOptions): Worker {
  const now = opts.now ?? Date.now;
  const id = opts.workerId ?? `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  const log = opts.logger.child({ worker: id });
  const queue = createQueue({
    store: opts.store,
    notifier: opts.notifier,
    workerId: id,
    leaseMs: opts.leaseMs,
    maxAttempts: opts.maxAttempts,
    now,
  });
  // Renew often enough that an archive is noticed within a second or two even across processes.
  const renewEveryMs = Math.max(50, Math.min(Math.floor(opts.leaseMs / 3), 1000));

  const running = new Map<string, Running>();
  const loops: Promise<void>[] = [];
  let started = false;
  let stopping = false;
  let stopPromise: Promise<void> | undefined;
  let lastPurge = 0;

  // Sleeps that a new job (or stop) cuts short.
  const sleepers = new Set<() => void>();
  const wakeAll = () => {
    for (const w of [...sleepers]) w();
  };
  const unsubscribeQueued = opts.notifier.onQueued(() => wakeAll());
  function sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      sleepers.add(done);
    });
  }

  /** Runs one claimed turn and records how it ended; the worktree is released once the job has settled. */
  async function runClaim(claim: Claim): Promise<void> {
    const { run, end } = begin(claim);
    let settled: string | undefined;
    try {
      settled = await settle(run, await execute(run));
    } finally {
      end();
    }
    if (settled !== undefined && settled !== 'active') {
      await opts.releaseWorktree(run.jobId).catch((err: unknown) => run.log.warn({ err }, 'could not release the worktree'));
    }
  }

  /** Registers the run (stop() can abort it) and watches its lease until `end` is called. */
  function begin(claim: Claim): { run: ClaimedRun; end: () => void } {
    const controller = new AbortController();
    const run: ClaimedRun = {
      claim,
      jobId: claim.job.id,
      log: log.child({ jobId: claim.job.id, turn: claim.turn.turn_no, attempt: claim.attempt }),
      signal: controller.signal,
      reason: null,
      abort(r) {
        if (run.reason) return;
        run.reason = r;
        run.log.info({ reason: r }, 'stopping run');
        controller.abort(new Error(`run stopped: ${r}`));
      },
    };
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => {
      resolveDone = r;
    });
    running.set(run.jobId, { claim, abort: run.abort, done });
    const unwatch = watchLease(run);
    const end = () => {
      unwatch();
      running.delete(run.jobId);
      resolveDone();
    };
    return { run, end };
  }

  /**
   * Renews the lease while the run lasts, and aborts the run when the job is archived (noticed here or
   * announced by the notifier), the lease is lost, or the run overruns its deadline by the grace period.
   */
  function watchLease(run: ClaimedRun): () => void {
    const offArchived = opts.notifier.onArchived(run.jobId, () => run.abort('archived'));
    let renewing = false;
    const renewTimer = setInterval(() => {
      if (renewing) return;
      renewing = true;
      queue
        .renew(run.jobId)
        .then((status) => {
          if (status === undefined) run.abort('lost');
          else if (status === 'archived') run.abort('archived');
        })
        .catch((err: unknown) => run.log.warn({ err }, 'lease renewal failed; retrying'))
        .finally(() => {
          renewing = false;
        });
    }, renewEveryMs);
    const watchdog = setTimeout(() => run.abort('deadline'), opts.runTimeoutMs + 30_000);
    return () => {
      clearInterval(renewTimer);
      clearTimeout(watchdog);
      offArchived();
    };
  }

  async function execute(run: ClaimedRun): Promise<Outcome> {
    const { job, turn, history } = run.claim;
    run.log.info('run started');
    try {
      const budget = await opts.budgetFor?.(run.claim);
      const result = await opts.executor.execute({
        ...(budget ? { budget } : {}),
        jobId: run.jobId,
        repository: job.repository,
        ref: job.ref,
        branch: job.branch,
        model: job.model,
        draft: job.draft === 1,
        history,
        prompt: turn.prompt,
        turn: turn.turn_no,
        signal: run.signal,
        onEvent: (e) => recordEvent(run, e),
        onDiff: (diff) => recordDiff(run, diff),
      });
      return { ok: true, result };
    } catch (error) {
      return { ok: false, error };
    }
  }

  /** Stores a run event while the run holds its lease; a refused write means the lease was lost. */
  async function recordEvent(run: ClaimedRun, e: RunEvent): Promise<void> {
    if (run.reason) return;
    const type: JobEventType = (EVENT_TYPES as readonly string[]).includes(e.type) ? (e.type as JobEventType) : 'assistant_message';
    try {
      const ok = await queue.recordEvent(run.jobId, type, e.data ?? {});
      if (!ok && !run.reason) run.abort('lost');
    } catch (err) {
      run.log.warn({ err }, 'could not record a run event');
    }
  }

  /** Stores the branch's diff while the run holds its lease (a refused write means the lease was lost). */
  async function recordDiff(run: ClaimedRun, diff: BranchDiff): Promise<void> {
    if (run.reason) return;
    const ok = await queue.recordDiff(run.jobId, diff);
    if (!ok && !run.reason) run.abort('lost');
  }

  /**
   * Records how the turn ended; returns the job's status afterwards (undefined when this worker no longer
   * owns the turn). Why the run was stopped decides first: an archived job is released whatever the run
   * returned, a lost lease discards the outcome (another worker owns the turn). A result that cannot be
   * recorded is settled as that failure.
   */
  async function settle(run: ClaimedRun, outcome: Outcome): Promise<string | undefined> {
    if (run.reason === 'archived') {
      await queue.releaseArchived(run.claim);
      run.log.info('run stopped: job archived');
      return 'archived';
    }
    if (run.reason === 'lost') {
      run.log.warn('run ended after its lease was lost; outcome discarded (another worker owns the turn)');
      return undefined;
    }
    if (outcome.ok) {
      try {
        return await complete(run, outcome.result);
      } catch (error) {
        return settle(run, { ok: false, error });
      }
    }
    if (run.reason === 'shutdown') {
      const ok = await queue.handBack(run.claim).catch((err: unknown) => {
        run.log.error({ err }, 'could not hand the lease back; it will expire');
        return false;
      });
      run.log.info({ handedBack: ok }, 'run handed back for another worker');
      return undefined;
    }
    return fail(run, outcome.error);
  }

  async function complete(run: ClaimedRun, result: RunResult): Promise<string | undefined> {
    const out = await queue.complete(run.claim, {
      conversation: mergeConversation(run.claim.history, run.claim.turn.prompt, result.messages),
      prLink: result.prLink,
      usage: result.usage,
    });
    if (!out.recorded) run.log.warn('lease lost before the result was recorded; another worker owns the turn');
    else run.log.info({ status: out.status, prLink: result.prLink }, 'run completed');
    const { prLink, commitSha, summary } = result;
    await announce(run, out.status, { ok: true, prLink, commitSha, branch: run.claim.job.branch, summary });
    return out.status;
  }

  /** Hands a stored outcome to onTurnEnded (not when nothing was stored or the job is archived). */
  async function announce(run: ClaimedRun, status: string | undefined, ended: DistributiveOmit<TurnEnded, 'jobId' | 'projectId' | 'turnNo'>) {
    if (!opts.onTurnEnded || status === undefined || status === 'archived') return;
    const { job, turn } = run.claim;
    await opts.onTurnEnded({ ...ended, jobId: job.id, projectId: job.project_id, turnNo: turn.turn_no } as TurnEnded).catch((err: unknown) => {
      run.log.warn({ err }, 'the turn-ended handler failed');
    });
  }

  /** Fails the turn: a RunError with its code and message, an overrun deadline, or anything else as internal_error. */
  async function fail(run: ClaimedRun, err: unknown): Promise<string | undefined> {
    const known = err instanceof RunError ? err : null;
    const deadline = run.reason === 'deadline';
    const code = deadline ? 'run_deadline_exceeded' : (known?.code ?? 'internal_error');
    const message = deadline
      ? 'The run overran its deadline'
      : known
        ? scrubSecrets(known.message || code)
        : 'Unexpected error during the run (see the worker log)';
    if (known) run.log.warn({ code, message }, 'run failed');
    else run.log.error({ err }, 'run crashed');
    const out = await queue.fail(run.claim, code, message, known?.usage ?? null);
    await announce(run, out.status, { ok: false, code, message });
    return out.status;
  }

  async function maybePurge(): Promise<void> {
    const t = now();
    if (t - lastPurge < PURGE_EVERY_MS) return;
    lastPurge = t;
    const n = await queue.purgeIdempotencyKeys(t - IDEMPOTENCY_TTL_MS);
    if (n > 0) log.debug({ purged: n }, 'expired idempotency keys removed');
  }

  async function slot(index: number): Promise<void> {
    let backoff = 0;
    while (!stopping) {
      try {
        if (index === 0) await maybePurge();
        const r = await queue.claimNext();
        if (r.kind === 'claimed') {
          await runClaim(r.claim);
          backoff = 0;
          continue;
        }
        if (r.kind === 'worker_lost') {
          log.warn({ jobId: r.jobId }, 'turn failed: worker_lost (too many lost attempts)');
          continue;
        }
        if (r.kind === 'skipped') continue;
        backoff = 0;
        await sleep(opts.pollIntervalMs);
      } catch (err) {
        backoff = Math.min(MAX_BACKOFF_MS, backoff === 0 ? opts.pollIntervalMs : backoff * 2);
        log.error({ err, backoffMs: backoff }, 'worker loop error; backing off');
        await sleep(backoff);
      }
    }
  }

  return {
    id,
    start() {
      if (started || stopping) return;
      started = true;
      for (let i = 0; i < opts.concurrency; i++) loops.push(slot(i));
      log.info({ concurrency: opts.concurrency }, 'worker started');
    },
    stop() {
      stopPromise ??= (async () => {
        stopping = true;
        unsubscribeQueued();
        wakeAll();
        const runs = [...running.values()];
        for (const r of runs) r.abort('shutdown');
        const grace = new Promise<'timeout'>((res) => setTimeout(() => res('timeout'), opts.stopGraceMs ?? 10_000).unref());
        const all = Promise.all(loops).then(() => 'done' as const);
        if ((await Promise.race([all, grace])) === 'timeout') {
          // A run ignored the abort: hand its lease back directly so another worker resumes it.
          for (const r of running.values()) await queue.handBack(r.claim).catch(() => false);
          log.warn({ jobs: [...running.keys()] }, 'runs did not stop in time; leases handed back');
        }
        log.info('worker stopped');
      })();
      return stopPromise;
    },
    running: () => [...running.keys()],
  };
}
