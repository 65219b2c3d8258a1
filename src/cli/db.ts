// Opens the configured database for a CLI command and closes it afterwards. The configuration, database
// layer, services and logger are loaded here, when a command runs, not when the CLI starts: `inkwell --help`
// and the commands that only talk HTTP never load them.
import fs from 'node:fs';
import path from 'node:path';
import type { AppContext } from '../http/context.ts';
import { fail } from './output.ts';

/** How a database is named to the user: a relative path as ./path, anything else as it is. */
export function databaseLabel(description: string, isFile: boolean): string {
  return isFile && !path.isAbsolute(description) && !description.startsWith('.') ? `./${description}` : description;
}

/**
 * Runs `fn` on the configured database and says on stderr which one it opened (stdout stays the command's
 * output). The embedded database is created only by commands that set `create` (`project create`; `serve`
 * opens its database on its own): any other command run from the wrong directory, or with INKWELL_DATA_DIR
 * unset, says where it looked instead of silently creating an empty database there.
 */
export async function withContext<T>(fn: (ctx: AppContext) => Promise<T>, opts: { create?: boolean } = {}): Promise<T> {
  const { loadConfig } = await import('../config.ts');
  const config = loadConfig();
  const file = path.join(config.dataDir, 'inkwell.db');
  if (!config.databaseUrl && !opts.create && !fs.existsSync(file)) {
    fail(
      `no database at ${databaseLabel(file, true)}: set INKWELL_DATA_DIR to the data directory of your Inkwell service (or DATABASE_URL for PostgreSQL), or create a project first with \`inkwell project create\``,
    );
  }
  const [{ createContext }, { openFromConfig }, { createLazyLogger, createLogger }] = await Promise.all([
    import('../context.ts'),
    import('../db/index.ts'),
    import('../lib/logger.ts'),
  ]);
  // Logs go to stderr: stdout carries the command's output (one JSON object with --json).
  const logLevel = process.env.LOG_LEVEL ? config.logLevel : 'warn';
  const logger = createLazyLogger(() => createLogger({ logLevel, logPretty: false }, 'stderr'));
  const db = await openFromConfig(config);
  process.stderr.write(`inkwell: using database ${databaseLabel(db.description, !config.databaseUrl)}\n`);
  try {
    return await fn(createContext(config, db, logger));
  } finally {
    await db.close();
  }
}
