// `inkwell` command line. A command loads what it needs when it runs (the configuration and its schema, the
// database layer, the HTTP stack): `inkwell --help` loads commander and the command definitions only.
import { Command, CommanderError } from 'commander';
import type { Role } from '../http/server.ts';
import { registerAnalyticsCommands } from './analytics.ts';
import { registerDashboardCommand } from './dashboard.ts';
import { registerJobCommands } from './job.ts';
import { reexecWithNodeFlags, TWO_MALLOC_ARENAS } from './node-flags.ts';
import { fail } from './output.ts';
import { registerProjectCommands } from './projects.ts';
import { registerWebhookCommands } from './webhook.ts';

/**
 * V8 settings of `inkwell serve` (node-flags.ts; INKWELL_SERVE_NODE_FLAGS=0 keeps Node's defaults), as for an import
 * (cli/analytics.ts): semi-spaces of 32 MiB and old-space growth of 50% over what each full GC leaves. With Node's
 * defaults on a machine with memory to spare, the serving thread's young generation grows to 128 MiB under ingest
 * and its old generation to ~3× the live data: measured per thread (process.memoryUsage) during bench:scale
 * --events 10M --days 365 on SQLite, its heap was ~300 MB around ~100 MB live (a heap snapshot: 96 MB). Tighter
 * settings (16 MiB, 30%: the first choice) kept less but cost the serving thread collections: on PostgreSQL, where
 * that thread does all of an ingest's work, 1.05–1.4× the CPU per event of these (Node's defaults: less still, with
 * ~1.4× their peak RSS; bench:ingest --node-variants; bench/README.md, Node flags of inkwell serve). Invariant: only
 * when garbage is collected changes, never what is kept.
 */
const SERVE_NODE_FLAGS = ['--max-semi-space-size=32', '--heap-growing-percent=50'];

/**
 * The environment `inkwell serve` is re-executed with (unless set already): two malloc arenas (node-flags.ts).
 * bench/README.md (Decisions, "Two malloc arenas") has the peak RSS with and without.
 */
const SERVE_ENV = TWO_MALLOC_ARENAS;

const program = new Command();
program.name('inkwell').description('Agent jobs and visitor analytics for documentation sites').version('0.1.0').showHelpAfterError();

program
  .command('serve')
  .description('Run the API and/or the job worker')
  .option('--role <role>', 'all (API and worker), api, or worker', 'all')
  .action(async (opts: { role: string }) => {
    if (!['all', 'api', 'worker'].includes(opts.role)) fail(`--role must be all, api or worker (got ${JSON.stringify(opts.role)})`);
    reexecWithNodeFlags(SERVE_NODE_FLAGS, 'INKWELL_SERVE_NODE_FLAGS', SERVE_ENV);
    // The flags above size this (the serving) thread; the service's own threads take their own limits.
    (await import('../lib/thread-heaps.ts')).letThreadsSizeTheirHeaps();
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
  const [{ ConfigError }, { scrubSecrets }, { ClickHouseStartError }] = await Promise.all([
    import('../config.ts'),
    import('../lib/logger.ts'),
    import('../analytics/clickhouse/server-check.ts'),
  ]);
  if (err instanceof ConfigError) fail(err.message);
  // An old, unreachable or failing ClickHouse server: its message names the server (never its credentials).
  if (err instanceof ClickHouseStartError) fail(scrubSecrets(err.message));
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  if (e?.code === 'ECONNREFUSED' || e?.code === 'ENOTFOUND') fail(`cannot reach the database: ${scrubSecrets(e.message)}`);
  if (e?.code === 'EADDRINUSE' || e?.code === 'EACCES' || e?.code === 'EADDRNOTAVAIL') {
    fail(`cannot listen on ${e.address ?? '?'}:${e.port ?? '?'}: ${e.code === 'EADDRINUSE' ? 'the address is already in use' : e.message}`);
  }
  // PostgreSQL reports with a five-character SQLSTATE (bad password, missing database, …).
  if (typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) fail(`database error: ${scrubSecrets(e.message)}`);
  throw err;
}
