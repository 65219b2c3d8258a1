// Ingest keys cannot forge history: a public ingest key (ink_pub_…) may not set an event's `timestamp`,
// `visitorId`, `ip` or `userAgent` (the server's clock and the request's IP + User-Agent decide); an ingest-secret key (ink_ing_…) may, and
// is refused (403) everywhere but the ingest endpoints. Real HTTP on both dialects, a fixed server clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey, keyKindOf, keyPrefix } from '../../src/lib/ids.ts';
import { scrubSecrets } from '../../src/lib/logger.ts';
import { runCli, runJson } from '../cli/run-cli.ts';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';

const NOW = Date.parse('2026-05-10T12:00:00Z');
const UA = 'Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/125.0';

describeEachDialect('ingest keys', (dialect) => {
  let t: TestApp;
  let s: Seeded;
  let other: Seeded;
  beforeAll(async () => {
    t = await startTestApp(dialect, {}, {}, { now: () => NOW });
    s = await t.seed();
    other = await t.seed({ name: 'Other' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const events = (key: string, body: unknown, projectId = s.project.id) => t.request('POST', `/v1/analytics/${projectId}/events`, { key, body });
  const collect = (body: unknown) =>
    t.request('POST', '/v1/collect', { raw: JSON.stringify(body), headers: { 'content-type': 'text/plain', 'user-agent': UA } });
  const visitors = async (query: string) => {
    const r = await t.request('GET', `/v1/analytics/${s.project.id}/visitors?limit=250&${query}`, { key: s.adminKey });
    expect(r.status, r.text).toBe(200);
    return r.body as { totals: { total: number }; visitors: { path: string; total: number; human: number }[] };
  };

  const forged = { timestamp: '2020-01-01T00:00:00Z', visitorId: 'chosen-visitor', ip: '198.51.100.7', userAgent: 'GPTBot/1.0' } as const;
  for (const field of ['timestamp', 'visitorId', 'ip', 'userAgent'] as const) {
    const value = forged[field];
    it(`a public ingest key sending "${field}" → 400 field_not_allowed naming the field; nothing is stored or charged`, async () => {
      const r = await events(s.ingestKey, {
        events: [{ path: '/ok' }, { path: `/forged-${field}`, [field]: value }],
      });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('field_not_allowed');
      expect(r.body.error).toContain(`"${field}"`);
      expect(r.body.details).toEqual([{ path: `events.1.${field}`, message: expect.stringContaining(field) }]);
      expect(r.headers.get('ratelimit-remaining')).toBeNull();

      const beacon = await collect({ projectId: s.project.id, key: s.ingestKey, events: [{ path: `/forged-beacon-${field}`, [field]: value }] });
      expect(beacon.status).toBe(400);
      expect(beacon.body.code).toBe('field_not_allowed');
      expect(beacon.body.details[0].path).toBe(`events.0.${field}`);

      const all = await visitors('');
      expect(all.visitors.map((v) => v.path).filter((p) => p.startsWith('/forged') || p === '/ok')).toEqual([]);
    });
  }

  it('a public ingest key without them → 202; the event time is the server clock and the visitor comes from the request (IP + User-Agent)', async () => {
    const send = (ua: string) =>
      t.request('POST', `/v1/analytics/${s.project.id}/events`, {
        key: s.ingestKey,
        body: { events: [{ path: '/public' }, { path: '/public' }] },
        headers: { 'user-agent': ua },
      });
    const r = await send(UA);
    expect(r.status, r.text).toBe(202);
    expect(r.body).toEqual({ accepted: 2, rejected: [] });
    // Another browser on the same address is another visitor.
    expect((await send(`${UA} Other/1`)).status).toBe(202);
    const beacon = await collect({ projectId: s.project.id, key: s.ingestKey, events: [{ path: '/public-beacon' }] });
    expect(beacon.status, beacon.text).toBe(202);
    // Counted on the server's day (2026-05-10): two visitors (one address, two user agents), both human.
    const today = await visitors('dateFrom=2026-05-10&dateTo=2026-05-11');
    expect(today.visitors.find((v) => v.path === '/public')).toMatchObject({ total: 2, human: 2 });
    expect(today.visitors.find((v) => v.path === '/public-beacon')).toMatchObject({ total: 1 });
    const before = await visitors('dateTo=2026-05-10');
    expect(before.visitors.some((v) => v.path.startsWith('/public'))).toBe(false);
  });

  it('an ingest-secret key may set timestamp and visitorId (events and collect); the export counts them', async () => {
    const r = await events(s.ingestSecretKey, {
      events: [
        { path: '/history', timestamp: '2026-03-02T10:00:00Z', visitorId: 'v-1', userAgent: UA },
        { path: '/history', timestamp: '2026-03-02T11:00:00Z', visitorId: 'v-1', userAgent: UA },
        { path: '/history', timestamp: '2026-03-02T12:00:00Z', visitorId: 'v-2', userAgent: UA },
        { path: '/history', timestamp: '2026-03-03T12:00:00Z', visitorId: 'v-3', userAgent: UA },
      ],
    });
    expect(r.status, r.text).toBe(202);
    expect(r.body).toEqual({ accepted: 4, rejected: [] });
    const beacon = await collect({
      projectId: s.project.id,
      key: s.ingestSecretKey,
      events: [{ path: '/history-beacon', timestamp: '2026-03-02T09:00:00Z', visitorId: 'v-9' }],
    });
    expect(beacon.status, beacon.text).toBe(202);
    const day = await visitors('dateFrom=2026-03-02&dateTo=2026-03-03');
    expect(day.visitors.find((v) => v.path === '/history')).toMatchObject({ human: 2, total: 2 });
    expect(day.visitors.find((v) => v.path === '/history-beacon')).toMatchObject({ total: 1 });
    const both = await visitors('dateFrom=2026-03-02&dateTo=2026-03-04');
    expect(both.visitors.find((v) => v.path === '/history')).toMatchObject({ total: 3 });
    const views = await t.request('GET', `/v1/analytics/${s.project.id}/views?dateFrom=2026-03-02&dateTo=2026-03-04`, { key: s.adminKey });
    expect(views.body.views.find((v: { path: string }) => v.path === '/history')).toMatchObject({ total: 4 });
  });

  it('the admin key keeps setting timestamp and visitorId', async () => {
    const r = await events(s.adminKey, { events: [{ path: '/admin-history', timestamp: '2026-03-05T10:00:00Z', visitorId: 'a-1' }] });
    expect(r.status, r.text).toBe(202);
    expect((await visitors('dateFrom=2026-03-05&dateTo=2026-03-06')).visitors.map((v) => v.path)).toContain('/admin-history');
  });

  it('an ingest-secret key gets 403 forbidden on every admin endpoint', async () => {
    const p = s.project.id;
    const calls: [string, string, unknown?][] = [
      ['GET', `/v1/analytics/${p}/visitors`],
      ['GET', `/v1/analytics/${p}/views`],
      ['GET', `/v1/projects/${p}`],
      ['GET', `/v2/agent/${p}/jobs`],
      ['POST', `/v2/agent/${p}/job`, { prompt: 'x' }],
      ['GET', `/v2/agent/${p}/job/job_x`],
      ['POST', `/v2/agent/${p}/job/job_x/message`, { prompt: 'x' }],
      ['POST', `/v2/agent/${p}/job/job_x/archive`],
      ['GET', `/v2/agent/${p}/job/job_x/events`],
    ];
    for (const [method, path, body] of calls) {
      const r = await t.request(method, path, { key: s.ingestSecretKey, ...(body ? { body } : {}) });
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(403);
      expect(r.body.code).toBe('forbidden');
    }
  });

  it('unknown, malformed or revoked ingest-secret keys → 401; another project’s → 404', async () => {
    const unknown = await events(`ink_ing_${'A'.repeat(40)}`, { events: [{ path: '/a' }] });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get('www-authenticate')).toBe('Bearer');
    expect((await events('ink_ing_short', { events: [{ path: '/a' }] })).status).toBe(401);
    expect((await collect({ projectId: s.project.id, key: `ink_ing_${'A'.repeat(40)}`, events: [{ path: '/a' }] })).status).toBe(401);
    expect((await events(other.ingestSecretKey, { events: [{ path: '/a' }] })).status).toBe(404);

    const extra = await t.ctx.projects.createKey({ projectId: s.project.id, kind: 'ingest-secret' });
    expect((await events(extra.key, { events: [{ path: '/a', timestamp: '2026-03-01T00:00:00Z' }] })).status).toBe(202);
    await t.ctx.projects.revokeKey(extra.id);
    expect((await events(extra.key, { events: [{ path: '/a' }] })).status).toBe(401);
    expect((await collect({ projectId: s.project.id, key: extra.key, events: [{ path: '/a' }] })).status).toBe(401);
  });

  it('the OpenAPI document says which key may set timestamp and visitorId', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    const ingest = doc.paths['/v1/analytics/{projectId}/events'].post;
    expect(ingest.description).toMatch(/ingest-secret/);
    expect(ingest.description).toMatch(/field_not_allowed/);
    expect(doc.components.securitySchemes.bearerAuth.description).toMatch(/ink_ing_/);
  });
});

describe('ingest-secret key format', () => {
  it('is ink_ing_ + 40 base62, its own kind, listed by a 12-character prefix, and scrubbed from logs', () => {
    const k = generateKey('ingest-secret');
    expect(k).toMatch(/^ink_ing_[0-9A-Za-z]{40}$/);
    expect(keyKindOf(k)).toBe('ingest-secret');
    expect(keyKindOf(generateKey('ingest'))).toBe('ingest');
    expect(keyKindOf(generateKey('admin'))).toBe('admin');
    expect(keyKindOf(`ink_ing_${'a'.repeat(32)}`)).toBeNull();
    expect(keyPrefix(k)).toBe(k.slice(0, 12));
    expect(scrubSecrets(`key ${k}.`)).toBe('key ink_ing_[redacted].');
  });
});

describeEachDialect('inkwell key create --kind ingest-secret', (dialect) => {
  let db: TestDb;
  beforeAll(async () => {
    db = await openTestDb(dialect);
  });
  afterAll(async () => db?.cleanup());

  it('creates the key (printed once) and key list shows its kind', async () => {
    const env = db.env;
    const project = await runJson(['project', 'create', '--name', 'Docs', '--repository', 'https://github.com/acme/docs'], env);
    const created = await runJson(['key', 'create', '--project', project.id, '--kind', 'ingest-secret', '--name', 'edge'], env);
    expect(created).toMatchObject({ kind: 'ingest-secret', name: 'edge', projectId: project.id, prefix: created.key.slice(0, 12) });
    expect(created.key).toMatch(/^ink_ing_[0-9A-Za-z]{40}$/);
    const [listed, table, text] = await Promise.all([
      runJson(['key', 'list', '--project', project.id], env),
      runCli(['key', 'list', '--project', project.id], env),
      runCli(['key', 'create', '--project', project.id, '--kind', 'ingest-secret'], env),
    ]);
    expect(listed.keys).toContainEqual(expect.objectContaining({ id: created.id, kind: 'ingest-secret', name: 'edge' }));
    expect(JSON.stringify(listed)).not.toContain(created.key);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/ingest-secret/);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/Created ingest-secret key key_\w+ for prj_\w+\./);
  }, 120_000);
});
