// GET job's combined read (`getJobViewForKey`) and the key lookup of every other route (`findKeyByHash`)
// under concurrency, on both dialects. On PostgreSQL concurrent calls are combined into one statement
// (src/db/reusable.ts); each caller must still get exactly its own key and job, whatever the others in the
// same statement asked for, and an error caused by one caller must reach no one else.
import { afterEach, expect, it } from 'vitest';
import { batchStats } from '../../src/db/reusable.ts';
import { createJobsStore, JOB_VIEW_COLUMNS, type JobRow } from '../../src/jobs/store.ts';
import { hashKey } from '../../src/lib/ids.ts';
import { createProjectsStore, type KeyAuthRow, type KeyRow } from '../../src/projects/store.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';

const project = (id: string) => ({
  id,
  name: id,
  repository: `https://github.com/acme/${id}`,
  ref: 'main',
  model: null,
  settings: '{}',
  visitor_secret: 's',
  created_at: 1,
});

function job(id: string, projectId: string, i: number): JobRow {
  return {
    id,
    project_id: projectId,
    status: ['active', 'completed', 'failed'][i % 3] as string,
    repository: `https://github.com/acme/${projectId}`,
    ref: 'main',
    model: 'openai-compatible/m',
    branch: `inkwell/${id}`,
    draft: 0,
    pr_url: i % 2 ? `https://github.com/acme/${projectId}/pull/${i}` : null,
    error_code: i % 3 === 2 ? 'model_error' : null,
    error_message: i % 3 === 2 ? `failed ${i}` : null,
    input_tokens: 1000 * i,
    output_tokens: 10 * i,
    cost_usd: i % 2 ? 0.25 * i : null,
    budget: null,
    conversation: '[]',
    event_seq: 0,
    lease_owner: null,
    lease_expires_at: null,
    created_at: 1_700_000_000_000 + i,
    updated_at: 1_700_000_100_000 + i,
    archived_at: i === 4 ? 1_700_000_200_000 : null,
  };
}

const key = (id: string, projectId: string, kind: 'admin' | 'ingest', extra: Partial<KeyRow> = {}): KeyRow & { secret: string } => {
  const secret = `${kind === 'admin' ? 'ink' : 'ink_pub'}_${id}_secret`;
  return {
    id,
    project_id: projectId,
    kind,
    name: id,
    prefix: secret.slice(0, 8),
    hash: hashKey(secret),
    created_at: 1,
    last_used_at: null,
    revoked_at: null,
    ...extra,
    secret,
  };
};

const authRow = (k: KeyRow): KeyAuthRow => ({ id: k.id, project_id: k.project_id, kind: k.kind, last_used_at: k.last_used_at, revoked_at: k.revoked_at });
const view = (j: JobRow) => Object.fromEntries(JOB_VIEW_COLUMNS.map((c) => [c, j[c]]));

