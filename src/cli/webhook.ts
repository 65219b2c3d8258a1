// `inkwell webhook …`: configure a project's webhook and read its delivery log.
import type { Command } from 'commander';
import type { WebhookDeliveryStatus } from '../jobs/webhook-tables.ts';
import { NotFoundError } from '../projects/service.ts';
import { withContext } from './db.ts';
import { fail, printJson, printTable } from './output.ts';

const STATUSES: WebhookDeliveryStatus[] = ['pending', 'delivered', 'failed', 'cancelled'];

export function registerWebhookCommands(program: Command): void {
  const webhook = program.command('webhook').description('Signed job event notifications (Standard Webhooks)');
  webhook
    .command('set')
    .description('Set the webhook URL of a project; prints a new signing secret (shown once)')
    .requiredOption('--project <id>', 'project id')
    .requiredOption('--url <url>', 'http(s) URL that receives job.completed, job.failed and job.archived')
    .option('--json', 'print one JSON object')
    .action(async (opts: { project: string; url: string; json?: boolean }) => {
      const set = await withContext(async (ctx) => (await webhooks()).createWebhookService(ctx).set(opts.project, opts.url)).catch(userError);
      if (opts.json) printJson(set);
      else
        process.stdout.write(
          `Webhook for ${set.projectId} set to ${set.url}.\n` +
            `Signing secret (Standard Webhooks; store it now, it is not shown again):\n\n  ${set.secret}\n\n`,
        );
    });
  webhook
    .command('get')
    .description('Show the webhook URL of a project')
    .requiredOption('--project <id>', 'project id')
    .option('--json', 'print one JSON object')
    .action(async (opts: { project: string; json?: boolean }) => {
      const hook = await withContext(async (ctx) => (await webhooks()).createWebhookService(ctx).get(opts.project)).catch(userError);
      if (opts.json) printJson({ projectId: opts.project, webhook: hook ? { url: hook.url } : null });
      else process.stdout.write(hook ? `${hook.url}\n` : `Project ${opts.project} has no webhook.\n`);
    });
  webhook
    .command('remove')
    .description('Remove the webhook of a project; queued deliveries are cancelled')
    .requiredOption('--project <id>', 'project id')
    .option('--json', 'print one JSON object')
    .action(async (opts: { project: string; json?: boolean }) => {
      const removed = await withContext(async (ctx) => (await webhooks()).createWebhookService(ctx).remove(opts.project)).catch(userError);
      if (opts.json) printJson({ projectId: opts.project, removed });
      else process.stdout.write(removed ? `Removed the webhook of ${opts.project}.\n` : `Project ${opts.project} had no webhook.\n`);
    });
  webhook
    .command('deliveries')
    .description('The delivery log of a project, newest first')
    .requiredOption('--project <id>', 'project id')
    .option('--status <status>', `only deliveries in this state (${STATUSES.join(', ')})`)
    .option('--limit <n>', 'how many (1-500)', '50')
    .option('--json', 'print one JSON object')
    .action(async (opts: { project: string; status?: string; limit: string; json?: boolean }) => {
      if (!/^\d+$/.test(opts.limit) || Number(opts.limit) < 1 || Number(opts.limit) > 500)
        fail(`--limit must be a whole number from 1 to 500 (got ${JSON.stringify(opts.limit)})`);
      if (opts.status !== undefined && !STATUSES.includes(opts.status as WebhookDeliveryStatus))
        fail(`--status must be one of ${STATUSES.join(', ')} (got ${JSON.stringify(opts.status)})`);
      const deliveries = await withContext(async (ctx) =>
        (await webhooks()).createWebhookService(ctx).deliveries(opts.project, {
          limit: Number(opts.limit),
          ...(opts.status ? { status: opts.status as WebhookDeliveryStatus } : {}),
        }),
      ).catch(userError);
      if (opts.json) printJson({ deliveries });
      else
        printTable(deliveries as unknown as Record<string, unknown>[], [
          'id',
          'eventType',
          'status',
          'attempts',
          'lastStatusCode',
          'nextAttemptAt',
          'createdAt',
          'lastError',
        ]);
    });
}

/** The webhook service, loaded when a command needs it (not at CLI start). */
const webhooks = () => import('../jobs/webhooks.ts');

function userError(err: unknown): never {
  if (err instanceof NotFoundError || (err instanceof Error && err.name === 'WebhookUrlError')) fail(err.message);
  throw err;
}
