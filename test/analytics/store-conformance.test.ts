// The SQL analytics store on SQLite and PostgreSQL (and with every day summary sealed and memory forgotten after
// each append, so reads go through persisted blobs extended by later segments) against the reference store: see
// store-conformance.ts.
import * as esbuild from 'esbuild';
import { describe, expect, it } from 'vitest';
import { createSqlAnalyticsStore } from '../../src/analytics/store/sql-analytics-store.ts';
import { type Config, testConfig } from '../../src/config.ts';
import { createProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';
import { DIALECTS, type DialectName, openTestDb, pgUrl } from '../helpers/db.ts';
import { describeAnalyticsStoreConformance, type StoreUnderTest } from './store-conformance.ts';

async function sqlStore(dialect: DialectName, analytics: Partial<Config['analytics']> = {}, opts: { sealEachAppend?: boolean } = {}): Promise<StoreUnderTest> {
  const t = await openTestDb(dialect);
  const projects = createProjectService(createProjectsStore(t.db.kysely));
  const sql = createSqlAnalyticsStore({ config: { analytics: { ...testConfig().analytics, ...analytics } }, db: t.db, now: Date.now });
  const store = opts.sealEachAppend
    ? {
        ...sql,
        async append(...args: Parameters<typeof sql.append>) {
          const n = await sql.append(...args);
          // Twice: a day is sealed once its version held for a tick. Then a cold process: blobs, extension, rebuilds.
          await sql.summaries.sealOnce();
          await sql.summaries.sealOnce();
          sql.summaries.clear();
          return n;
        },
      }
    : sql;
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
describeAnalyticsStoreConformance('SQL store, summaries sealed after every append [sqlite]', () => sqlStore('sqlite', {}, { sealEachAppend: true }), {
  numRuns: 10,
});

describe('the AnalyticsStore boundary', () => {
  it('a store can be written without the SQL layer: the interface and the reference store load no database module', async () => {
    for (const entry of ['src/analytics/store/analytics-store.ts', 'test/analytics/reference-store.ts']) {
      const r = await esbuild.build({
        entryPoints: [entry],
        bundle: true,
        write: false,
        metafile: true,
        platform: 'node',
        format: 'esm',
        packages: 'external',
        logLevel: 'silent',
      });
      const packages = Object.values(r.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
      const modules = Object.keys(r.metafile.inputs);
      expect(
        packages.filter((p) => /^(kysely|pg|better-sqlite3)(\/|$)/.test(p)),
        entry,
      ).toEqual([]);
      expect(
        modules.filter((m) => m.startsWith('src/db/') || /store\/(store|sql-analytics-store|summary-store|segment-store)\.ts$/.test(m)),
        entry,
      ).toEqual([]);
      if (entry.startsWith('test/')) expect(modules).toContain('src/analytics/classify/classify.ts');
    }
  });
});
