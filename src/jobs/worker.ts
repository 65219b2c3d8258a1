// The worker loop: `concurrency` slots, each claiming a turn, running the agent executor under a
// renewed lease, and recording the outcome. The loop never throws: errors are caught, recorded on the
// job when they belong to one, logged with the job id, and followed by a back-off.
import crypto from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import type { RunInput, RunResult } from '../agent/execute.ts';
import { scrubSecrets } from '../lib/logger.ts';
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

/** The executor's RunError code, matched by shape (so a test double needs no import of the agent). */
function runError(err: unknown): { code: string; usage: RunResult['usage'] | null } | null {
  const e = err as { name?: unknown; code?: unknown; usage?: unknown } | null;
  if (e?.name !== 'RunError' || typeof e.code !== 'string') return null;
  const u = e.usage as RunResult['usage'] | null | undefined;
  return { code: e.code, usage: u && typeof u.inputTokens === 'number' && typeof u.outputTokens === 'number' ? u : null };
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
}

type AbortReason = 'archived' | 'lost' | 'shutdown' | 'deadline';

interface Running {
  claim: Claim;
  abort(reason: AbortReason): void;
  done: Promise<void>;
}

export interface Worker {
  readonly id: string;
  start(): void;
  stop(): Promise<void>;
  /** Jobs this worker is running right now. */
  running(): string[];
}

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

  async function runClaim(claim: Claim): Promise<void> {
    const jobId = claim.job.id;
    const jlog = log.child({ jobId, turn: claim.turn.turn_no, attempt: claim.attempt });
    const controller = new AbortController();
    let reason: AbortReason | null = null;
    const abort = (r: AbortReason) => {
      if (reason) return;
      reason = r;
      jlog.info({ reason: r }, 'stopping run');
      controller.abort(new Error(`run stopped: ${r}`));
    };
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => {
      resolveDone = r;
    });
    running.set(jobId, { claim, abort, done });
    const offArchived = opts.notifier.onArchived(jobId, () => abort('archived'));
    let renewing = false;
    const renewTimer = setInterval(() => {
      if (renewing) return;
      renewing = true;
      queue
        .renew(jobId)
        .then((status) => {
          if (status === undefined) abort('lost');
          else if (status === 'archived') abort('archived');
        })
        .catch((err: unknown) => jlog.warn({ err }, 'lease renewal failed; retrying'))
        .finally(() => {
          renewing = false;
        });
    }, renewEveryMs);
    const watchdog = setTimeout(() => abort('deadline'), opts.runTimeoutMs + 30_000);

    let settledStatus: string | undefined;
    try {
      jlog.info('run started');
      const result = await opts.executor.execute({
        jobId,
        repository: claim.job.repository,
        ref: claim.job.ref,
        branch: claim.job.branch,
        model: claim.job.model,
        draft: claim.job.draft === 1,
        history: claim.history,
        prompt: claim.turn.prompt,
        signal: controller.signal,
        onEvent: async (e) => {
          if (reason) return;
          const type: JobEventType = (EVENT_TYPES as readonly string[]).includes(e.type) ? (e.type as JobEventType) : 'assistant_message';
          try {
            const ok = await queue.recordEvent(jobId, type, e.data ?? {});
            if (!ok && !reason) abort('lost');
          } catch (err) {
            jlog.warn({ err }, 'could not record a run event');
          }
        },
      });
      if (reason === 'lost') {
        jlog.warn('run finished after its lease was lost; result discarded (another worker owns the turn)');
      } else if (reason === 'archived') {
        await queue.releaseArchived(claim);
        settledStatus = 'archived';
      } else {
        const out = await queue.complete(claim, {
          conversation: mergeConversation(claim.history, claim.turn.prompt, result.messages),
          prLink: result.prLink,
          usage: result.usage,
        });
        settledStatus = out.status;
        if (!out.recorded) jlog.warn('lease lost before the result was recorded; another worker owns the turn');
        else jlog.info({ status: out.status, prLink: result.prLink }, 'run completed');
      }
    } catch (err) {
      const re = runError(err);
      const code = re?.code ?? null;
      if (reason === 'shutdown') {
        const ok = await queue.handBack(claim).catch((e: unknown) => {
          jlog.error({ err: e }, 'could not hand the lease back; it will expire');
          return false;
        });
        jlog.info({ handedBack: ok }, 'run handed back for another worker');
      } else if (reason === 'lost') {
        jlog.warn('run stopped: lease lost to another worker');
      } else if (reason === 'archived') {
        await queue.releaseArchived(claim);
        settledStatus = 'archived';
        jlog.info('run stopped: job archived');
      } else {
        const failCode = reason === 'deadline' ? 'run_deadline_exceeded' : (code ?? 'internal_error');
        const message =
          reason === 'deadline'
            ? 'The run overran its deadline'
            : code
              ? scrubSecrets((err as Error).message || failCode)
              : 'Unexpected error during the run (see the worker log)';
        if (!code) jlog.error({ err }, 'run crashed');
        else jlog.warn({ code, message }, 'run failed');
        const out = await queue.fail(claim, failCode, message, re?.usage ?? null);
        settledStatus = out.status;
      }
    } finally {
      clearInterval(renewTimer);
      clearTimeout(watchdog);
      offArchived();
      running.delete(jobId);
      resolveDone();
    }
    if (settledStatus && settledStatus !== 'active') {
      await opts.releaseWorktree(jobId).catch((err: unknown) => jlog.warn({ err }, 'could not release the worktree'));
    }
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
