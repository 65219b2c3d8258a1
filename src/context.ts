// Composition root: every long-lived part and service is built here, once per process, and handed to the
// HTTP app, the worker and the CLI commands.
//
// Two levels, so that a CLI command loads only what it uses: `createContext` builds the parts every
// entry needs (database, projects service, rate limiter, logger); `wireServices` adds the job and
// analytics services the API routes and the worker use, and loads their modules (and the model registry)
// only when it is called (`inkwell serve`, tests). Building a service starts nothing: the app that serves
// analytics starts its background work and stops it on close, the worker entry starts the worker.
import type { Logger } from 'pino';
import type { AnalyticsService } from './analytics/service.ts';
import type { SqlAnalyticsStoreDeps } from './analytics/store/sql-analytics-store.ts';
import type { CodeHostEvents } from './code-host-events/service.ts';
import type { Config } from './config.ts';
import type { Database } from './db/index.ts';
import type { AppContext } from './http/context.ts';
import { createRateLimiter } from './http/rate-limit.ts';
import type { BudgetSource } from './jobs/budgets.ts';
import type { JobNotifier } from './jobs/notify.ts';
import type { JobService } from './jobs/service.ts';
import type { JobsStore } from './jobs/store.ts';
import { createProjectService } from './projects/service.ts';
import { createProjectsStore } from './projects/store.ts';
import { createSessionService } from './sessions/service.ts';
import { createSessionsStore } from './sessions/store.ts';

export function createContext(config: Config, db: Database, logger: Logger, now: () => number = Date.now): AppContext {
  const projects = createProjectService(createProjectsStore(db.kysely), now);
  const sessionSettings = { sessionTtlMs: config.dashboard.sessionTtlHours * 3_600_000, linkTtlMs: config.dashboard.signinLinkTtlMinutes * 60_000 };
  return {
    config,
    db,
    logger,
    now,
    projects,
    sessions: createSessionService(createSessionsStore(db.kysely), projects, sessionSettings, now),
    rateLimiter: createRateLimiter(config.rateLimits, now),
  };
}

/**
 * The analytics service over this deployment's analytics store: ClickHouse when CLICKHOUSE_URL is set (its
 * version checked and its migrations applied here: a server that is too old or unreachable fails the start),
 * else the SQL store on the context's database. `onBackgroundError` hears failures of background work, which
 * never throws.
 */
export async function wireAnalytics(
  ctx: AppContext,
  onBackgroundError?: (err: unknown) => void,
  sqlOptions: Pick<SqlAnalyticsStoreDeps, 'writerThread'> = {},
): Promise<AnalyticsService> {
  const { createAnalyticsService } = await import('./analytics/service.ts');
  const ch = ctx.config.clickhouse;
  if (ch.url) {
    const [{ openClickHouseAnalyticsStore }, { createHttpExecutor, ensureServerDatabase }, { createSqlVisitorNumbering }] = await Promise.all([
      import('./analytics/clickhouse/clickhouse-store.ts'),
      import('./analytics/clickhouse/http-executor.ts'),
      import('./analytics/clickhouse/visitor-numbers.ts'),
    ]);
    const opts = { url: ch.url, database: ch.database, user: ch.user, password: ch.password };
    // (A user without CREATE DATABASE rights needs the database made for it: then this fails and the check says why.)
    await ensureServerDatabase(opts).catch(() => undefined);
    const store = await openClickHouseAnalyticsStore({
      ch: createHttpExecutor(opts),
      // Visitor numbers from the SQL database every process shares (visitor-numbers.ts).
      numbering: createSqlVisitorNumbering(ctx.db, { maxBytes: ctx.config.analytics.projectStateMb * 2 ** 20 }),
      now: ctx.now,
      snapshotMs: ctx.config.analytics.snapshotMs,
      resultEntries: ctx.config.analytics.resultCacheEntries,
      ...(ch.cluster ? { cluster: ch.cluster } : {}),
    });
    return createAnalyticsService({ store, projects: ctx.projects, now: ctx.now });
  }
  const { createSqlAnalyticsStore } = await import('./analytics/store/sql-analytics-store.ts');
  const store = createSqlAnalyticsStore({ ...ctx, ...sqlOptions, ...(onBackgroundError ? { onBackgroundError } : {}) });
  return createAnalyticsService({ store, projects: ctx.projects, now: ctx.now });
}

/** The services the API routes and the worker share. */
export interface Services {
  jobs: {
    store: JobsStore;
    /** Wakes idle workers on new turns and stops runs of archived jobs (in this process). */
    notifier: JobNotifier;
    service: JobService;
    /** The budgets a claimed turn runs under (the worker asks). */
    budgets: BudgetSource;
  };
  analytics: AnalyticsService;
  /** Code-host webhooks: comments that start and continue jobs. */
  codeHostEvents: CodeHostEvents;
}

export async function wireServices(ctx: AppContext): Promise<Services> {
  const [
    { createJobsStore },
    { notifierFor },
    { createJobService },
    { modelConfigError },
    { priceOf },
    { createCodeHostEvents },
    { createDeliveriesStore },
    { createBudgetSource },
  ] = await Promise.all([
    import('./jobs/store.ts'),
    import('./jobs/notify.ts'),
    import('./jobs/service.ts'),
    import('./agent/models.ts'),
    import('./agent/prices.ts'),
    import('./code-host-events/service.ts'),
    import('./code-host-events/store.ts'),
    import('./jobs/budgets.ts'),
  ]);
  const store = createJobsStore(ctx.db);
  const notifier = notifierFor(ctx.db);
  const service = createJobService({
    store,
    notifier,
    defaultModel: ctx.config.model.defaultModel,
    modelConfigError: (model) => modelConfigError(model, ctx.config),
    priceKnown: (model) => priceOf(model, ctx.config.model.prices) !== null,
    repositoryScope: (projectId) => ctx.projects.getProject(projectId),
    now: ctx.now,
  });
  const analytics = await wireAnalytics(ctx, (err) => ctx.logger.error({ err }, 'analytics background work failed'));
  const codeHostEvents = createCodeHostEvents({ ...ctx, jobs: service, store: createDeliveriesStore(ctx.db.kysely) });
  const budgets = createBudgetSource({
    store,
    projects: ctx.projects,
    defaults: ctx.config.budget,
    now: ctx.now,
  });
  return { jobs: { store, notifier, service, budgets }, analytics, codeHostEvents };
}
