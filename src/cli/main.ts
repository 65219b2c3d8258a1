// `inkwell` command line. A command loads what it needs when it runs (the configuration and its schema, the
// database layer, the HTTP stack): `inkwell --help` loads commander and the command definitions only.
import { Command, CommanderError } from 'commander';
import type { Role } from '../http/server.ts';
import { registerAnalyticsCommands } from './analytics.ts';
import { registerDashboardCommand } from './dashboard.ts';
import { registerJobCommands } from './job.ts';
import { fail } from './output.ts';
import { registerProjectCommands } from './projects.ts';
import { registerWebhookCommands } from './webhook.ts';

const program = new Command();
program.name('inkwell').description('Agent jobs and visitor analytics for documentation sites').version('0.1.0').showHelpAfterError();

program
  .command('serve')
  .description('Run the API and/or the job worker')
  .option('--role <role>', 'all (API and worker), api, or worker', 'all')
  .action(async (opts: { role: string }) => {
    if (!['all', 'api', 'worker'].includes(opts.role)) fail(`--role must be all, api or worker (got ${JSON.stringify(opts.role)})`);
    const [{ loadConfig }, { serveForever }] = await Promise.all([import('../config.ts'), import('../http/server.ts')]);
    await serveForever(loadConfig(), opts.role as Role);
  });

registerProjectCommands(program);
registerJobCommands(program);
registerWebhookCommands(program);
registerAnalyticsCommands(program);
registerDashboardCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) process.exit(err.exitCode);
  const [{ ConfigError }, { scrubSecrets }] = await Promise.all([import('../config.ts'), import('../lib/logger.ts')]);
  if (err instanceof ConfigError) fail(err.message);
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  if (e?.code === 'ECONNREFUSED' || e?.code === 'ENOTFOUND') fail(`cannot reach the database: ${scrubSecrets(e.message)}`);
  if (e?.code === 'EADDRINUSE' || e?.code === 'EACCES' || e?.code === 'EADDRNOTAVAIL') {
    fail(`cannot listen on ${e.address ?? '?'}:${e.port ?? '?'}: ${e.code === 'EADDRINUSE' ? 'the address is already in use' : e.message}`);
  }
  // PostgreSQL reports with a five-character SQLSTATE (bad password, missing database, …).
  if (typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) fail(`database error: ${scrubSecrets(e.message)}`);
  throw err;
}
