// Test app with the job worker: a real HTTP server plus a worker over the same database, with either
// an injected executor (queue/worker tests) or the real agent executor (end-to-end tests).

import { createTurnReplies } from '../../src/code-host-events/replies.ts';
import { createDeliveriesStore } from '../../src/code-host-events/store.ts';
import { threadHosts } from '../../src/code-host-events/thread-hosts.ts';
import type { Config } from '../../src/config.ts';
import { createBudgetSource } from '../../src/jobs/budgets.ts';
import { notifierFor } from '../../src/jobs/notify.ts';
import { createJobsStore } from '../../src/jobs/store.ts';
import { createWorker, type RunExecutor, type Worker, type WorkerOptions } from '../../src/jobs/worker.ts';
import { startTestApp, type TestApp, type TestAppOptions } from './app.ts';
import type { DialectName } from './db.ts';

export interface JobsTestApp extends TestApp {
  /** Starts a worker in this process over the app's database (several may run at once). */
  startWorker(executor: RunExecutor, overrides?: Partial<WorkerOptions>): Worker;
  workers: Worker[];
}

/** Env that makes the default model usable (an OpenAI-compatible server that is never called unless a test starts one). */
export const JOBS_TEST_ENV: Record<string, string> = {
  INKWELL_MODEL: 'openai-compatible/test-model',
  OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1',
};

export async function startJobsApp(
  dialect: DialectName,
  overrides: Partial<Config> = {},
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<JobsTestApp> {
  const t = await startTestApp(dialect, overrides, { ...JOBS_TEST_ENV, ...env }, options);
  const workers: Worker[] = [];
  const close = t.close;
  return Object.assign(t, {
    workers,
    startWorker(executor: RunExecutor, o: Partial<WorkerOptions> = {}) {
      const w = t.ctx.config.worker;
      const store = createJobsStore(t.ctx.db);
      const worker = createWorker({
        store,
        notifier: notifierFor(t.ctx.db),
        executor,
        releaseWorktree: async () => {},
        logger: t.ctx.logger,
        concurrency: w.concurrency,
        leaseMs: w.leaseMs,
        pollIntervalMs: w.pollIntervalMs,
        maxAttempts: w.maxAttempts,
        runTimeoutMs: t.ctx.config.agent.runTimeoutMs,
        budgetFor: createBudgetSource({
          store,
          projects: t.ctx.projects,
          defaults: t.ctx.config.budget,
          now: t.ctx.now,
        }),
        // Replies in the thread of a job started from a code-host comment, as `inkwell serve` does.
        onTurnEnded: createTurnReplies({ ...t.ctx, store: createDeliveriesStore(t.ctx.db.kysely), hosts: threadHosts(t.ctx.config) }),
        ...o,
      });
      worker.start();
      workers.push(worker);
      return worker;
    },
    async close() {
      await Promise.all(workers.map((w) => w.stop()));
      await close();
    },
  });
}

/**
 * How long a wait polls before it gives up. Waits end as soon as their condition holds; this is only a safety
 * net sized for a starved machine (CI shares two busy cores), never a statement about how fast anything must be.
 */
export const WAIT_LIMIT_MS = 60_000;

/** Polls `fn` until it returns a truthy value (or throws after `timeoutMs`). */
export async function waitFor<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = WAIT_LIMIT_MS, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`waitFor timed out after ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Polls GET job until its status is one of `statuses`. */
export async function waitForStatus(t: TestApp, key: string, projectId: string, jobId: string, statuses: string[], timeoutMs = WAIT_LIMIT_MS): Promise<any> {
  return waitFor(async () => {
    const r = await t.request('GET', `/v2/agent/${projectId}/job/${jobId}`, { key });
    return statuses.includes(r.body?.status) ? r.body : null;
  }, timeoutMs);
}
