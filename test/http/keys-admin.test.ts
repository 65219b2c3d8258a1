// The key admin endpoints (GET/POST /v1/projects/{id}/keys, DELETE …/keys/{keyId}) over real HTTP on both
// databases: a new key is shown once and works at once, a list never carries a key or its hash, a revoked key is
// refused from the next request on, and neither ingest keys nor other projects' keys reach any of it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';

describeEachDialect('key admin endpoints', (dialect) => {
  let t: TestApp;
  let s: Seeded;
  let other: Seeded;
  const keys = (seeded: Seeded, key = seeded.adminKey) => t.request('GET', `/v1/projects/${seeded.project.id}/keys`, { key });

  beforeAll(async () => {
    t = await startTestApp(dialect);
    s = await t.seed();
    other = await t.seed({ name: 'Other' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('lists every key of the project with its kind, name and prefix, never the key or its hash', async () => {
    const res = await keys(s);
    expect(res.status, res.text).toBe(200);
    expect(res.body.keys.map((k: { kind: string }) => k.kind).sort()).toEqual(['admin', 'ingest', 'ingest-secret']);
    for (const k of res.body.keys) {
      expect(Object.keys(k).sort()).toEqual(['createdAt', 'id', 'kind', 'lastUsedAt', 'name', 'prefix', 'revokedAt']);
      expect(s.adminKey.startsWith(k.prefix) || s.ingestKey.startsWith(k.prefix) || s.ingestSecretKey.startsWith(k.prefix)).toBe(true);
    }
    for (const secret of [s.adminKey, s.ingestKey, s.ingestSecretKey]) expect(res.text).not.toContain(secret.slice(12));
    const admin = res.body.keys.find((k: { kind: string }) => k.kind === 'admin');
    expect(admin.lastUsedAt).not.toBeNull();
  });

  it('creates a key shown once, which works at once and is listed without its secret', async () => {
    const created = await t.request('POST', `/v1/projects/${s.project.id}/keys`, { key: s.adminKey, body: { kind: 'ingest', name: 'docs tracker' } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ kind: 'ingest', name: 'docs tracker', revokedAt: null, lastUsedAt: null });
    expect(created.body.key).toMatch(/^ink_pub_[0-9A-Za-z]{32}$/);
    expect(created.body.key.startsWith(created.body.prefix)).toBe(true);
    const sent = await t.request('POST', '/v1/collect', {
      body: { projectId: s.project.id, key: created.body.key, events: [{ path: '/docs' }] },
      headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0' },
    });
    expect(sent.status, sent.text).toBe(202);
    const listed = await keys(s);
    expect(listed.body.keys.find((k: { id: string }) => k.id === created.body.id)).toEqual({ ...created.body, key: undefined, lastUsedAt: expect.any(String) });
    expect(listed.text).not.toContain(created.body.key);

    const admin = await t.request('POST', `/v1/projects/${s.project.id}/keys`, { key: s.adminKey, body: { kind: 'admin' } });
    expect(admin.body).toMatchObject({ kind: 'admin', name: 'admin' });
    expect((await t.request('GET', `/v1/projects/${s.project.id}`, { key: admin.body.key })).status).toBe(200);
  });

  it('refuses a bad body with a 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ kind: 'root' }, 'kind'],
      [{}, 'kind'],
      [{ kind: 'admin', name: '' }, 'name'],
      [{ kind: 'admin', name: 'x'.repeat(101) }, 'name'],
      [{ kind: 'admin', extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const res = await t.request('POST', `/v1/projects/${s.project.id}/keys`, { key: s.adminKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(res.body.details ?? res.body.error)).toContain(field);
    }
  });

  it('revokes a key: refused from the next request on; revoking again returns it unchanged', async () => {
    const created = await t.request('POST', `/v1/projects/${s.project.id}/keys`, { key: s.adminKey, body: { kind: 'admin', name: 'temporary' } });
    const use = () => t.request('GET', `/v1/projects/${s.project.id}`, { key: created.body.key });
    expect((await use()).status).toBe(200);
    const revoked = await t.request('DELETE', `/v1/projects/${s.project.id}/keys/${created.body.id}`, { key: s.adminKey });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    expect((await use()).status).toBe(401);
    const again = await t.request('DELETE', `/v1/projects/${s.project.id}/keys/${created.body.id}`, { key: s.adminKey });
    expect(again.body).toEqual(revoked.body);
  });

  it('a key can revoke itself', async () => {
    const created = await t.request('POST', `/v1/projects/${s.project.id}/keys`, { key: s.adminKey, body: { kind: 'admin', name: 'self' } });
    const res = await t.request('DELETE', `/v1/projects/${s.project.id}/keys/${created.body.id}`, { key: created.body.key });
    expect(res.status).toBe(200);
    expect((await keys(s, created.body.key)).status).toBe(401);
  });

  it('unknown keys and keys of another project are 404 key_not_found, and stay untouched', async () => {
    const unknown = await t.request('DELETE', `/v1/projects/${s.project.id}/keys/key_doesnotexist`, { key: s.adminKey });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('key_not_found');
    const theirs = (await keys(other)).body.keys.find((k: { kind: string }) => k.kind === 'admin');
    const cross = await t.request('DELETE', `/v1/projects/${s.project.id}/keys/${theirs.id}`, { key: s.adminKey });
    expect(cross.status).toBe(404);
    expect(cross.body.code).toBe('key_not_found');
    expect((await t.request('GET', `/v1/projects/${other.project.id}`, { key: other.adminKey })).status).toBe(200);
  });

  it('ingest keys get 403 and another project’s admin key 404 on every key endpoint', async () => {
    for (const key of [s.ingestKey, s.ingestSecretKey]) {
      expect((await keys(s, key)).status).toBe(403);
      expect((await t.request('POST', `/v1/projects/${s.project.id}/keys`, { key, body: { kind: 'admin' } })).status).toBe(403);
      expect((await t.request('DELETE', `/v1/projects/${s.project.id}/keys/key_x`, { key })).status).toBe(403);
    }
    expect((await keys(s, other.adminKey)).status).toBe(404);
    expect((await t.request('POST', `/v1/projects/${s.project.id}/keys`, { key: other.adminKey, body: { kind: 'admin' } })).status).toBe(404);
    expect((await t.request('GET', `/v1/projects/${s.project.id}/keys`)).status).toBe(401);
  });
});
