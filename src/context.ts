// Composition root: builds the long-lived parts the HTTP app and the worker share.
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Database } from './db/index.ts';
import type { AppContext } from './http/context.ts';
import { createMetrics } from './http/metrics.ts';
import { createRateLimiter } from './http/rate-limit.ts';
import { createProjectService } from './projects/service.ts';
import { createProjectsStore } from './projects/store.ts';

export function createContext(config: Config, db: Database, logger: Logger, now: () => number = Date.now): AppContext {
  return {
    config,
    db,
    logger,
    now,
    projects: createProjectService(createProjectsStore(db.kysely), now),
    rateLimiter: createRateLimiter(config.rateLimits, now),
    metrics: createMetrics(),
  };
}
