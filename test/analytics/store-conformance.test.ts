// The SQL analytics store on SQLite and PostgreSQL (and with the visitors export counted in SQL rather than from
// day sets) against the reference store: see store-conformance.ts.
import { createSqlAnalyticsStore } from '../../src/analytics/store/sql-analytics-store.ts';
import { type Config, testConfig } from '../../src/config.ts';
import { createProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';
import { DIALECTS, type DialectName, openTestDb, pgUrl } from '../helpers/db.ts';
import { describeAnalyticsStoreConformance, type StoreUnderTest } from './store-conformance.ts';

async function sqlStore(dialect: DialectName, analytics: Partial<Config['analytics']> = {}): Promise<StoreUnderTest> {
  const t = await openTestDb(dialect);
  const projects = createProjectService(createProjectsStore(t.db.kysely));
  const store = createSqlAnalyticsStore({ config: { analytics: { ...testConfig().analytics, ...analytics } }, db: t.db, now: Date.now });
  return {
    store,
    createProject: async () => (await projects.createProject({ name: 'conformance', repository: 'r' })).id,
    async cleanup() {
      await store.close();
      await t.cleanup();
    },
  };
}

for (const dialect of DIALECTS) {
  if (dialect === 'postgres' && !pgUrl()) continue;
  describeAnalyticsStoreConformance(`SQL store [${dialect}]`, () => sqlStore(dialect));
}
describeAnalyticsStoreConformance('SQL store, visitors counted in SQL [sqlite]', () => sqlStore('sqlite', { visitorsEngine: 'sql' }), { numRuns: 10 });
