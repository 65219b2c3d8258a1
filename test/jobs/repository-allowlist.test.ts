// Repositories per project over real HTTP on both dialects: a job's source.repository must be the
// project's own repository (in any canonical spelling) or one on its allow-list, which the CLI edits.
// No worker runs: a refused request must leave no job, no turn and no idempotency key behind.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { runJson } from '../cli/run-cli.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { type JobsTestApp, startJobsApp } from '../helpers/jobs.ts';
import { hostedErrorErrors } from './schema.ts';

describeEachDialect('job repositories per project', (dialect) => {
  let t: JobsTestApp;
  let key: string;
  let pid: string;
  const jobPath = () => `/v2/agent/${pid}/job`;
  const create = (repository: string, headers: Record<string, string> = {}) =>
    t.request('POST', jobPath(), { key, body: { prompt: 'Fix the typo', source: { repository } }, headers });
  const jobRows = async () => t.testDb.db.kysely.selectFrom('jobs').select('repository').where('project_id', '=', pid).execute();

  beforeAll(async () => {
    t = await startJobsApp(dialect, {}, { INKWELL_RATE_LIMIT_JOBS: '4/1h' });
  });
  beforeEach(async () => {
    const s = await t.seed({ repository: 'https://github.com/acme/docs', ref: 'main' });
    key = s.adminKey;
    pid = s.project.id;
  });
  afterAll(async () => {
    await t.close();
  });

  it('403 repository_not_allowed for a foreign repository: nothing stored, nothing charged', async () => {
    for (const foreign of [
      'https://github.com/acme/site',
      'git@evil.example:acme/docs.git', // (user-info in a URL is a 400, below)
      'https://github.com.evil.example/acme/docs',
      'http://github.com/acme/docs',
      '/srv/git/docs',
      'file:///etc',
    ]) {
      const r = await create(foreign, { 'idempotency-key': 'k1' });
      expect(r.status, foreign).toBe(403);
      expect(r.body.code).toBe('repository_not_allowed');
      expect(r.body.error).toContain('source.repository');
      expect(r.body.details).toEqual([{ message: r.body.error, path: 'source.repository' }]);
      expect(hostedErrorErrors(r.body)).toBeNull();
      expect(r.headers.get('ratelimit-remaining')).toBeNull();
    }
    expect((await t.request('GET', `/v2/agent/${pid}/jobs`, { key })).body.jobs).toEqual([]);
    expect(await jobRows()).toEqual([]);
    const keys = await t.testDb.db.kysely.selectFrom('idempotency_keys').selectAll().where('project_id', '=', pid).execute();
    expect(keys).toEqual([]);
    // The quota (4 per hour) is whole: four jobs on the project's own repository still go through.
    for (let i = 0; i < 4; i++) expect((await t.request('POST', jobPath(), { key, body: { prompt: `job ${i}` } })).status).toBe(201);
  });

  it("201 for the project's own repository written in another canonical form (kept as given)", async () => {
    for (const own of ['https://github.com/acme/docs', 'HTTPS://GitHub.com/acme/docs.git/', 'https://github.com:443/Acme/Docs/']) {
      const r = await create(own);
      expect(r.status, own).toBe(201);
      expect(r.body.source.repository).toBe(own);
    }
  });

  it('allow-list: 201 after project set --allow-repository, 403 again after --disallow-repository', async () => {
    const env = t.testDb.env;
    expect((await create('https://gitlab.com/acme/site.git')).status).toBe(403);
    const set = await runJson(
      ['project', 'set', '--project', pid, '--allow-repository', 'https://GitLab.com/acme/site/', '--allow-repository', '/srv/git/mirror/'],
      env,
    );
    expect(set).toEqual({
      projectId: pid,
      settings: { visitorIdRotation: 'none', allowedRepositories: ['https://gitlab.com/acme/site', 'file:///srv/git/mirror'] },
    });

    const a = await create('https://gitlab.com/acme/site.git', { 'idempotency-key': 'allowed-1' });
    expect(a.status).toBe(201);
    expect(a.body.source.repository).toBe('https://gitlab.com/acme/site.git');
    expect((await create('file:///srv/git/mirror')).status).toBe(201);
    // GitLab paths are case-sensitive: another case is another repository.
    expect((await create('https://gitlab.com/Acme/Site')).status).toBe(403);

    const unset = await runJson(['project', 'set', '--project', pid, '--disallow-repository', 'https://gitlab.com/acme/site'], env);
    expect(unset.settings.allowedRepositories).toEqual(['file:///srv/git/mirror']);
    const b = await create('https://gitlab.com/acme/site.git');
    expect(b.status).toBe(403);
    expect(b.body.code).toBe('repository_not_allowed');

    // A follow-up message cannot name a repository, but the job's own one is checked again: a job on a
    // repository taken off the list takes no more turns.
    const m = await t.request('POST', `${jobPath()}/${a.body.id}/message`, { key, body: { prompt: 'more' } });
    expect(m.status).toBe(403);
    expect(m.body.code).toBe('repository_not_allowed');
    expect(m.headers.get('ratelimit-remaining')).toBeNull();
    const turns = await t.testDb.db.kysely.selectFrom('job_turns').select('turn_no').where('job_id', '=', a.body.id).execute();
    expect(turns).toHaveLength(1);
    const extra = await t.request('POST', `${jobPath()}/${a.body.id}/message`, { key, body: { prompt: 'x', source: { repository: 'https://x.example/y' } } });
    expect(extra.status).toBe(400);
    expect(extra.body.code).toBe('unknown_field');
    expect((await jobRows()).map((r) => r.repository).sort()).toEqual(['file:///srv/git/mirror', 'https://gitlab.com/acme/site.git']);
  }, 60_000); // two CLI processes

  it('a message to a job on an allowed repository is accepted', async () => {
    const c = await create('https://GITHUB.com/acme/docs');
    const m = await t.request('POST', `${jobPath()}/${c.body.id}/message`, { key, body: { prompt: 'more' } });
    expect(m.status).toBe(200);
  });

  it('credentials in the URL stay a 400 (checked first, never echoed)', async () => {
    const r = await create('https://user:ghp_secret@github.com/acme/docs');
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_request');
    expect(r.text).not.toContain('ghp_secret');
  });
});
