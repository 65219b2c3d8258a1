// Opens the configured database for a CLI command and closes it afterwards.
import pino from 'pino';
import { type Config, loadConfig } from '../config.ts';
import { createContext } from '../context.ts';
import { openFromConfig } from '../db/index.ts';
import type { AppContext } from '../http/context.ts';
import { createLogger } from '../lib/logger.ts';

export async function withContext<T>(fn: (ctx: AppContext) => Promise<T>, config: Config = loadConfig()): Promise<T> {
  // Logs go to stderr: stdout carries the command's output (one JSON object with --json).
  const logger = createLogger(
    { ...config, logLevel: process.env.LOG_LEVEL ? config.logLevel : 'warn', logPretty: false },
    pino.destination({ dest: 2, sync: true }),
  );
  const db = await openFromConfig(config);
  try {
    return await fn(createContext(config, db, logger));
  } finally {
    await db.close();
  }
}
