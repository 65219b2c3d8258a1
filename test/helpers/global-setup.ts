// Probes PostgreSQL once. Locally, an unreachable server skips the PostgreSQL half of the suite with a
// visible message; in CI (CI=true) it fails the run.
import pg from 'pg';
import type { TestProject } from 'vitest/node';

export const TEST_PG_URL = process.env.INKWELL_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string | null;
  }
}

export default async function setup(project: TestProject) {
  const client = new pg.Client({ connectionString: TEST_PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    // Drop schemas left behind by interrupted runs: those created more than an hour ago (the name
    // carries the time, see openTestDb), never those of a run going on at the same time.
    const { rows } = await client.query<{ nspname: string }>("select nspname from pg_namespace where nspname like 't\\_%'");
    for (const r of rows) {
      const created = /^t_([0-9a-z]+)_[0-9a-f]+$/.exec(r.nspname);
      if (created && Date.now() - Number.parseInt(created[1] as string, 36) < 3_600_000) continue;
      await client.query(`drop schema if exists "${r.nspname}" cascade`).catch(() => {});
    }
    project.provide('pgUrl', TEST_PG_URL);
  } catch (err) {
    const msg = `PostgreSQL is not reachable at ${TEST_PG_URL} (${(err as Error).message})`;
    if (process.env.CI) throw new Error(`${msg}; CI must run the PostgreSQL tests.`);
    process.stderr.write(`\n\x1b[33m⚠ ${msg}: every PostgreSQL test is SKIPPED. Set INKWELL_TEST_DATABASE_URL or start PostgreSQL.\x1b[0m\n\n`);
    project.provide('pgUrl', null);
  } finally {
    await client.end().catch(() => {});
  }
}
