// `inkwell project …` and `inkwell key …`: administration straight on the database.
import type { Command } from 'commander';
import { KEY_KINDS, type KeyKind } from '../lib/ids.ts';
import { NotFoundError, ProjectInputError } from '../projects/service.ts';
import { withContext } from './db.ts';
import { fail, printJson, printTable } from './output.ts';
import { budgetText } from './project-settings.ts';

export function registerProjectCommands(program: Command): void {
  const project = program.command('project').description('Create and list projects');
  project
    .command('create')
    .description('Create a project')
    .requiredOption('--name <name>', 'project name')
    .requiredOption('--repository <url>', 'git repository URL (https://github.com/…, https://gitlab.com/…, or a local path / file:// URL)')
    .option('--ref <branch>', 'default branch the agent starts from', 'main')
    .option('--model <id>', 'default model, <provider>/<model>')
    .option('--json', 'print one JSON object')
    .action(async (opts: { name: string; repository: string; ref: string; model?: string; json?: boolean }) => {
      const p = await withContext((ctx) => ctx.projects.createProject(opts), { create: true }).catch(notFound);
      if (opts.json) printJson(p);
      else process.stdout.write(`Created project ${p.id} (${p.name})\n`);
    });
  project
    .command('list')
    .description('List projects')
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }) => {
      // The webhook's signing secret is shown once by `webhook set`, never in listings.
      const projects = (await withContext((ctx) => ctx.projects.listProjects())).map((p) => ({
        ...p,
        settings: { ...p.settings, ...(p.settings.webhook ? { webhook: { url: p.settings.webhook.url } } : {}) },
      }));
      if (opts.json) printJson({ projects });
      else {
        // The allow-list (settings.allowedRepositories in --json): repositories jobs may use besides the project's own.
        // The budget defaults (settings.budget in --json): unset ones fall back to the server's.
        const rows = projects.map((p) => ({
          ...p,
          allowedRepositories: (p.settings.allowedRepositories ?? []).join(' ') || null,
          budget: budgetText(p.settings.budget),
        }));
        printTable(rows, ['id', 'name', 'repository', 'ref', 'model', 'createdAt', 'budget', 'allowedRepositories']);
      }
    });

  const key = program.command('key').description('Create, list and revoke API keys');
  key
    .command('create')
    .description('Create a key; the full key is printed once')
    .requiredOption('--project <id>', 'project id')
    .option(
      '--kind <kind>',
      'admin (server-side secret), ingest (ink_pub_…, safe in a web page; the server sets event time and visitor) or ingest-secret (ink_ing_…, ingest only, may set timestamp and visitorId: edge middleware, log shippers)',
      'admin',
    )
    .option('--name <name>', 'a name to recognise the key by')
    .option('--json', 'print one JSON object')
    .action(async (opts: { project: string; kind: string; name?: string; json?: boolean }) => {
      if (!(KEY_KINDS as readonly string[]).includes(opts.kind)) fail(`--kind must be one of ${KEY_KINDS.join(', ')} (got ${JSON.stringify(opts.kind)})`);
      const created = await withContext((ctx) =>
        ctx.projects.createKey({ projectId: opts.project, kind: opts.kind as KeyKind, ...(opts.name ? { name: opts.name } : {}) }),
      ).catch(notFound);
      if (opts.json) printJson(created);
      else
        process.stdout.write(
          `Created ${created.kind} key ${created.id} for ${created.projectId}.\nStore it now; it is not shown again:\n\n  ${created.key}\n\n`,
        );
    });
  key
    .command('list')
    .description('List keys of a project (prefix, name, last used)')
    .requiredOption('--project <id>', 'project id')
    .option('--json', 'print one JSON object')
    .action(async (opts: { project: string; json?: boolean }) => {
      const keys = await withContext((ctx) => ctx.projects.listKeys(opts.project)).catch(notFound);
      if (opts.json) printJson({ keys });
      else printTable(keys as unknown as Record<string, unknown>[], ['id', 'kind', 'name', 'prefix', 'createdAt', 'lastUsedAt', 'revokedAt']);
    });
  key
    .command('revoke')
    .description('Revoke a key; it stops working at once')
    .argument('<keyId>', 'key id (key_…)')
    .option('--json', 'print one JSON object')
    .action(async (keyId: string, opts: { json?: boolean }) => {
      const k = await withContext((ctx) => ctx.projects.revokeKey(keyId)).catch(notFound);
      if (opts.json) printJson(k);
      else process.stdout.write(`Revoked key ${k.id}\n`);
    });
}

/** Expected failures (unknown project or key, bad input) print one line and exit 1. */
function notFound(err: unknown): never {
  if (err instanceof NotFoundError) fail(err.message);
  if (err instanceof ProjectInputError) fail(`--${err.field}: ${err.message}`);
  throw err;
}
