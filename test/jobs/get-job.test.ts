// GET /v2/agent/:projectId/job/:id reads the key and the job in one query (requireKeyWith): the same
// answers as every other authenticated route, byte for byte, on both dialects.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createJobsStore } from '../../src/jobs/store.ts';
import { createProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';
import { runCli } from '../cli/run-cli.ts';
import type { Seeded } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { type JobsTestApp, startJobsApp } from '../helpers/jobs.ts';

const UNAUTHORIZED = { error: 'Unauthorized', code: 'unauthorized' };

describeEachDialect('GET job (key and job in one read)', (dialect) => {
  let t: JobsTestApp;
  let a: Seeded;
  let b: Seeded;
  let jobA: Record<string, unknown>;
  let jobB: Record<string, unknown>;
  const get = (projectId: string, id: string, key?: string) => t.request('GET', `/v2/agent/${projectId}/job/${id}`, key ? { key } : {});

  beforeAll(async () => {
    t = await startJobsApp(dialect);
    a = await t.seed({ name: 'A' });
    b = await t.seed({ name: 'B' });
    jobA = (await t.request('POST', `/v2/agent/${a.project.id}/job`, { key: a.adminKey, body: { prompt: 'Fix the typo' } })).body;
    jobB = (await t.request('POST', `/v2/agent/${b.project.id}/job`, { key: b.adminKey, body: { prompt: 'Other' } })).body;
  });
  afterAll(async () => t?.close());

  it('200 with the same job object as create and list, and an x-request-id', async () => {
    const r = await get(a.project.id, jobA.id as string, a.adminKey);
    expect(r.status).toBe(200);
    expect(r.body).toEqual(jobA);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.headers.get('x-request-id')).toMatch(/^[\w.:-]+$/);
    const list = await t.request('GET', `/v2/agent/${a.project.id}/jobs`, { key: a.adminKey });
    expect(JSON.stringify(list.body.jobs[0])).toBe(r.text);
  });

  it('401 with WWW-Authenticate for a missing, malformed, unknown or wrongly prefixed key', async () => {
    const unknownAdmin = `ink_${'A'.repeat(40)}`;
    const cases: Record<string, string>[] = [
      {},
      { authorization: 'Basic abc' },
      { authorization: `Bearer ${unknownAdmin}` },
      { authorization: 'Bearer ink_short' },
    ];
    for (const headers of cases) {
      const r = await t.request('GET', `/v2/agent/${a.project.id}/job/${jobA.id}`, { headers });
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(r.body).toEqual(UNAUTHORIZED);
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
    }
    // An ingest key's text presented as if it were an admin key of the same hash does not exist: still 401.
    const r = await get(a.project.id, jobA.id as string, `${a.ingestKey}x`);
    expect(r.status).toBe(401);
  });

  it('403 for an ingest key of the project; 404 project_not_found for a key of another project', async () => {
    const ingest = await get(a.project.id, jobA.id as string, a.ingestKey);
    expect(ingest.status).toBe(403);
    expect(ingest.body).toEqual({ error: 'This endpoint needs an admin key', code: 'forbidden' });
    for (const projectId of [a.project.id, 'prj_doesnotexist']) {
      const cross = await get(projectId, jobA.id as string, b.adminKey);
      expect(cross.status).toBe(404);
      expect(cross.body).toEqual({ error: 'Project not found', code: 'project_not_found' });
    }
  });

  it("404 job_not_found for an unknown job and for another project's job on one's own path", async () => {
    for (const id of ['job_doesnotexist', jobB.id as string]) {
      const r = await get(a.project.id, id, a.adminKey);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'Job not found', code: 'job_not_found' });
    }
  });

  it('a key revoked through another connection (another process) stops working on the very next request', async () => {
    const k = await t.ctx.projects.createKey({ projectId: a.project.id, kind: 'admin', name: 'temp' });
    // Twice: the first use records last_used_at (a write of this process); the second is answered with
    // nothing written in between (on SQLite, from the kept result of the first read).
    expect((await get(a.project.id, jobA.id as string, k.key)).status).toBe(200);
    expect((await get(a.project.id, jobA.id as string, k.key)).status).toBe(200);
    const other = t.testDb.reopen();
    await createProjectService(createProjectsStore(other.kysely)).revokeKey(k.id);
    const r = await get(a.project.id, jobA.id as string, k.key);
    expect(r.status).toBe(401);
    expect(r.body).toEqual(UNAUTHORIZED);
    expect((await get(a.project.id, jobA.id as string, a.adminKey)).status).toBe(200);
  });

  it('a key revoked by `inkwell key revoke` (a real process) gets 401 on the next request', async () => {
    const k = await t.ctx.projects.createKey({ projectId: a.project.id, kind: 'admin', name: 'cli-revoked' });
    for (let i = 0; i < 3; i++) expect((await get(a.project.id, jobA.id as string, k.key)).status).toBe(200);
    const r = await runCli(['key', 'revoke', k.id], t.testDb.env);
    expect(r.code, r.stderr).toBe(0);
    expect((await get(a.project.id, jobA.id as string, k.key)).status).toBe(401);
    expect((await get(a.project.id, jobA.id as string, a.adminKey)).status).toBe(200);
  });

  it('a job changed through another connection (a worker process) shows on the very next request', async () => {
    const job = (await t.request('POST', `/v2/agent/${a.project.id}/job`, { key: a.adminKey, body: { prompt: 'Changed elsewhere' } })).body;
    for (let i = 0; i < 3; i++) expect((await get(a.project.id, job.id, a.adminKey)).body).toEqual(job);
    const other = createJobsStore(t.testDb.reopen());
    const at = Date.parse(job.createdAt) + 60_000;
    await other.updateJob(job.id, { status: 'failed', error_code: 'model_error', error_message: 'The model refused', updated_at: at });
    const r = await get(a.project.id, job.id, a.adminKey);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ...job, status: 'failed', error: { code: 'model_error', message: 'The model refused' }, updatedAt: new Date(at).toISOString() });
    await other.updateJob(job.id, { archived_at: at + 1, status: 'archived', updated_at: at + 1 });
    expect((await get(a.project.id, job.id, a.adminKey)).body).toMatchObject({ status: 'archived', archivedAt: new Date(at + 1).toISOString() });
  });

  it('concurrent requests mixing keys and jobs each get their own answer (combined into one read on PostgreSQL)', async () => {
    const revoked = await t.ctx.projects.createKey({ projectId: a.project.id, kind: 'admin', name: 'revoked' });
    await t.ctx.projects.revokeKey(revoked.id);
    const jobA2 = (await t.request('POST', `/v2/agent/${a.project.id}/job`, { key: a.adminKey, body: { prompt: 'Second' } })).body;
    const specs: [string, string, string | undefined][] = [
      [a.project.id, jobA.id as string, a.adminKey],
      [a.project.id, jobA2.id as string, a.adminKey],
      [a.project.id, 'job_doesnotexist', a.adminKey],
      [a.project.id, jobB.id as string, a.adminKey],
      [a.project.id, jobA.id as string, revoked.key],
      [a.project.id, jobA.id as string, `ink_${'Z'.repeat(40)}`],
      [a.project.id, jobA.id as string, a.ingestKey],
      [a.project.id, jobA.id as string, b.adminKey],
      [b.project.id, jobB.id as string, b.adminKey],
      [b.project.id, jobA.id as string, b.adminKey],
      [a.project.id, jobA.id as string, undefined],
    ];
    // Each answer alone first, then all of them at once, three times over.
    const alone = [];
    for (const [p, id, k] of specs) alone.push(await get(p, id, k));
    expect(alone.map((r) => r.status)).toEqual([200, 200, 404, 404, 401, 401, 403, 404, 200, 404, 401]);
    expect(alone[0]?.body).toEqual(jobA);
    expect(alone[1]?.body).toEqual(jobA2);
    expect(alone[8]?.body).toEqual(jobB);
    const together = await Promise.all([0, 1, 2].flatMap(() => specs.map(([p, id, k]) => get(p, id, k))));
    for (const [i, r] of together.entries()) {
      const expected = alone[i % specs.length];
      expect({ status: r.status, text: r.text }, `request ${i}`).toEqual({ status: expected?.status, text: expected?.text });
    }
  });

  it('records when the key was last used', async () => {
    const k = await t.ctx.projects.createKey({ projectId: a.project.id, kind: 'admin', name: 'fresh' });
    const t0 = Date.now();
    expect((await get(a.project.id, jobA.id as string, k.key)).status).toBe(200);
    const info = (await t.ctx.projects.listKeys(a.project.id)).find((x) => x.id === k.id);
    expect(info?.lastUsedAt).not.toBeNull();
    expect(Date.parse(info?.lastUsedAt as string)).toBeGreaterThanOrEqual(t0 - 1000);
  });

  it('shows changes made by another connection at once (no caching of the job)', async () => {
    const other = t.testDb.reopen();
    await other.kysely
      .updateTable('jobs')
      .set({ status: 'failed', error_code: 'agent_failed', error_message: 'boom' })
      .where('id', '=', jobA.id as string)
      .execute();
    const r = await get(a.project.id, jobA.id as string, a.adminKey);
    expect(r.body.status).toBe('failed');
    expect(r.body.error).toEqual({ code: 'agent_failed', message: 'boom' });
  });
});
