// `inkwell project set …`: project settings (visitor-id rotation, repository allow-list), straight on the database.
import type { Command } from 'commander';
import { PROJECT_BUDGET_OPTIONS, type ProjectBudget, type ProjectBudgetField } from '../projects/budget.ts';
import { NotFoundError, ProjectInputError, type ProjectSettings } from '../projects/service.ts';
import { withContext } from './db.ts';
import { fail, printJson } from './output.ts';

const ROTATIONS = ['none', 'daily', 'monthly'] as const;

const collect = (value: string, previous: string[] = []) => [...previous, value];

interface SetOptions {
  project: string;
  visitorIdRotation?: string;
  allowRepository?: string[];
  disallowRepository?: string[];
  codeHostWebhook?: boolean;
  handle?: string;
  json?: boolean;
}

/** The budget options given (field → text as typed). */
function budgetChange(opts: SetOptions): Partial<Record<ProjectBudgetField, string>> {
  const given = opts as unknown as Record<string, string | undefined>;
  const change: Partial<Record<ProjectBudgetField, string>> = {};
  for (const { field } of PROJECT_BUDGET_OPTIONS) if (given[field] !== undefined) change[field] = given[field];
  return change;
}

/** The budget in one line: `maxOutputTokens=20000 dailyTokens=1000000`, or none. */
export function budgetText(budget: ProjectBudget | undefined): string | null {
  const parts = Object.entries(budget ?? {}).map(([k, v]) => `${k}=${v}`);
  return parts.length > 0 ? parts.join(' ') : null;
}

export function registerProjectSettingsCommands(program: Command): void {
  const project = program.commands.find((c) => c.name() === 'project') ?? program.command('project').description('Projects');
  const set = project
    .command('set')
    .description('Change project settings')
    .requiredOption('--project <id>', 'project id')
    .option(
      '--visitor-id-rotation <rotation>',
      'none, daily or monthly: how often the keyed hash of IP + user agent that identifies visitors without a visitorId changes (a visitor seen on two days counts once per period)',
    )
    .option(
      '--allow-repository <url>',
      "let the project's jobs use this repository besides the project's own (source.repository); repeatable; stored canonical",
      collect,
    )
    .option('--disallow-repository <url>', 'take a repository off the allow-list; repeatable', collect)
    .option(
      '--code-host-webhook',
      "let comments on the repository's issues and pull requests start and continue jobs: prints the webhook URL and a new secret (the old one stops working)",
    )
    .option('--handle <name>', 'with --code-host-webhook: the @name comments mention (default inkwell)');
  for (const { flag, rule } of PROJECT_BUDGET_OPTIONS) {
    set.option(`--${flag} <n>`, `budget default of the project's jobs: ${rule.description} (${rule.minimum}–${rule.maximum}; none removes it)`);
  }
  set.option('--json', 'print one JSON object').action(async (opts: SetOptions) => {
    const patch: Partial<ProjectSettings> = {};
    if (opts.visitorIdRotation !== undefined) {
      if (!(ROTATIONS as readonly string[]).includes(opts.visitorIdRotation)) {
        fail(`--visitor-id-rotation must be one of ${ROTATIONS.join(', ')} (got ${JSON.stringify(opts.visitorIdRotation)})`);
      }
      patch.visitorIdRotation = opts.visitorIdRotation as (typeof ROTATIONS)[number];
    }
    const allow = opts.allowRepository ?? [];
    const disallow = opts.disallowRepository ?? [];
    // Loaded only here: the hook's module brings the code-host client, which no other command needs at start.
    const [{ enableCodeHostHook, HANDLE_RE }, { ServerSecretError }] = await Promise.all([
      import('../code-host-events/service.ts'),
      import('../code-host-events/secret.ts'),
    ]);
    if (opts.handle !== undefined && !opts.codeHostWebhook) fail('--handle goes with --code-host-webhook');
    if (opts.handle !== undefined && !HANDLE_RE.test(opts.handle))
      fail(`--handle must be a GitHub user name without the @ (got ${JSON.stringify(opts.handle)})`);
    const budget = budgetChange(opts);
    const budgetGiven = Object.keys(budget).length > 0;
    if (Object.keys(patch).length === 0 && allow.length === 0 && disallow.length === 0 && !opts.codeHostWebhook && !budgetGiven)
      fail(
        'nothing to change: pass --visitor-id-rotation none|daily|monthly, --allow-repository URL, --disallow-repository URL, --code-host-webhook or a budget (--max-output-tokens N, --daily-tokens N, …)',
      );
    const { settings, hook } = await withContext(async (ctx) => {
      // The allow-list first: it is the part that can refuse its input, and then nothing is changed.
      if (allow.length > 0 || disallow.length > 0) await ctx.projects.changeAllowedRepositories(opts.project, { allow, disallow });
      if (budgetGiven) await ctx.projects.changeBudget(opts.project, budget);
      const hook = opts.codeHostWebhook ? await enableCodeHostHook(ctx, opts.project, opts.handle) : undefined;
      return { settings: await ctx.projects.updateSettings(opts.project, patch), hook };
    }).catch((err: unknown) => {
      if (err instanceof NotFoundError) fail(err.message);
      if (err instanceof ProjectInputError) fail(`--${err.field}: ${err.message}`);
      if (err instanceof ServerSecretError) fail(err.message);
      throw err;
    });
    // Never print secrets that may sit in settings (webhook secret).
    const shown = {
      visitorIdRotation: settings.visitorIdRotation ?? 'none',
      allowedRepositories: settings.allowedRepositories ?? [],
      ...(budgetText(settings.budget) ? { budget: settings.budget } : {}),
    };
    if (opts.json) printJson({ projectId: opts.project, settings: shown, ...(hook ? { codeHostWebhook: hook } : {}) });
    else {
      const allowed = shown.allowedRepositories.length > 0 ? shown.allowedRepositories.join(', ') : "none besides the project's own repository";
      const budgetLine = budgetText(settings.budget);
      process.stdout.write(
        `Project ${opts.project}: visitor-id rotation ${shown.visitorIdRotation}; allowed repositories: ${allowed}${budgetLine ? `; budget: ${budgetLine}` : ''}\n`,
      );
      if (hook) {
        process.stdout.write(
          hook.host === 'gitlab'
            ? `\nAdd a webhook to the project (GitLab: Settings → Webhooks → Add new webhook). The secret is shown this once:\n\n` +
                `  URL:           ${hook.url}\n  Secret token:  ${hook.secret}\n  Trigger:       ${hook.events.join(', ')}\n\n` +
                `Then mention @${hook.handle} in an issue comment to start a job, or on its merge request to continue it.\n`
            : `\nAdd a webhook to the repository (GitHub: Settings → Webhooks → Add webhook). The secret is shown this once:\n\n` +
                `  Payload URL:   ${hook.url}\n  Content type:  application/json\n  Secret:        ${hook.secret}\n  Events:        ${hook.events.join(', ')}\n\n` +
                `Then mention @${hook.handle} in an issue comment to start a job, or on its pull request to continue it.\n`,
        );
      }
    }
  });
}
