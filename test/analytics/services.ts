// The project and analytics services over a test database, without the HTTP app: the analytics service over the
// SQL analytics store, as the composition root (src/context.ts) builds it.
import { createAnalyticsService } from '../../src/analytics/service.ts';
import { createSqlAnalyticsStore, type SqlAnalyticsStoreDeps } from '../../src/analytics/store/sql-analytics-store.ts';
import { testConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/index.ts';
import { createProjectService, type ProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';

/** The analytics service over a SQL analytics store (its parts reachable as `svc.store.exporter`, `.summaries`, …). */
export function sqlAnalyticsService(deps: SqlAnalyticsStoreDeps & { projects: Pick<ProjectService, 'getProject'> }) {
  return createAnalyticsService({ store: createSqlAnalyticsStore(deps), projects: deps.projects, now: deps.now });
}

export function services(db: Database) {
  const projects = createProjectService(createProjectsStore(db.kysely));
  return { projects, svc: sqlAnalyticsService({ config: testConfig(), db, projects, now: Date.now }) };
}
