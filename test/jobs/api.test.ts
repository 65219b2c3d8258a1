// The job endpoints over real HTTP on both dialects: validation, 404s, shapes, listing, archive,
// idempotency and rate limits. No worker runs here: jobs stay queued (active).
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/db.ts';
import { type JobsTestApp, startJobsApp } from '../helpers/jobs.ts';
import { agentJobErrors, hostedErrorErrors } from './schema.ts';

describeEachDialect('job API', (dialect) => {
  let t: JobsTestApp;
  let key: string;
  let pid: string;
  let project: { repository: string; ref: string };
  const jobPath = (id = '') => `/v2/agent/${pid}/job${id ? `/${id}` : ''}`;

  // One server per dialect; every test works in a project of its own.
  beforeAll(async () => {
    t = await startJobsApp(dialect);
  });
  beforeEach(async () => {
    const s = await t.seed({ repository: 'https://github.com/acme/docs', ref: 'main' });
    key = s.adminKey;
    pid = s.project.id;
    project = s.project;
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates a job: 201, active, defaults from project and config, valid against the hosted AgentJob schema', async () => {
    const r = await t.request('POST', jobPath(), { key, body: { prompt: 'Fix the typo in the quickstart' } });
    expect(r.status).toBe(201);
    expect(agentJobErrors(r.body)).toBeNull();
    expect(r.body).toMatchObject({
      status: 'active',
      source: { repository: project.repository, ref: project.ref },
      model: 'openai-compatible/test-model',
      prLink: null,
      archivedAt: null,
      error: null,
      usage: { inputTokens: 0, outputTokens: 0 },
    });
    expect(r.body.id).toMatch(/^job_[0-9A-Za-z]{16}$/);
    expect(r.body.branch).toBe(`inkwell/${r.body.id.slice(4, 12).toLowerCase()}-fix-the-typo-in-the-quickstart`);
    expect(r.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(r.body.updatedAt).toBe(r.body.createdAt);

    const g = await t.request('GET', jobPath(r.body.id), { key });
    expect(g.status).toBe(200);
    expect(g.body).toEqual(r.body);
    expect(agentJobErrors(g.body)).toBeNull();
  });

  it('takes model, source, branch and draft from the request', async () => {
    // Another repository than the project's own needs the allow-list (test/jobs/repository-allowlist.test.ts).
    await t.ctx.projects.changeAllowedRepositories(pid, { allow: ['https://github.com/acme/site'] });
    const r = await t.request('POST', jobPath(), {
      key,
      body: {
        prompt: 'x',
        model: 'openai-compatible/other',
        source: { repository: 'https://github.com/acme/site', ref: 'develop' },
        branch: 'docs/update',
        draft: true,
      },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      model: 'openai-compatible/other',
      source: { repository: 'https://github.com/acme/site', ref: 'develop' },
      branch: 'docs/update',
    });
  });

  it('uses the project model before the configured default', async () => {
    const s = await t.seed({ model: 'openai-compatible/project-model' });
    const r = await t.request('POST', `/v2/agent/${s.project.id}/job`, { key: s.adminKey, body: { prompt: 'x' } });
    expect(r.body.model).toBe('openai-compatible/project-model');
  });

  it.each([
    ['empty prompt', { prompt: '' }, 'invalid_request', 'prompt'],
    ['prompt too long', { prompt: 'x'.repeat(100_001) }, 'invalid_request', 'prompt'],
    ['prompt wrong type', { prompt: 42 }, 'invalid_request', 'prompt'],
    ['prompt missing', {}, 'invalid_request', 'prompt'],
    ['unknown field', { prompt: 'x', priority: 1 }, 'unknown_field', 'priority'],
    ['unknown source field', { prompt: 'x', source: { repo: 'y' } }, 'unknown_field', 'source.repo'],
    ['draft wrong type', { prompt: 'x', draft: 'yes' }, 'invalid_request', 'draft'],
    ['model not provider/model', { prompt: 'x', model: 'gpt4' }, 'invalid_request', 'model'],
    ['invalid branch', { prompt: 'x', branch: 'a..b' }, 'invalid_request', 'branch'],
    ['invalid ref', { prompt: 'x', source: { ref: 'bad ref' } }, 'invalid_request', 'source.ref'],
    ['credentials in repository', { prompt: 'x', source: { repository: 'https://user:ghp_secret@github.com/a/b' } }, 'invalid_request', 'source.repository'],
  ])('rejects %s with 400 naming the field', async (_name, body, code, field) => {
    const r = await t.request('POST', jobPath(), { key, body });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe(code);
    expect(r.body.details.map((d: { path: string }) => d.path)).toContain(field);
    expect(r.body.error).toContain(field);
    expect(hostedErrorErrors(r.body)).toBeNull();
    expect(r.text).not.toContain('ghp_secret');
  });

  it('accepts a prompt of exactly 100,000 characters', async () => {
    const r = await t.request('POST', jobPath(), { key, body: { prompt: 'y'.repeat(100_000) } });
    expect(r.status).toBe(201);
  });

  it('400 model_not_configured when the provider has no credentials (create and message)', async () => {
    const r = await t.request('POST', jobPath(), { key, body: { prompt: 'x', model: 'anthropic/claude-sonnet-4-5' } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('model_not_configured');
    expect(r.body.error).toContain('ANTHROPIC_API_KEY');
    const list = await t.request('GET', `/v2/agent/${pid}/jobs`, { key });
    expect(list.body.jobs).toEqual([]);
  });

  it('malformed JSON → 400 invalid_json; wrong content type → 415', async () => {
    const a = await t.request('POST', jobPath(), { key, raw: '{"prompt":', headers: { 'content-type': 'application/json' } });
    expect(a.status).toBe(400);
    expect(a.body.code).toBe('invalid_json');
    const b = await t.request('POST', jobPath(), { key, raw: 'prompt=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(b.status).toBe(415);
  });

  it('404 job_not_found for unknown jobs and for jobs of another project', async () => {
    const r = await t.request('GET', jobPath('job_doesnotexist'), { key });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'Job not found', code: 'job_not_found' });
    const created = await t.request('POST', jobPath(), { key, body: { prompt: 'x' } });
    const other = await t.seed();
    const cross = await t.request('GET', `/v2/agent/${other.project.id}/job/${created.body.id}`, { key: other.adminKey });
    expect(cross.status).toBe(404);
    expect(cross.body.code).toBe('job_not_found');
    for (const [m, p] of [
      ['POST', `${jobPath('job_nope')}/message`],
      ['POST', `${jobPath('job_nope')}/archive`],
      ['GET', `${jobPath('job_nope')}/events`],
    ] as const) {
      const x = await t.request(m, p, { key, ...(p.endsWith('message') ? { body: { prompt: 'x' } } : {}) });
      expect(x.status, `${m} ${p}`).toBe(404);
      expect(x.body.code).toBe('job_not_found');
    }
  });

  it('auth: 401 without a key, 403 with an ingest key, 404 project_not_found on another project', async () => {
    const s = await t.seed();
    expect((await t.request('POST', jobPath(), { body: { prompt: 'x' } })).status).toBe(401);
    expect((await t.request('POST', jobPath(), { key: s.ingestKey, body: { prompt: 'x' } })).status).toBe(404);
    const own = await t.request('POST', `/v2/agent/${s.project.id}/job`, { key: s.ingestKey, body: { prompt: 'x' } });
    expect(own.status).toBe(403);
    const cross = await t.request('GET', `/v2/agent/${s.project.id}/jobs`, { key });
    expect(cross.status).toBe(404);
    expect(cross.body.code).toBe('project_not_found');
  });

  it('lists newest first with cursor pagination and a status filter', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await t.request('POST', jobPath(), { key, body: { prompt: `job ${i}` } })).body.id);
    await t.request('POST', `${jobPath(ids[2])}/archive`, { key });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = `/v2/agent/${pid}/jobs?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const r = await t.request('GET', q, { key });
      expect(r.status).toBe(200);
      for (const j of r.body.jobs) expect(agentJobErrors(j)).toBeNull();
      seen.push(...r.body.jobs.map((j: { id: string }) => j.id));
      expect(r.body.hasMore).toBe(r.body.nextCursor !== null);
      cursor = r.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());

    const archived = await t.request('GET', `/v2/agent/${pid}/jobs?status=archived`, { key });
    expect(archived.body).toMatchObject({ hasMore: false, nextCursor: null });
    expect(archived.body.jobs.map((j: { id: string }) => j.id)).toEqual([ids[2]]);
    const def = await t.request('GET', `/v2/agent/${pid}/jobs`, { key });
    expect(def.body.jobs).toHaveLength(7);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['status=running', 'status'],
    ['cursor=%25%25', 'cursor'],
    ['cursor=bm90YWN1cnNvcg', 'cursor'],
  ])('list rejects %s with 400 naming the parameter', async (qs, field) => {
    const r = await t.request('GET', `/v2/agent/${pid}/jobs?${qs}`, { key });
    expect(r.status).toBe(400);
    expect(r.body.details.map((d: { path: string }) => d.path)).toContain(field);
  });

  it('archive: 200, archivedAt set, idempotent; message to an archived job → 409 job_archived', async () => {
    const c = await t.request('POST', jobPath(), { key, body: { prompt: 'x' } });
    const a = await t.request('POST', `${jobPath(c.body.id)}/archive`, { key });
    expect(a.status).toBe(200);
    expect(agentJobErrors(a.body)).toBeNull();
    expect(a.body.status).toBe('archived');
    expect(a.body.archivedAt).toMatch(/Z$/);
    const again = await t.request('POST', `${jobPath(c.body.id)}/archive`, { key });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(a.body);
    const m = await t.request('POST', `${jobPath(c.body.id)}/message`, { key, body: { prompt: 'more' } });
    expect(m.status).toBe(409);
    expect(m.body.code).toBe('job_archived');
  });

  it('message validation mirrors create', async () => {
    const c = await t.request('POST', jobPath(), { key, body: { prompt: 'x' } });
    const bad = await t.request('POST', `${jobPath(c.body.id)}/message`, { key, body: { prompt: '' } });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toBe('prompt');
    const extra = await t.request('POST', `${jobPath(c.body.id)}/message`, { key, body: { prompt: 'x', model: 'a/b' } });
    expect(extra.status).toBe(400);
    expect(extra.body.code).toBe('unknown_field');
    const ok = await t.request('POST', `${jobPath(c.body.id)}/message`, { key, body: { prompt: 'follow up' } });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('active');
    expect(agentJobErrors(ok.body)).toBeNull();
  });

  it('records status and user_message events, readable with ?after', async () => {
    const c = await t.request('POST', jobPath(), { key, body: { prompt: 'first' } });
    await t.request('POST', `${jobPath(c.body.id)}/message`, { key, body: { prompt: 'second' } });
    const e = await t.request('GET', `${jobPath(c.body.id)}/events`, { key });
    expect(e.status).toBe(200);
    expect(e.body.events.map((x: { seq: number; type: string }) => [x.seq, x.type])).toEqual([
      [1, 'status'],
      [2, 'user_message'],
      [3, 'user_message'],
    ]);
    expect(e.body.events[2].data).toEqual({ turn: 2, prompt: 'second' });
    const after = await t.request('GET', `${jobPath(c.body.id)}/events?after=2`, { key });
    expect(after.body.events.map((x: { seq: number }) => x.seq)).toEqual([3]);
    expect((await t.request('GET', `${jobPath(c.body.id)}/events?after=-1`, { key })).status).toBe(400);
  });

  it('Idempotency-Key: same key and body → the original response without new work; different body → 422', async () => {
    const headers = { 'idempotency-key': 'create-1' };
    const a = await t.request('POST', jobPath(), { key, body: { prompt: 'once', draft: false }, headers });
    expect(a.status).toBe(201);
    // Same body with keys in another order is the same request.
    const b = await t.request('POST', jobPath(), { key, raw: '{"draft":false,"prompt":"once"}', headers: { ...headers, 'content-type': 'application/json' } });
    expect(b.status).toBe(201);
    expect(b.body).toEqual(a.body);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    const c = await t.request('POST', jobPath(), { key, body: { prompt: 'different' }, headers });
    expect(c.status).toBe(422);
    expect(c.body.code).toBe('idempotency_mismatch');
    const list = await t.request('GET', `/v2/agent/${pid}/jobs`, { key });
    expect(list.body.jobs).toHaveLength(1);

    // The same key on another project is independent.
    const s = await t.seed();
    const d = await t.request('POST', `/v2/agent/${s.project.id}/job`, { key: s.adminKey, body: { prompt: 'once', draft: false }, headers });
    expect(d.status).toBe(201);
    expect(d.body.id).not.toBe(a.body.id);

    // Messages: one turn per key.
    const m1 = await t.request('POST', `${jobPath(a.body.id)}/message`, { key, body: { prompt: 'more' }, headers: { 'idempotency-key': 'msg-1' } });
    const m2 = await t.request('POST', `${jobPath(a.body.id)}/message`, { key, body: { prompt: 'more' }, headers: { 'idempotency-key': 'msg-1' } });
    expect([m1.status, m2.status]).toEqual([200, 200]);
    expect(m2.body).toEqual(m1.body);
    const events = await t.request('GET', `${jobPath(a.body.id)}/events`, { key });
    expect(events.body.events.filter((e: { type: string }) => e.type === 'user_message')).toHaveLength(2);

    const long = await t.request('POST', jobPath(), { key, body: { prompt: 'x' }, headers: { 'idempotency-key': 'k'.repeat(256) } });
    expect(long.status).toBe(400);
    expect(long.body.details[0].path).toBe('Idempotency-Key');
  });

  it('Idempotency-Key under 10 concurrent identical creates → one job', async () => {
    const headers = { 'idempotency-key': 'race-1' };
    const rs = await Promise.all(Array.from({ length: 10 }, () => t.request('POST', jobPath(), { key, body: { prompt: 'race' }, headers })));
    expect(rs.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(rs.map((r) => r.body.id)).size).toBe(1);
    const list = await t.request('GET', `/v2/agent/${pid}/jobs`, { key });
    expect(list.body.jobs).toHaveLength(1);
  });
});

describeEachDialect('job rate limits', (dialect) => {
  let t: JobsTestApp;
  afterEach(async () => {
    await t.close();
  });

  it('429 on the jobs family past the limit (create + message), other project unaffected', async () => {
    t = await startJobsApp(dialect, {}, { INKWELL_RATE_LIMIT_JOBS: '3/1h' });
    const a = await t.seed();
    const b = await t.seed();
    const path = `/v2/agent/${a.project.id}/job`;
    const first = await t.request('POST', path, { key: a.adminKey, body: { prompt: 'x' } });
    expect(first.status).toBe(201);
    expect(first.headers.get('ratelimit-limit')).toBe('3');
    expect((await t.request('POST', `${path}/${first.body.id}/message`, { key: a.adminKey, body: { prompt: 'y' } })).status).toBe(200);
    expect((await t.request('POST', path, { key: a.adminKey, body: { prompt: 'x' } })).status).toBe(201);
    const limited = await t.request('POST', `${path}/${first.body.id}/message`, { key: a.adminKey, body: { prompt: 'z' } });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Reads are not in the family.
    expect((await t.request('GET', `${path}/${first.body.id}`, { key: a.adminKey })).status).toBe(200);
    expect((await t.request('POST', `/v2/agent/${b.project.id}/job`, { key: b.adminKey, body: { prompt: 'x' } })).status).toBe(201);
  });

  it('requests rejected by validation (400) or for an unknown job (404) do not use up the quota; valid ones do', async () => {
    t = await startJobsApp(dialect, {}, { INKWELL_RATE_LIMIT_JOBS: '2/1h' });
    const a = await t.seed();
    const path = `/v2/agent/${a.project.id}/job`;
    const post = (p: string, body: unknown, headers: Record<string, string> = {}) => t.request('POST', p, { key: a.adminKey, body, headers });
    const rejected = [
      await post(path, {}), // schema: prompt missing
      await post(path, { prompt: 'x', extra: 1 }), // schema: unknown field
      await post(path, { prompt: 'x', branch: 'bad..branch' }), // handler check
      await post(path, { prompt: 'x', source: { ref: 'a b' } }),
      await post(path, { prompt: 'x' }, { 'idempotency-key': 'has space' }), // bad header
      await post(path, { prompt: 'x', model: 'anthropic/claude-x' }), // model_not_configured
      await post(path, { prompt: 'x', model: 'anthropic/claude-x' }),
    ];
    for (const r of rejected) {
      expect(r.status, r.text).toBe(400);
      expect(r.headers.get('ratelimit-remaining')).toBeNull();
    }
    const first = await post(path, { prompt: 'x' });
    expect(first.status).toBe(201);
    expect(first.headers.get('ratelimit-remaining')).toBe('1');
    // Messages: an empty prompt (400) and an unknown job (404) are not charged either.
    expect((await post(`${path}/${first.body.id}/message`, { prompt: '' })).status).toBe(400);
    expect((await post(`${path}/job_unknown/message`, { prompt: 'y' })).status).toBe(404);
    const msg = await post(`${path}/${first.body.id}/message`, { prompt: 'y' });
    expect(msg.status).toBe(200);
    expect(msg.headers.get('ratelimit-remaining')).toBe('0');
    expect((await post(path, { prompt: 'x' })).status).toBe(429);
  });
});
