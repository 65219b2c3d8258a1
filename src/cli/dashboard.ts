// `inkwell dashboard`: a one-time sign-in link to the web dashboard, made straight on the database, so that a
// terminal user signs in without pasting a key into a browser.
import type { Command } from 'commander';
import type { Config } from '../config.ts';
import { publicBaseUrl } from '../lib/public-url.ts';
import { NotFoundError } from '../projects/service.ts';
import { withContext } from './db.ts';
import { fail, printJson } from './output.ts';

/** Where the dashboard is reached: --url, else INKWELL_PUBLIC_URL, else the address the service listens on. */
export function dashboardBaseUrl(config: Pick<Config, 'host' | 'port' | 'dashboard'>, url?: string): string {
  if (url !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      fail(`--url must be an http(s) URL (got ${JSON.stringify(url)})`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') fail(`--url must be an http(s) URL (got ${JSON.stringify(url)})`);
    return parsed.href.replace(/\/+$/, '');
  }
  return publicBaseUrl(config);
}

export function registerDashboardCommand(program: Command): void {
  program
    .command('dashboard')
    .description('Print a one-time link that signs a browser in to the dashboard of a project')
    .requiredOption('--project <id>', 'project id')
    .option('--url <url>', 'where the dashboard is reached (default: INKWELL_PUBLIC_URL, else http://HOST:PORT)')
    .option('--json', 'print one JSON object')
    .action(async (opts: { project: string; url?: string; json?: boolean }) => {
      const { link, expiresAt } = await withContext(async (ctx) => {
        const base = dashboardBaseUrl(ctx.config, opts.url);
        const made = await ctx.sessions.createLink(opts.project);
        // The token travels in the fragment: browsers never send it to a server or put it in a Referer.
        return { link: `${base}/signin#token=${made.token}`, expiresAt: new Date(made.expiresAt).toISOString() };
      }).catch((err: unknown) => {
        if (err instanceof NotFoundError) fail(err.message);
        throw err;
      });
      if (opts.json) printJson({ link, expiresAt });
      else process.stdout.write(`Open this link to sign in (it works once, until ${expiresAt}):\n\n  ${link}\n\n`);
    });
}
