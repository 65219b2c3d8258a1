// The webhook endpoints (GET/PUT/DELETE /v1/projects/{id}/webhook, GET …/webhook/deliveries) over real HTTP on
// both databases: the secret is shown once and never read back, refused URLs are a 400 naming `url`, the delivery
// log lists what was queued, and ingest keys or other projects' keys reach none of it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { testConfig } from '../../src/config.ts';
import { enqueueWebhook, startWebhookDispatcher } from '../../src/jobs/webhooks.ts';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { describeEachDialect } from '../helpers/db.ts';

describeEachDialect('webhook endpoints', (dialect) => {
  let t: TestApp;
  let strict: TestApp;
  let s: Seeded;
  let other: Seeded;
  const at = (seeded: Seeded, suffix = '') => `/v1/projects/${seeded.project.id}/webhook${suffix}`;

  beforeAll(async () => {
    // The receivers in these tests are on 127.0.0.1: allowed here, refused by the default (strict) server.
    t = await startTestApp(dialect, { webhooks: { ...testConfig().webhooks, allowPrivate: true, pollIntervalMs: 20, retryScheduleMs: [60_000] } });
    strict = await startTestApp(dialect);
    s = await t.seed();
    other = await t.seed({ name: 'Other' });
  });
  afterAll(async () => {
    await t?.close();
    await strict?.close();
  });

  it('sets a webhook (a new whsec_ secret, shown once), reads it back without the secret, and removes it', async () => {
    expect((await t.request('GET', at(s), { key: s.adminKey })).body).toEqual({ webhook: null });
    const set = await t.request('PUT', at(s), { key: s.adminKey, body: { url: 'http://127.0.0.1:9/hooks#frag' } });
    expect(set.status, set.text).toBe(200);
    expect(set.body.url).toBe('http://127.0.0.1:9/hooks');
    expect(set.body.secret).toMatch(/^whsec_/);
    const got = await t.request('GET', at(s), { key: s.adminKey });
    expect(got.body).toEqual({ webhook: { url: 'http://127.0.0.1:9/hooks' } });
    expect(got.text).not.toContain(set.body.secret);
    const again = await t.request('PUT', at(s), { key: s.adminKey, body: { url: 'http://127.0.0.1:9/hooks' } });
    expect(again.body.secret).not.toBe(set.body.secret);
    expect((await t.request('DELETE', at(s), { key: s.adminKey })).body).toEqual({ removed: true });
    expect((await t.request('DELETE', at(s), { key: s.adminKey })).body).toEqual({ removed: false });
    expect((await t.request('GET', at(s), { key: s.adminKey })).body).toEqual({ webhook: null });
  });

  it('refuses bad and private URLs with a 400 naming url', async () => {
    const p = await strict.seed();
    for (const url of ['ftp://example.com/x', 'not a url', 'https://user:pw@example.com/', 'http://127.0.0.1:9/hooks', 'http://[::1]/']) {
      const res = await strict.request('PUT', `/v1/projects/${p.project.id}/webhook`, { key: p.adminKey, body: { url } });
      expect(res.status, url).toBe(400);
      expect(res.body.details[0].path).toBe('url');
    }
    const unknownField = await strict.request('PUT', `/v1/projects/${p.project.id}/webhook`, {
      key: p.adminKey,
      body: { url: 'https://example.com', secret: 'x' },
    });
    expect(unknownField.status).toBe(400);
    expect((await strict.request('GET', `/v1/projects/${p.project.id}/webhook`, { key: p.adminKey })).body).toEqual({ webhook: null });
  });

  it('lists the delivery log, newest first, filtered by status and limited', async () => {
    await t.request('PUT', at(s), { key: s.adminKey, body: { url: 'http://127.0.0.1:9/hooks' } });
    const base = Date.UTC(2026, 10, 25, 10);
    for (let i = 0; i < 3; i++) await enqueueWebhook(t.ctx.db, s.project.id, { type: 'job.completed', data: { job: { id: `job_${i}` } } }, base + i * 1000);
    const all = await t.request('GET', at(s, '/deliveries'), { key: s.adminKey });
    expect(all.status, all.text).toBe(200);
    expect(all.body.deliveries).toHaveLength(3);
    expect(all.body.deliveries.map((d: { createdAt: string }) => d.createdAt)).toEqual([2, 1, 0].map((i) => new Date(base + i * 1000).toISOString()));
    expect(all.body.deliveries[0]).toMatchObject({ eventType: 'job.completed', status: 'pending', attempts: 0 });
    expect((await t.request('GET', at(s, '/deliveries?limit=1'), { key: s.adminKey })).body.deliveries).toHaveLength(1);
    expect((await t.request('GET', at(s, '/deliveries?status=delivered'), { key: s.adminKey })).body.deliveries).toEqual([]);
    for (const qs of ['limit=0', 'limit=501', 'status=lost'])
      expect((await t.request('GET', at(s, `/deliveries?${qs}`), { key: s.adminKey })).status, qs).toBe(400);
  });

  it('redelivers a finished delivery with the same webhook-id; refuses pending ones, unknown ones and other projects’', async () => {
    const received: { id: string; status: number }[] = [];
    let answer = 500;
    const receiver = http.createServer((req, res) => {
      received.push({ id: String(req.headers['webhook-id']), status: answer });
      req.resume();
      req.on('end', () => res.writeHead(answer).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const p = await t.seed({ name: 'Redeliver' });
    await t.request('PUT', `/v1/projects/${p.project.id}/webhook`, {
      key: p.adminKey,
      body: { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` },
    });
    await enqueueWebhook(t.ctx.db, p.project.id, { type: 'job.failed', data: { job: { id: 'job_r' } } });
    const log = async () => (await t.request('GET', `/v1/projects/${p.project.id}/webhook/deliveries`, { key: p.adminKey })).body.deliveries[0];
    const waitFor = async (status: string) => {
      for (let i = 0; i < 500 && (await log()).status !== status; i++) await new Promise((r) => setTimeout(r, 20));
      return log();
    };
    const redeliver = (id: string, key = p.adminKey, project = p.project.id) =>
      t.request('POST', `/v1/projects/${project}/webhook/deliveries/${id}/redeliver`, { key });
    const id = (await log()).id;
    // Pending (queued, not yet tried): refused, it is retried on its own.
    const pending = await redeliver(id);
    expect(pending.status).toBe(409);
    expect(pending.body.code).toBe('conflict');

    const dispatcher = startWebhookDispatcher(t.ctx);
    try {
      // The receiver answers 500 and the next retry is a minute away: the row is then marked failed, as the
      // retry policy does once its window is over.
      for (let i = 0; i < 500 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(received[0]).toEqual({ id, status: 500 });
      await t.ctx.db.kysely.updateTable('webhook_deliveries').set({ status: 'failed', next_attempt_at: null }).where('id', '=', id).execute();
      answer = 204;
      const res = await redeliver(id);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ id, status: 'pending', attempts: 0 });
      const done = await waitFor('delivered');
      expect(done).toMatchObject({ id, status: 'delivered', attempts: 1, lastStatusCode: 204 });
      expect(received.at(-1)).toEqual({ id, status: 204 });
    } finally {
      await dispatcher.stop();
      receiver.close();
    }
    expect((await redeliver('whd_unknown')).status).toBe(404);
    // Another project's delivery, through this project's path and key: not found.
    const mine = (await t.request('GET', at(s, '/deliveries'), { key: s.adminKey })).body.deliveries[0];
    expect((await redeliver(mine.id)).body.code).toBe('not_found');
    expect((await redeliver(id, p.ingestKey)).status).toBe(403);
    // Without a webhook there is nowhere to send it.
    await t.request('DELETE', `/v1/projects/${p.project.id}/webhook`, { key: p.adminKey });
    const none = await redeliver(id);
    expect(none.status).toBe(409);
    expect(none.body.error).toMatch(/no webhook/);
  });

  it('ingest keys get 403 and another project’s admin key 404 on every webhook endpoint', async () => {
    for (const key of [s.ingestKey, s.ingestSecretKey]) {
      expect((await t.request('GET', at(s), { key })).status).toBe(403);
      expect((await t.request('PUT', at(s), { key, body: { url: 'http://127.0.0.1:9/x' } })).status).toBe(403);
      expect((await t.request('DELETE', at(s), { key })).status).toBe(403);
      expect((await t.request('GET', at(s, '/deliveries'), { key })).status).toBe(403);
    }
    expect((await t.request('GET', at(s), { key: other.adminKey })).status).toBe(404);
    expect((await t.request('PUT', at(s), { key: other.adminKey, body: { url: 'http://127.0.0.1:9/x' } })).status).toBe(404);
    expect((await t.request('GET', at(s))).status).toBe(401);
  });
});
