// The connection of the commands that talk to the HTTP API (`inkwell job …`, `inkwell analytics visitors …`):
// base URL and admin key from the options or the environment, checked before any request, and one way to
// report what went wrong with a request.
import type { Command } from 'commander';
import { ApiError } from '../client/http.ts';
import { fail } from './output.ts';

export const DEFAULT_URL = 'http://127.0.0.1:3000';

export interface ConnectionOptions {
  url?: string;
  key?: string;
}

/** Adds --url and --key. */
export function withConnectionOptions(cmd: Command): Command {
  return cmd.option('--url <url>', `API base URL (env INKWELL_URL, default ${DEFAULT_URL})`).option('--key <key>', 'admin key (env INKWELL_API_KEY)');
}

/** The base URL and key of the options (else INKWELL_URL, INKWELL_API_KEY); ends the command when either is unusable. */
export function connection(o: ConnectionOptions): { url: string; key: string } {
  const url = o.url ?? process.env.INKWELL_URL ?? DEFAULT_URL;
  const key = o.key ?? process.env.INKWELL_API_KEY;
  if (!key) fail('an admin key is needed: pass --key or set INKWELL_API_KEY');
  try {
    new URL(url);
  } catch {
    fail(`--url / INKWELL_URL must be an absolute http(s) URL (got ${JSON.stringify(url)})`);
  }
  return { url, key };
}

/** Turns client errors into one clear line (and details) on stderr, exit 1; anything else is rethrown. */
export function explainApiError(err: unknown, url: string): never {
  if (err instanceof ApiError) {
    const lines = [`${err.message} (HTTP ${err.status}, ${err.code})`];
    for (const d of err.details) if (d.message !== err.message) lines.push(`  - ${d.path ? `${d.path}: ` : ''}${d.message}`);
    if (err.retryAfterSeconds !== null) lines.push(`  retry after ${err.retryAfterSeconds}s`);
    fail(lines.join('\n'));
  }
  // fetch reports network failures as TypeError('fetch failed') with the reason as `cause`.
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TypeError' && e.cause) {
    fail(
      `cannot reach the Inkwell API at ${url} (${e.cause.code ?? e.cause.message ?? 'network error'}); is \`inkwell serve\` running? Set --url or INKWELL_URL.`,
    );
  }
  throw err;
}
