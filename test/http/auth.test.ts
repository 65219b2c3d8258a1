// SPEC §1 auth rules over real HTTP, on both dialects, against GET /v1/projects/:projectId.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerToken } from '../../src/http/auth.ts';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';

const UNAUTHORIZED = { error: 'Unauthorized', code: 'unauthorized' };

describeEachDialect('auth', (dialect) => {
  let t: TestApp;
  let a: Seeded;
  let b: Seeded;
  beforeAll(async () => {
    t = await startTestApp(dialect);
    a = await t.seed({ name: 'A' });
    b = await t.seed({ name: 'B' });
  });
  afterAll(async () => t?.close());

  const path = () => `/v1/projects/${a.project.id}`;

  it('an admin key reads its own project, without secrets', async () => {
    const r = await t.request('GET', path(), { key: a.adminKey });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: a.project.id,
      name: 'A',
      repository: 'https://github.com/acme/docs',
      ref: 'main',
      model: null,
      settings: { visitorIdRotation: 'none', webhookUrl: null, allowedRepositories: [], budget: {}, codeHostHandle: null },
      createdAt: a.project.createdAt,
      key: { id: a.adminKeyId, kind: 'admin' },
    });
    expect(r.headers.get('x-request-id')).toBeTruthy();
    const p = await t.ctx.projects.getProject(a.project.id);
    expect(r.text).not.toContain(p!.visitorSecret);
    expect(r.text).not.toContain(a.adminKey);
  });

  it('never returns the webhook signing secret', async () => {
    await t.ctx.projects.updateSettings(b.project.id, { webhook: { url: 'https://hooks.example.com/x', secret: 'whsec_topsecretvalue' } });
    const r = await t.request('GET', `/v1/projects/${b.project.id}`, { key: b.adminKey });
    expect(r.status).toBe(200);
    expect(r.body.settings).toMatchObject({ visitorIdRotation: 'none', webhookUrl: 'https://hooks.example.com/x' });
    expect(r.text).not.toContain('whsec_topsecretvalue');
  });

  it('shows the allowed repositories, budget defaults and code-host handle (never the hook secret’s generation)', async () => {
    await t.ctx.projects.changeAllowedRepositories(b.project.id, { allow: ['https://GitHub.com/Acme/Site.git'], disallow: [] });
    await t.ctx.projects.updateSettings(b.project.id, {
      budget: { maxCostUsd: 1.5, dailyTokens: 100_000 },
      codeHostHook: { generation: 'g3n3r4t10n', handle: 'docs-bot' },
    });
    const r = await t.request('GET', `/v1/projects/${b.project.id}`, { key: b.adminKey });
    expect(r.body.settings).toMatchObject({
      allowedRepositories: ['https://github.com/acme/site'],
      budget: { maxCostUsd: 1.5, dailyTokens: 100_000 },
      codeHostHandle: 'docs-bot',
    });
    expect(r.text).not.toContain('g3n3r4t10n');
  });

  const bad: [string, () => Record<string, string>][] = [
    ['missing', () => ({})],
    ['Basic scheme', () => ({ authorization: `Basic ${Buffer.from(`user:${a.adminKey}`).toString('base64')}` })],
    ['Bearer alone', () => ({ authorization: 'Bearer' })],
    ['Bearer with a blank key', () => ({ authorization: 'Bearer   ' })],
    ['wrong scheme prefix', () => ({ authorization: `Token ${a.adminKey}` })],
    ['key without scheme', () => ({ authorization: a.adminKey })],
    ['two tokens', () => ({ authorization: `Bearer ${a.adminKey} extra` })],
    ['wrong key prefix', () => ({ authorization: `Bearer sk_${a.adminKey.slice(4)}` })],
    ['truncated key', () => ({ authorization: `Bearer ${a.adminKey.slice(0, -1)}` })],
    ['unknown well-formed admin key', () => ({ authorization: `Bearer ink_${'A'.repeat(40)}` })],
    ['unknown well-formed ingest key', () => ({ authorization: `Bearer ink_pub_${'A'.repeat(32)}` })],
  ];
  for (const [label, headers] of bad) {
    it(`401 with WWW-Authenticate for a ${label} key`, async () => {
      const r = await t.request('GET', path(), { headers: headers() });
      expect(r.status).toBe(401);
      expect(r.body).toEqual(UNAUTHORIZED);
      expect(r.headers.get('www-authenticate')).toBe('Bearer');
      expect(r.headers.get('x-request-id')).toBeTruthy();
    });
  }

  it('accepts the scheme name in any case (RFC 9110)', async () => {
    const r = await t.request('GET', path(), { headers: { authorization: `bearer ${a.adminKey}` } });
    expect(r.status).toBe(200);
  });

  it("a valid key on another project's path → 404 project_not_found, for existing and unknown projects alike", async () => {
    const other = await t.request('GET', `/v1/projects/${b.project.id}`, { key: a.adminKey });
    const unknown = await t.request('GET', '/v1/projects/prj_doesnotexist', { key: a.adminKey });
    for (const r of [other, unknown]) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'Project not found', code: 'project_not_found' });
    }
    // An ingest key on another project's admin path is also 404: nothing about the other project leaks.
    const ingestOther = await t.request('GET', `/v1/projects/${b.project.id}`, { key: a.ingestKey });
    expect(ingestOther.status).toBe(404);
    expect(ingestOther.body.code).toBe('project_not_found');
  });

  it('an ingest key on an admin endpoint → 403 forbidden', async () => {
    const r = await t.request('GET', path(), { key: a.ingestKey });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'This endpoint needs an admin key', code: 'forbidden' });
  });

  it('revocation takes effect on the very next request', async () => {
    const k = await t.ctx.projects.createKey({ projectId: a.project.id, kind: 'admin', name: 'temp' });
    expect((await t.request('GET', path(), { key: k.key })).status).toBe(200);
    await t.ctx.projects.revokeKey(k.id);
    const r = await t.request('GET', path(), { key: k.key });
    expect(r.status).toBe(401);
    expect(r.body).toEqual(UNAUTHORIZED);
    expect(r.headers.get('www-authenticate')).toBe('Bearer');
    // Other keys of the project keep working.
    expect((await t.request('GET', path(), { key: a.adminKey })).status).toBe(200);
  });

  it('records when a key was last used', async () => {
    const k = await t.ctx.projects.createKey({ projectId: a.project.id, kind: 'admin', name: 'fresh' });
    const before = (await t.ctx.projects.listKeys(a.project.id)).find((x) => x.id === k.id);
    expect(before?.lastUsedAt).toBeNull();
    const t0 = Date.now();
    expect((await t.request('GET', path(), { key: k.key })).status).toBe(200);
    const after = (await t.ctx.projects.listKeys(a.project.id)).find((x) => x.id === k.id);
    expect(after?.lastUsedAt).not.toBeNull();
    expect(Date.parse(after!.lastUsedAt!)).toBeGreaterThanOrEqual(t0 - 1000);
  });
});

describe('bearerToken', () => {
  it('parses exactly one token after the Bearer scheme', () => {
    expect(bearerToken('Bearer abc')).toBe('abc');
    expect(bearerToken('BEARER abc')).toBe('abc');
    expect(bearerToken('  Bearer   abc  ')).toBe('abc');
    expect(bearerToken(undefined)).toBeNull();
    expect(bearerToken('')).toBeNull();
    expect(bearerToken('Bearer')).toBeNull();
    expect(bearerToken('Bearer a b')).toBeNull();
    expect(bearerToken('Basic abc')).toBeNull();
    expect(bearerToken('Bearerabc')).toBeNull();
  });
});
