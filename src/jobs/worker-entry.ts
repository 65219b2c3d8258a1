// Starts the background job worker for `inkwell serve --role all|worker`: the agent executor under the
// database queue, plus the webhook dispatcher (webhook deliveries are queued by job status changes).
import { createRunExecutor } from '../agent/execute.ts';
import type { Services } from '../context.ts';
import { releaseWorktree } from '../git/workspace.ts';
import type { AppContext } from '../http/context.ts';
import { startWebhookDispatcher } from './webhooks.ts';
import { createWorker } from './worker.ts';

export interface Stoppable {
  stop(): Promise<void>;
}

export async function startWorker(ctx: AppContext, services: Services): Promise<Stoppable> {
  const { config, logger } = ctx;
  const worker = createWorker({
    store: services.jobs.store,
    notifier: services.jobs.notifier,
    executor: createRunExecutor(config, logger),
    releaseWorktree: (jobId) => releaseWorktree(config, jobId),
    logger,
    concurrency: config.worker.concurrency,
    leaseMs: config.worker.leaseMs,
    pollIntervalMs: config.worker.pollIntervalMs,
    maxAttempts: config.worker.maxAttempts,
    runTimeoutMs: config.agent.runTimeoutMs,
    budgetFor: services.jobs.budgets,
    onTurnEnded: services.codeHostEvents.onTurnEnded,
    now: ctx.now,
  });
  worker.start();
  const webhooks = startWebhookDispatcher(ctx);
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        await worker.stop();
        await webhooks.stop();
      })();
      return stopping;
    },
  };
}
