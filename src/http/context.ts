// What the HTTP layer is handed: long-lived parts built by the process entry (or a test).
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Database } from '../db/index.ts';
import type { ProjectService } from '../projects/service.ts';
import type { SessionService } from '../sessions/service.ts';
import type { RateLimiter } from './rate-limit.ts';

export interface AppContext {
  config: Config;
  db: Database;
  logger: Logger;
  projects: ProjectService;
  /** Dashboard sessions: what the session cookie authenticates. */
  sessions: SessionService;
  rateLimiter: RateLimiter;
  now: () => number;
}
