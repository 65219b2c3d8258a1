// The project and analytics services over a test database, without the HTTP app.
import { createAnalyticsService } from '../../src/analytics/service.ts';
import { testConfig } from '../../src/config.ts';
import type { Database } from '../../src/db/index.ts';
import { createProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';

export function services(db: Database) {
  const projects = createProjectService(createProjectsStore(db.kysely));
  return { projects, svc: createAnalyticsService({ config: testConfig(), db, projects, now: Date.now }) };
}
