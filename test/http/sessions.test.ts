// Dashboard sessions over real HTTP on both databases: sign-in with an admin key or a one-time link sets an
// HttpOnly SameSite=Strict cookie that stands for the key on the admin endpoints; a state change without the
// session's CSRF token is refused and changes nothing; the session ends on sign-out, at its expiry (an
// injected clock) and as soon as its key is revoked; a link works once, and never after its expiry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestOpts, TestResponse } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';
import { type JobsTestApp, startJobsApp } from '../helpers/jobs.ts';

const HOUR = 3_600_000;
const BROWSER = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0' };

/** The `inkwell_session` cookie a response sets (its value and attributes), or null. */
function sessionCookie(res: TestResponse): { value: string; attributes: string[] } | null {
  const set = res.headers.getSetCookie().find((c) => c.startsWith('inkwell_session='));
  if (!set) return null;
  const [pair, ...attributes] = set.split(';').map((p) => p.trim());
  return { value: (pair as string).slice('inkwell_session='.length), attributes };
}

describeEachDialect('dashboard sessions', (dialect) => {
  let t: JobsTestApp;
  let clock = 1_800_000_000_000;

  beforeAll(async () => {
    t = await startJobsApp(dialect, {}, {}, { now: () => clock });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Signs in and returns a request function carrying the cookie (and the CSRF token unless told not to). */
  async function signIn(body: { key: string } | { link: string }) {
    const res = await t.request('POST', '/v1/session', { body, headers: BROWSER });
    expect(res.status, res.text).toBe(200);
    const cookie = sessionCookie(res);
    expect(cookie).not.toBeNull();
    const { value } = cookie as { value: string };
    const as = (method: string, path: string, opts: RequestOpts & { csrf?: string | null } = {}) => {
      const { csrf = res.body.csrfToken, ...rest } = opts;
      return t.request(method, path, {
        ...rest,
        headers: { cookie: `theme=dark; inkwell_session=${value}`, ...(csrf === null ? {} : { 'x-csrf-token': csrf }), ...(rest.headers ?? {}) },
      });
    };
    return { res, cookie: cookie as { value: string; attributes: string[] }, as };
  }

  it('signs in with an admin key: an HttpOnly, SameSite=Strict cookie that works on the admin endpoints', async () => {
    const s = await t.seed();
    const { res, cookie, as } = await signIn({ key: s.adminKey });
    expect(res.body).toEqual({
      projectId: s.project.id,
      csrfToken: expect.stringMatching(/^[0-9A-Za-z]{32}$/),
      expiresAt: new Date(clock + 168 * HOUR).toISOString(),
    });
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(cookie.value).toMatch(/^iks_[0-9A-Za-z]{43}$/);
    expect(cookie.attributes).toEqual(expect.arrayContaining(['Path=/', 'HttpOnly', 'SameSite=Strict']));
    expect(cookie.attributes.some((a) => a.startsWith('Expires='))).toBe(true);
    expect(cookie.attributes).not.toContain('Secure'); // plain http: a Secure cookie would never come back
    expect(res.text).not.toContain(s.adminKey);

    const session = await as('GET', '/v1/session');
    expect(session.status, session.text).toBe(200);
    expect(session.body).toEqual(res.body);

    // GET endpoints of every area, and GET job (whose key lookup is combined with the job's read).
    expect((await as('GET', `/v1/projects/${s.project.id}`)).body).toMatchObject({ id: s.project.id, key: { id: s.adminKeyId } });
    expect((await as('GET', `/v1/analytics/${s.project.id}/series?interval=day`)).status).toBe(200);
    expect((await as('GET', `/v1/projects/${s.project.id}/webhook`)).body).toEqual({ webhook: null });
    const job = await t.request('POST', `/v2/agent/${s.project.id}/job`, { key: s.adminKey, body: { prompt: 'Document the --dry-run flag' } });
    expect(job.status, job.text).toBe(201);
    expect((await as('GET', `/v2/agent/${s.project.id}/job/${job.body.id}`)).body).toMatchObject({ id: job.body.id, status: 'active' });
    expect((await as('GET', `/v2/agent/${s.project.id}/job/job_doesNotExist0`)).status).toBe(404);
    expect((await as('GET', `/v2/agent/${s.project.id}/jobs`)).body.jobs.map((j: { id: string }) => j.id)).toEqual([job.body.id]);
    const events = await as('GET', `/v2/agent/${s.project.id}/job/${job.body.id}/events`);
    expect(events.status, events.text).toBe(200);

    // Scoped to its project like the key: another project's paths are 404.
    const other = await t.seed({ name: 'Other' });
    expect((await as('GET', `/v1/projects/${other.project.id}`)).status).toBe(404);
  });

  it('refuses a state change made with the cookie but without the CSRF token, and changes nothing', async () => {
    const s = await t.seed();
    const { as } = await signIn({ key: s.adminKey });
    const before = (await as('GET', `/v1/projects/${s.project.id}/keys`)).body.keys.length;
    for (const csrf of [null, '', 'x'.repeat(32), (await signIn({ key: s.adminKey })).res.body.csrfToken]) {
      const res = await as('POST', `/v1/projects/${s.project.id}/keys`, { body: { kind: 'admin' }, csrf });
      expect(res.status, `csrf ${csrf}: ${res.text}`).toBe(403);
      expect(res.body.code).toBe('csrf_token_invalid');
    }
    const job = await as('POST', `/v2/agent/${s.project.id}/job`, { body: { prompt: 'x' }, csrf: null });
    expect(job.body.code).toBe('csrf_token_invalid');
    expect((await as('GET', `/v1/projects/${s.project.id}/keys`)).body.keys.length).toBe(before);
    expect((await as('GET', `/v2/agent/${s.project.id}/jobs`)).body.jobs).toEqual([]);

    const created = await as('POST', `/v1/projects/${s.project.id}/keys`, { body: { kind: 'ingest', name: 'site' } });
    expect(created.status, created.text).toBe(201);
    expect((await as('GET', `/v1/projects/${s.project.id}/keys`)).body.keys.length).toBe(before + 1);
  });

  it('judges a request that carries an Authorization header by that header alone', async () => {
    const s = await t.seed();
    const { as } = await signIn({ key: s.adminKey });
    const res = await as('GET', `/v1/projects/${s.project.id}`, { headers: { authorization: 'Bearer ink_notAKey' } });
    expect(res.status).toBe(401);
  });

  it('refuses bad sign-ins with a clear 4xx and sets no cookie', async () => {
    const s = await t.seed();
    const cases: [unknown, number, string][] = [
      [{ key: s.ingestKey }, 403, 'forbidden'],
      [{ key: s.ingestSecretKey }, 403, 'forbidden'],
      [{ key: `ink_${'A'.repeat(40)}` }, 401, 'unauthorized'],
      [{ key: 'not a key' }, 401, 'unauthorized'],
      [{ link: 'ikl_unknown' }, 401, 'unauthorized'],
      [{ link: `ikl_${'A'.repeat(43)}` }, 401, 'unauthorized'],
      [{}, 400, 'invalid_request'],
      [{ key: s.adminKey, link: `ikl_${'A'.repeat(43)}` }, 400, 'invalid_request'],
      [{ key: s.adminKey, remember: true }, 400, 'unknown_field'],
      [{ key: '' }, 400, 'invalid_request'],
    ];
    for (const [body, status, code] of cases) {
      const res = await t.request('POST', '/v1/session', { body });
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(status);
      expect(res.body.code).toBe(code);
      expect(sessionCookie(res)).toBeNull();
    }
  });

  it('answers 401 for a missing, malformed, forged or foreign cookie, never a 500', async () => {
    const s = await t.seed();
    const path = `/v1/projects/${s.project.id}`;
    for (const cookie of [
      '',
      'inkwell_session=',
      'inkwell_session=iks_x',
      `inkwell_session=iks_${'A'.repeat(43)}`,
      'inkwell_session="%ZZ"',
      'inkwell_session=a; inkwell_session=b',
      '=;;;=',
    ]) {
      const res = await t.request('GET', path, { headers: { cookie } });
      expect(res.status, cookie).toBe(401);
      expect((await t.request('GET', '/v1/session', { headers: { cookie } })).status).toBe(401);
    }
  });

  it('signs out only with the CSRF token; the cookie is cleared and the session refused from then on', async () => {
    const s = await t.seed();
    const { as } = await signIn({ key: s.adminKey });
    const refused = await as('DELETE', '/v1/session', { csrf: null });
    expect(refused.status).toBe(403);
    expect((await as('GET', '/v1/session')).status).toBe(200);
    const out = await as('DELETE', '/v1/session');
    expect(out.status, out.text).toBe(204);
    expect(sessionCookie(out)).toMatchObject({ value: '' });
    expect((await as('GET', '/v1/session')).status).toBe(401);
    expect((await as('GET', `/v1/projects/${s.project.id}`)).status).toBe(401);
    // Signing out again, or without a cookie, has nothing to end.
    expect((await as('DELETE', '/v1/session')).status).toBe(204);
    expect((await t.request('DELETE', '/v1/session')).status).toBe(204);
  });

  it('ends the session as soon as its key is revoked', async () => {
    const s = await t.seed();
    const second = await t.request('POST', `/v1/projects/${s.project.id}/keys`, { key: s.adminKey, body: { kind: 'admin', name: 'laptop' } });
    const { as } = await signIn({ key: second.body.key });
    expect((await as('GET', `/v1/projects/${s.project.id}`)).status).toBe(200);
    expect((await t.request('DELETE', `/v1/projects/${s.project.id}/keys/${second.body.id}`, { key: s.adminKey })).status).toBe(200);
    expect((await as('GET', '/v1/session')).status).toBe(401);
    expect((await as('GET', `/v1/projects/${s.project.id}`)).status).toBe(401);
    // A session can revoke its own key, and is signed out by doing so.
    const mine = await signIn({ key: s.adminKey });
    expect((await mine.as('DELETE', `/v1/projects/${s.project.id}/keys/${s.adminKeyId}`)).status).toBe(200);
    expect((await mine.as('GET', '/v1/session')).status).toBe(401);
  });

  it('ends the session at its expiry', async () => {
    const s = await t.seed();
    const { as } = await signIn({ key: s.adminKey });
    clock += 168 * HOUR - 1;
    expect((await as('GET', '/v1/session')).status).toBe(200);
    clock += 1;
    expect((await as('GET', '/v1/session')).status).toBe(401);
    expect((await as('GET', `/v1/projects/${s.project.id}`)).status).toBe(401);
  });

  it('signs in once with a one-time link, never twice and never after its expiry; revoking the link key ends those sessions', async () => {
    const s = await t.seed();
    const made = await t.ctx.sessions.createLink(s.project.id);
    expect(made.token).toMatch(/^ikl_[0-9A-Za-z]{43}$/);
    expect(made.expiresAt).toBe(clock + 15 * 60_000);
    const { res, as } = await signIn({ link: made.token });
    expect(res.body.projectId).toBe(s.project.id);
    expect((await as('GET', `/v1/analytics/${s.project.id}/agents`)).status).toBe(200);
    const again = await t.request('POST', '/v1/session', { body: { link: made.token } });
    expect(again.status).toBe(401);
    expect(again.body.error).toContain('inkwell dashboard');

    // The sessions act as one admin key per project, made by the first link and listed by name.
    const next = await t.ctx.sessions.createLink(s.project.id);
    const keys = (await t.request('GET', `/v1/projects/${s.project.id}/keys`, { key: s.adminKey })).body.keys;
    const linkKeys = keys.filter((k: { name: string }) => k.name === 'dashboard sign-in links');
    expect(linkKeys).toHaveLength(1);
    expect(linkKeys[0].kind).toBe('admin');

    clock += 15 * 60_000;
    expect((await t.request('POST', '/v1/session', { body: { link: next.token } })).status).toBe(401);

    const fresh = await signIn({ link: (await t.ctx.sessions.createLink(s.project.id)).token });
    expect((await t.request('DELETE', `/v1/projects/${s.project.id}/keys/${linkKeys[0].id}`, { key: s.adminKey })).status).toBe(200);
    expect((await fresh.as('GET', '/v1/session')).status).toBe(401);
    expect((await as('GET', '/v1/session')).status).toBe(401);
    // The next link makes a new link key.
    const after = await signIn({ link: (await t.ctx.sessions.createLink(s.project.id)).token });
    expect((await after.as('GET', '/v1/session')).status).toBe(200);
  });

  it('lets exactly one of two simultaneous uses of a link in', async () => {
    const s = await t.seed();
    const { token } = await t.ctx.sessions.createLink(s.project.id);
    const both = await Promise.all([0, 1, 2].map(() => t.request('POST', '/v1/session', { body: { link: token } })));
    expect(both.map((r) => r.status).sort()).toEqual([200, 401, 401]);
  });

  it('stores only hashes of session and link tokens', async () => {
    const s = await t.seed();
    const { token } = await t.ctx.sessions.createLink(s.project.id);
    const { cookie } = await signIn({ link: token });
    const rows = JSON.stringify([
      await t.testDb.db.kysely.selectFrom('dashboard_sessions').selectAll().execute(),
      await t.testDb.db.kysely.selectFrom('dashboard_signin_links').selectAll().execute(),
    ]);
    expect(rows).not.toContain(cookie.value.slice(4));
    expect(rows).not.toContain(token.slice(4));
  });
});

describe('dashboard sign-in rate limit', () => {
  it('limits sign-in attempts per client address with 429 and Retry-After', async () => {
    const t = await startJobsApp('sqlite', {}, { INKWELL_RATE_LIMIT_SIGN_IN: '3/1h' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await t.request('POST', '/v1/session', { body: { key: 'wrong' } })).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      const limited = await t.request('POST', '/v1/session', { body: { key: 'wrong' } });
      expect(limited.body.error).toContain('client address');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await t.close();
    }
  });
});