describeEachDialect('key and job reads under concurrency', (dialect) => {
  let t: TestDb;
  afterEach(async () => {
    await t.cleanup();
  });

  async function seed({ keepResults = true } = {}) {
    t = await openTestDb(dialect, { keepResults });
    const projects = createProjectsStore(t.db.kysely);
    const jobs = createJobsStore(t.db);
    for (const p of ['prj_a', 'prj_b']) await projects.insertProject(project(p));
    const keys = {
      adminA: key('key_admin_a', 'prj_a', 'admin', { last_used_at: 1_700_000_000_500 }),
      revokedA: key('key_revoked_a', 'prj_a', 'admin', { revoked_at: 1_700_000_000_900 }),
      ingestA: key('key_ingest_a', 'prj_a', 'ingest'),
      adminB: key('key_admin_b', 'prj_b', 'admin'),
    };
    for (const k of Object.values(keys)) {
      const { secret: _, ...row } = k;
      await projects.insertKey(row);
    }
    const jobRows = [job('job_a0', 'prj_a', 0), job('job_a1', 'prj_a', 1), job('job_a2', 'prj_a', 2), job('job_a4', 'prj_a', 4), job('job_b0', 'prj_b', 3)];
    for (const j of jobRows) await jobs.insertJob(j);
    const byId = Object.fromEntries(jobRows.map((j) => [j.id, j])) as Record<string, JobRow>;
    return { projects, jobs, keys, byId };
  }

  it('a batch mixing valid, revoked, ingest, other-project and unknown keys and missing jobs gives each caller its own row', async () => {
    // Kept results off: the calls made alone below must each run their own statement.
    const { jobs, keys, byId } = await seed({ keepResults: false });
    const unknown = hashKey('ink_unknown');
    // [key hash, path project, job id] → expected key row (undefined: unknown key) and job (undefined: none in that project).
    const cases: [string, string, string, KeyRow | undefined, JobRow | undefined][] = [
      [keys.adminA.hash, 'prj_a', 'job_a0', keys.adminA, byId.job_a0],
      [keys.adminA.hash, 'prj_a', 'job_a1', keys.adminA, byId.job_a1],
      [keys.adminA.hash, 'prj_a', 'job_a2', keys.adminA, byId.job_a2],
      [keys.adminA.hash, 'prj_a', 'job_a4', keys.adminA, byId.job_a4],
      [keys.adminA.hash, 'prj_a', 'job_missing', keys.adminA, undefined],
      [keys.adminA.hash, 'prj_a', 'job_b0', keys.adminA, undefined], // another project's job on one's own path
      [keys.revokedA.hash, 'prj_a', 'job_a1', keys.revokedA, byId.job_a1],
      [keys.ingestA.hash, 'prj_a', 'job_a0', keys.ingestA, byId.job_a0],
      [keys.adminB.hash, 'prj_a', 'job_a2', keys.adminB, byId.job_a2], // key of project B on A's path
      [keys.adminB.hash, 'prj_b', 'job_b0', keys.adminB, byId.job_b0],
      [unknown, 'prj_a', 'job_a0', undefined, undefined],
      [unknown, 'prj_b', 'job_missing', undefined, undefined],
      [keys.adminA.hash, 'prj_a', 'job_a0', keys.adminA, byId.job_a0], // the same call twice in one batch
      [keys.revokedA.hash, 'prj_missing', 'job_a0', keys.revokedA, undefined],
    ];
    const before = batchStats(t.db.kysely);
    const got = await Promise.all(cases.map(([hash, projectId, id]) => jobs.getJobViewForKey(hash, projectId, id)));
    for (const [i, [hash, projectId, id, k, j]] of cases.entries()) {
      const label = `case ${i}: ${projectId}/${id}`;
      const r = got[i];
      // The same as the call made alone.
      expect(await jobs.getJobViewForKey(hash, projectId, id), label).toEqual(r);
      if (!k) {
        expect(r, label).toBeUndefined();
        continue;
      }
      expect(r?.key, label).toEqual(authRow(k));
      if (j) expect(r?.job && Object.fromEntries(JOB_VIEW_COLUMNS.map((c) => [c, r.job?.[c]])), label).toEqual(view(j));
      else expect(r?.job, label).toBeUndefined();
    }
    if (dialect === 'postgres') {
      const after = batchStats(t.db.kysely);
      expect(after?.statements).toBe((before?.statements ?? 0) + 1 + cases.length); // the batch, then each alone
      expect(after?.calls).toBe((before?.calls ?? 0) + cases.length * 2);
    }
  });

  it('the key lookup of other routes: concurrent valid, revoked, ingest and unknown keys', async () => {
    const { projects, keys } = await seed();
    const hashes = [keys.adminA.hash, hashKey('nope'), keys.revokedA.hash, keys.ingestA.hash, keys.adminB.hash, keys.adminA.hash, hashKey('nope2')];
    const expected = [keys.adminA, undefined, keys.revokedA, keys.ingestA, keys.adminB, keys.adminA, undefined].map((k) => k && authRow(k));
    const before = batchStats(t.db.kysely);
    expect(await Promise.all(hashes.map((h) => projects.findKeyByHash(h)))).toEqual(expected);
    if (dialect === 'postgres') expect(batchStats(t.db.kysely)?.statements).toBe((before?.statements ?? 0) + 1);
  });

  it('a caller whose arguments the database refuses fails alone, in its batch and not in the next', async () => {
    const { jobs, keys, byId } = await seed();
    // PostgreSQL text cannot hold NUL: the combined statement fails, every call runs again alone, and only
    // the NUL one fails. SQLite stores any string: the NUL call just finds nothing.
    const calls = [
      [keys.adminA.hash, 'prj_a', 'job_a0'],
      [keys.adminA.hash, 'prj_a', 'job_\u0000'],
      [keys.revokedA.hash, 'prj_a', 'job_a1'],
      [hashKey('nope'), 'prj_a', 'job_a1'],
    ] as const;
    const first = Promise.allSettled(calls.map(([h, p, id]) => jobs.getJobViewForKey(h, p, id)));
    await new Promise((r) => setImmediate(r)); // the first batch is sent; the next calls make a second one
    const second = Promise.all([jobs.getJobViewForKey(keys.adminB.hash, 'prj_b', 'job_b0'), jobs.getJobViewForKey(keys.adminA.hash, 'prj_a', 'job_a2')]);
    const [s, r2] = await Promise.all([first, second]);
    expect(s[0]).toEqual({ status: 'fulfilled', value: { key: authRow(keys.adminA), job: expect.objectContaining(view(byId.job_a0 as JobRow)) } });
    if (dialect === 'postgres') {
      expect(s[1]?.status).toBe('rejected');
      expect(String((s[1] as PromiseRejectedResult).reason)).toMatch(/invalid byte sequence|0x00/);
    } else {
      expect(s[1]).toEqual({ status: 'fulfilled', value: { key: authRow(keys.adminA), job: undefined } });
    }
    expect(s[2]).toEqual({ status: 'fulfilled', value: { key: authRow(keys.revokedA), job: expect.objectContaining(view(byId.job_a1 as JobRow)) } });
    expect(s[3]).toEqual({ status: 'fulfilled', value: undefined });
    expect(r2).toEqual([
      { key: authRow(keys.adminB), job: expect.objectContaining(view(byId.job_b0 as JobRow)) },
      { key: authRow(keys.adminA), job: expect.objectContaining(view(byId.job_a2 as JobRow)) },
    ]);
  });

  it('reads after a revocation or a job change (committed elsewhere) see it, also when batched', async () => {
    const { jobs, keys } = await seed();
    const other = t.reopen(); // another connection pool, as another process
    const otherProjects = createProjectsStore(other.kysely);
    const otherJobs = createJobsStore(other);
    const read = () => jobs.getJobViewForKey(keys.adminA.hash, 'prj_a', 'job_a0');
    for (let round = 0; round < 3; round++) {
      const inFlight = Promise.all([read(), read(), read()]);
      await new Promise((r) => setImmediate(r));
      await otherJobs.updateJob('job_a0', { status: 'completed', updated_at: 1_800_000_000_000 + round });
      const after = await Promise.all([read(), read(), read()]);
      for (const r of after) expect(r?.job).toMatchObject({ status: 'completed', updated_at: 1_800_000_000_000 + round });
      await inFlight;
    }
    await otherProjects.revokeKey(keys.adminA.id, 1_900_000_000_000);
    const revoked = await Promise.all([read(), read()]);
    for (const r of revoked) expect(r?.key.revoked_at).toBe(1_900_000_000_000);
  });
});
