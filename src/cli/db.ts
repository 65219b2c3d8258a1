// Opens the configured database for a CLI command and closes it afterwards.
import { type Config, loadConfig } from '../config.ts';
import { createContext } from '../context.ts';
import { openFromConfig } from '../db/index.ts';
import type { AppContext } from '../http/context.ts';
import { createLogger } from '../lib/logger.ts';

export async function withContext<T>(fn: (ctx: AppContext) => Promise<T>, config: Config = loadConfig()): Promise<T> {
  const logger = createLogger({ ...config, logLevel: process.env.LOG_LEVEL ? config.logLevel : 'warn', logPretty: false });
  const db = await openFromConfig(config);
  try {
    return await fn(createContext(config, db, logger));
  } finally {
    await db.close();
  }
}
