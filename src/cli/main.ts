// `inkwell` command line.
import { Command, CommanderError } from 'commander';
import { ConfigError, loadConfig } from '../config.ts';
import { type Role, serveForever } from '../http/server.ts';
import { registerAnalyticsCommands } from './analytics.ts';
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
    await serveForever(loadConfig(), opts.role as Role);
  });

registerProjectCommands(program);
registerJobCommands(program);
registerWebhookCommands(program);
registerAnalyticsCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof ConfigError) fail(err.message);
  if (err instanceof CommanderError) process.exit(err.exitCode);
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ECONNREFUSED' || e?.code === 'ENOTFOUND') fail(`cannot reach the database: ${e.message}`);
  throw err;
}
