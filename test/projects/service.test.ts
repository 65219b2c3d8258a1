// Projects and keys over a real database (both dialects): creation, listing, revocation, verification.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ADMIN_KEY_RE, base62, generateKey, hashKey, INGEST_KEY_RE, keyKindOf, keyPrefix } from '../../src/lib/ids.ts';
import { createProjectService, NotFoundError, ProjectInputError, type ProjectService } from '../../src/projects/service.ts';
import { createProjectsStore } from '../../src/projects/store.ts';
import { validateProjectInput } from '../../src/projects/validate.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';

describeEachDialect('project service', (dialect) => {
  let t: TestDb;
  let svc: ProjectService;
  let now: number;
  beforeEach(async () => {
    t = await openTestDb(dialect);
    now = Date.UTC(2026, 10, 21, 8, 0, 0);
    svc = createProjectService(createProjectsStore(t.db.kysely), () => now);
  });
  afterEach(async () => t.cleanup());

  it('creates and lists projects with defaults, without the visitor secret', async () => {
    const p = await svc.createProject({ name: ' Docs ', repository: 'https://github.com/acme/docs' });
    expect(p).toEqual({
      id: expect.stringMatching(/^prj_[0-9A-Za-z]{12}$/),
      name: 'Docs',
      repository: 'https://github.com/acme/docs',
      ref: 'main',
      model: null,
      settings: { visitorIdRotation: 'none' },
      createdAt: '2026-11-21T08:00:00.000Z',
    });
    now += 1;
    const q = await svc.createProject({ name: 'Two', repository: '/srv/repo', ref: 'develop', model: 'openai/gpt-5' });
    const list = await svc.listProjects();
    expect(list.map((x) => x.id)).toEqual([p.id, q.id]);
    expect(list[1]).toMatchObject({ ref: 'develop', model: 'openai/gpt-5' });
    expect(JSON.stringify(list)).not.toMatch(/visitorSecret/);
    const full = await svc.getProject(p.id);
    expect(full?.visitorSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(await svc.getProject('prj_nope')).toBeUndefined();
  });

  it('creates admin and ingest keys of the specified shape, storing only a hash', async () => {
    const p = await svc.createProject({ name: 'Docs', repository: 'https://github.com/acme/docs' });
    const admin = await svc.createKey({ projectId: p.id, kind: 'admin', name: 'ci' });
    const ingest = await svc.createKey({ projectId: p.id, kind: 'ingest' });
    expect(admin.key).toMatch(/^ink_[0-9A-Za-z]{40}$/);
    expect(ingest.key).toMatch(/^ink_pub_[0-9A-Za-z]{32}$/);
    expect(admin).toMatchObject({ kind: 'admin', name: 'ci', prefix: admin.key.slice(0, 8), lastUsedAt: null, revokedAt: null, projectId: p.id });
    expect(ingest).toMatchObject({ kind: 'ingest', name: 'ingest', prefix: ingest.key.slice(0, 12) });
    const rows = await t.db.kysely.selectFrom('api_keys').selectAll().execute();
    expect(rows).toHaveLength(2);
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(admin.key);
    expect(dump).not.toContain(ingest.key);
    expect(rows.find((r) => r.id === admin.id)?.hash).toBe(hashKey(admin.key));
    const listed = await svc.listKeys(p.id);
    expect(listed.map((k) => k.id).sort()).toEqual([admin.id, ingest.id].sort());
    expect(JSON.stringify(listed)).not.toContain(admin.key);
  });

  it('authenticates keys; malformed, unknown, revoked and kind-mismatched keys are refused', async () => {
    const p = await svc.createProject({ name: 'Docs', repository: 'https://github.com/acme/docs' });
    const admin = await svc.createKey({ projectId: p.id, kind: 'admin' });
    const ingest = await svc.createKey({ projectId: p.id, kind: 'ingest' });
    expect(await svc.authenticate(admin.key)).toEqual({ keyId: admin.id, projectId: p.id, kind: 'admin' });
    expect(await svc.authenticate(ingest.key)).toEqual({ keyId: ingest.id, projectId: p.id, kind: 'ingest' });
    expect(await svc.authenticate('')).toBeNull();
    expect(await svc.authenticate(`${admin.key}x`)).toBeNull();
    expect(await svc.authenticate(generateKey('admin'))).toBeNull();
    // A row whose stored kind differs from the key's shape is refused.
    await t.db.kysely.updateTable('api_keys').set({ kind: 'ingest' }).where('id', '=', admin.id).execute();
    expect(await svc.authenticate(admin.key)).toBeNull();
    await t.db.kysely.updateTable('api_keys').set({ kind: 'admin' }).where('id', '=', admin.id).execute();
    const revoked = await svc.revokeKey(admin.id);
    expect(revoked.revokedAt).toBe('2026-11-21T08:00:00.000Z');
    expect(await svc.authenticate(admin.key)).toBeNull();
    // Revoking again keeps the first revocation time.
    now += 5000;
    expect((await svc.revokeKey(admin.id)).revokedAt).toBe('2026-11-21T08:00:00.000Z');
  });

  it('records last use, writing at most once a minute per key', async () => {
    const p = await svc.createProject({ name: 'Docs', repository: 'https://github.com/acme/docs' });
    const k = await svc.createKey({ projectId: p.id, kind: 'admin' });
    const lastUsed = async () => (await svc.listKeys(p.id))[0]?.lastUsedAt;
    await svc.authenticate(k.key);
    expect(await lastUsed()).toBe('2026-11-21T08:00:00.000Z');
    now += 30_000;
    await svc.authenticate(k.key);
    expect(await lastUsed()).toBe('2026-11-21T08:00:00.000Z');
    now += 30_000;
    await svc.authenticate(k.key);
    expect(await lastUsed()).toBe('2026-11-21T08:01:00.000Z');
    // Another service instance (another process) reads the stored time and keeps the throttle.
    const other = createProjectService(createProjectsStore(t.db.kysely), () => now + 10_000);
    await other.authenticate(k.key);
    expect(await lastUsed()).toBe('2026-11-21T08:01:00.000Z');
  });

  it('reports unknown projects and keys', async () => {
    await expect(svc.createKey({ projectId: 'prj_nope', kind: 'admin' })).rejects.toThrow(NotFoundError);
    await expect(svc.listKeys('prj_nope')).rejects.toThrow(/Project prj_nope not found/);
    await expect(svc.revokeKey('key_nope')).rejects.toThrow(/Key key_nope not found/);
    await expect(svc.updateSettings('prj_nope', {})).rejects.toThrow(NotFoundError);
  });

  it('refuses bad project input naming the field', async () => {
    await expect(svc.createProject({ name: '', repository: 'x' })).rejects.toThrow(ProjectInputError);
    await expect(svc.createProject({ name: 'a', repository: 'x', model: 'claude' })).rejects.toMatchObject({ field: 'model' });
    expect(await svc.listProjects()).toEqual([]);
  });

  it('merges settings updates', async () => {
    const p = await svc.createProject({ name: 'Docs', repository: 'https://github.com/acme/docs' });
    await svc.updateSettings(p.id, { visitorIdRotation: 'daily' });
    const s = await svc.updateSettings(p.id, { webhook: { url: 'https://h.example.com', secret: 's' } });
    expect(s).toEqual({ visitorIdRotation: 'daily', webhook: { url: 'https://h.example.com', secret: 's' } });
    expect((await svc.getProject(p.id))?.settings).toEqual(s);
  });
});

describe('key and id helpers', () => {
  it('generate base62 of the requested length from the full alphabet', () => {
    const s = Array.from({ length: 50 }, () => base62(40)).join('');
    expect(s).toMatch(/^[0-9A-Za-z]+$/);
    expect(new Set(s).size).toBeGreaterThan(55);
    expect(base62(0)).toBe('');
    expect(base62(7)).toHaveLength(7);
  });

  it('classify keys by shape', () => {
    const a = generateKey('admin');
    const i = generateKey('ingest');
    expect(a).toMatch(ADMIN_KEY_RE);
    expect(i).toMatch(INGEST_KEY_RE);
    expect(keyKindOf(a)).toBe('admin');
    expect(keyKindOf(i)).toBe('ingest');
    expect(keyKindOf(`ink_${'a'.repeat(39)}`)).toBeNull();
    expect(keyKindOf(`ink_pub_${'a'.repeat(40)}`)).toBeNull();
    expect(keyKindOf(`ink_${'a'.repeat(39)}-`)).toBeNull();
    expect(keyPrefix(a)).toBe(a.slice(0, 8));
    expect(keyPrefix(i)).toBe(i.slice(0, 12));
  });
});

describe('validateProjectInput', () => {
  const ok = { name: 'Docs', repository: 'https://github.com/acme/docs' };
  it('accepts URLs, local paths and branch names', () => {
    expect(validateProjectInput({ ...ok, ref: 'release/2026.11' }).ref).toBe('release/2026.11');
    expect(validateProjectInput({ ...ok, repository: '/srv/git/docs' }).repository).toBe('/srv/git/docs');
    expect(validateProjectInput({ ...ok, repository: 'file:///srv/git/docs' }).repository).toBe('file:///srv/git/docs');
    expect(validateProjectInput({ ...ok, repository: 'git@github.com:acme/docs.git' }).repository).toBe('git@github.com:acme/docs.git');
    expect(validateProjectInput({ ...ok, model: 'openai-compatible/qwen2.5:7b' }).model).toBe('openai-compatible/qwen2.5:7b');
  });
  const bad: [Partial<typeof ok> & { ref?: string; model?: string }, string][] = [
    [{ name: '  ' }, 'name'],
    [{ name: 'x'.repeat(201) }, 'name'],
    [{ repository: '' }, 'repository'],
    [{ repository: 'https://user:tok@github.com/acme/docs' }, 'repository'],
    [{ repository: 'javascript://x' }, 'repository'],
    [{ ref: 'a..b' }, 'ref'],
    [{ ref: '-x' }, 'ref'],
    [{ ref: 'has space' }, 'ref'],
    [{ ref: 'x.lock' }, 'ref'],
    [{ ref: 'tab\there' }, 'ref'],
    [{ model: 'gpt-5' }, 'model'],
  ];
  for (const [patch, field] of bad) {
    it(`refuses ${JSON.stringify(patch)} naming ${field}`, () => {
      expect(() => validateProjectInput({ ...ok, ...patch })).toThrow(expect.objectContaining({ field, message: expect.stringContaining(field) }));
    });
  }
});
