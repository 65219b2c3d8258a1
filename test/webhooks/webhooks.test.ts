import crypto from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { type Config, testConfig } from '../../src/config.ts';
import { createContext } from '../../src/context.ts';
import type { AppContext } from '../../src/http/context.ts';
import { createWebhookService, enqueueWebhook, startWebhookDispatcher, WebhookUrlError } from '../../src/jobs/webhooks.ts';
import { describeEachDialect, openTestDb, type TestDb } from '../helpers/db.ts';
import { eventually, type Receiver, startReceiver } from './receiver.ts';

/** Standard Webhooks verification written from the spec, independent of the library. */
function verifyIndependently(secret: string, headers: Record<string, string | string[] | undefined>, body: string): boolean {
  const id = headers['webhook-id'] as string;
  const ts = headers['webhook-timestamp'] as string;
  const sigs = (headers['webhook-signature'] as string).split(' ');
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = `v1,${crypto.createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64')}`;
  return sigs.some((s) => s.length === expected.length && crypto.timingSafeEqual(Buffer.from(s), Buffer.from(expected)));
}

interface Harness {
  t: TestDb;
  ctx: AppContext;
  logs: string[];
  projectId: string;
  stop: (() => Promise<void>)[];
}

function fastWebhooks(overrides: Partial<Config['webhooks']> = {}): Config['webhooks'] {
  return { allowPrivate: true, timeoutMs: 1000, retryScheduleMs: [150, 300], maxAgeMs: 60_000, pollIntervalMs: 20, ...overrides };
}

describeEachDialect('webhooks', (dialect) => {
  let h: Harness | undefined;
  let receiver: Receiver | undefined;

  async function setup(webhooks: Config['webhooks'] = fastWebhooks(), now: () => number = Date.now): Promise<Harness> {
    const t = await openTestDb(dialect);
    const logs: string[] = [];
    // No redaction here: the code itself must never hand the secret to the logger.
    const logger = pino(
      { level: 'trace' },
      new Writable({
        write(chunk, _enc, cb) {
          logs.push(String(chunk));
          cb();
        },
      }),
    );
    const ctx = createContext(testConfig({ webhooks }), t.db, logger, now);
    const project = await ctx.projects.createProject({ name: 'Docs', repository: 'https://github.com/acme/docs' });
    h = { t, ctx, logs, projectId: project.id, stop: [] };
    return h;
  }

  function dispatch(ctx: AppContext): void {
    const d = startWebhookDispatcher(ctx);
    h?.stop.push(() => d.stop());
  }

  afterEach(async () => {
    for (const s of h?.stop ?? []) await s();
    await receiver?.close();
    await h?.t.cleanup();
    h = undefined;
    receiver = undefined;
  });

  const job = (status: string) => ({ job: { id: 'job_abc', status, prLink: null, createdAt: '2026-01-01T00:00:00.000Z' } });
  const deliveries = (hh: Harness) => createWebhookService(hh.ctx).deliveries(hh.projectId);

  /**
   * Waits until attempt `n` of the project's only delivery is recorded. While an attempt is in flight its row
   * holds the claim's lease (now + timeout + 30 s) as next attempt; once recorded, a pending row holds the
   * retry time, which the schedules here keep far below 30 s.
   */
  const attemptRecorded = (hh: Harness, n: number) =>
    eventually(async () => {
      const [d] = await deliveries(hh);
      if (!d || d.attempts !== n) return null;
      if (d.status !== 'pending') return d;
      return d.nextAttemptAt && Date.parse(d.nextAttemptAt) < hh.ctx.now() + 30_000 ? d : null;
    });

  it('signs per Standard Webhooks and delivers once to a receiver that verifies the signature', async () => {
    const hh = await setup();
    receiver = await startReceiver([200]);
    const { secret, url } = await createWebhookService(hh.ctx).set(hh.projectId, receiver.url);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(url).toBe(receiver.url);

    const before = Date.now();
    await enqueueWebhook(hh.t.db, hh.projectId, { type: 'job.completed', data: job('completed') });
    dispatch(hh.ctx);
    await receiver.waitFor(1);
    const got = receiver.received[0];
    if (!got) throw new Error('no request');

    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['webhook-id']).toMatch(/^msg_[0-9A-Za-z]{24}$/);
    const ts = Number(got.headers['webhook-timestamp']);
    expect(ts).toBeGreaterThanOrEqual(Math.floor(before / 1000) - 1);
    expect(ts).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 1);
    expect(verifyIndependently(secret, got.headers, got.body)).toBe(true);
    // A different secret or a changed body must not verify.
    expect(verifyIndependently(`whsec_${crypto.randomBytes(32).toString('base64')}`, got.headers, got.body)).toBe(false);
    expect(verifyIndependently(secret, got.headers, got.body.replace('completed', 'failed'))).toBe(false);
    // The reference library agrees.
    expect(new Webhook(secret).verify(got.body, got.headers as Record<string, string>)).toMatchObject({ type: 'job.completed' });

    const payload = JSON.parse(got.body);
    expect(payload).toEqual({ type: 'job.completed', timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), data: job('completed') });

    const [d] = await eventually(async () => {
      const l = await deliveries(hh);
      return l[0]?.status === 'delivered' ? l : null;
    });
    expect(d).toMatchObject({
      id: got.headers['webhook-id'],
      eventType: 'job.completed',
      status: 'delivered',
      attempts: 1,
      lastStatusCode: 200,
      lastError: null,
      nextAttemptAt: null,
    });
    expect(d?.deliveredAt).not.toBeNull();
    await new Promise((r) => setTimeout(r, 150));
    expect(receiver.received).toHaveLength(1);
  });

  // The dispatcher's clock is the test's: an attempt comes due only when the test moves time to it, so the
  // schedule is checked exactly and a slow machine cannot run an attempt before the test has looked.
  it('retries a failing receiver with backoff and delivers exactly once more after it recovers', async () => {
    let clock = Date.UTC(2026, 0, 1, 12);
    const start = clock;
    const hh = await setup(fastWebhooks(), () => clock);
    receiver = await startReceiver([500, 503, 200]);
    await createWebhookService(hh.ctx).set(hh.projectId, receiver.url);
    await enqueueWebhook(hh.t.db, hh.projectId, { type: 'job.failed', data: job('failed') }, clock);
    dispatch(hh.ctx);

    const first = await attemptRecorded(hh, 1);
    expect(first).toMatchObject({ status: 'pending', lastStatusCode: 500, nextAttemptAt: new Date(start + 150).toISOString() });
    clock = start + 150;
    const mid = await attemptRecorded(hh, 2);
    expect(mid).toMatchObject({ status: 'pending', lastStatusCode: 503, lastError: expect.stringContaining('HTTP 503') });
    expect(mid.nextAttemptAt).toBe(new Date(start + 150 + 300).toISOString());
    expect(receiver.received).toHaveLength(2);

    clock = start + 450;
    const d = await attemptRecorded(hh, 3);
    expect(d).toMatchObject({ status: 'delivered', attempts: 3, lastStatusCode: 200, lastError: null, nextAttemptAt: null });
    expect(d.deliveredAt).toBe(new Date(start + 450).toISOString());
    // Same message id and byte-identical body on every attempt.
    expect(receiver.received).toHaveLength(3);
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    // Delivered: later rounds find nothing due, however far time moves.
    clock += 3_600_000;
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received).toHaveLength(3);
  });

  it('gives up after the maximum age and marks the delivery failed', async () => {
    let clock = Date.UTC(2026, 0, 1, 12);
    const start = clock;
    const hh = await setup(fastWebhooks({ retryScheduleMs: [50], maxAgeMs: 300 }), () => clock);
    receiver = await startReceiver([500]);
    await createWebhookService(hh.ctx).set(hh.projectId, receiver.url);
    await enqueueWebhook(hh.t.db, hh.projectId, { type: 'job.archived', data: job('archived') }, clock);
    dispatch(hh.ctx);
    // Attempts at 0, 50, …, 300 ms of age; after the one at 300 the next (350) would be past the maximum age.
    for (let n = 1; n <= 6; n++) {
      const d = await attemptRecorded(hh, n);
      expect(d, `attempt ${n}`).toMatchObject({ status: 'pending', nextAttemptAt: new Date(start + n * 50).toISOString() });
      clock = start + n * 50;
    }
    const d = await attemptRecorded(hh, 7);
    expect(d).toMatchObject({ status: 'failed', attempts: 7, lastStatusCode: 500, nextAttemptAt: null, deliveredAt: null });
    expect(receiver.received).toHaveLength(7);
    clock += 3_600_000;
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received).toHaveLength(7);
  });

  it('retries after a receiver that does not answer within the timeout', async () => {
    const hh = await setup(fastWebhooks({ timeoutMs: 200, retryScheduleMs: [50] }));
    receiver = await startReceiver(['hang', 204]);
    await createWebhookService(hh.ctx).set(hh.projectId, receiver.url);
    await enqueueWebhook(hh.t.db, hh.projectId, { type: 'job.completed', data: job('completed') });
    dispatch(hh.ctx);
    const [d] = await eventually(async () => {
      const l = await deliveries(hh);
      return l[0]?.status === 'delivered' ? l : null;
    });
    // The first request never got an answer; a later one did. (On a starved machine an answered attempt may
    // also outlive the 200 ms timeout and be retried, so the count is not fixed at 2.)
    expect(d).toMatchObject({ lastStatusCode: 204 });
    expect(d?.attempts).toBeGreaterThanOrEqual(2);
    expect(receiver.received).toHaveLength(d?.attempts as number);
  });

  it('queues nothing for a project without a webhook, and cancels deliveries whose webhook was removed', async () => {
    const hh = await setup();
    await enqueueWebhook(hh.t.db, hh.projectId, { type: 'job.completed', data: job('completed') });
    expect(await deliveries(hh)).toEqual([]);

    receiver = await startReceiver([200]);
    const svc = createWebhookService(hh.ctx);
    await svc.set(hh.projectId, receiver.url);
    expect(await svc.get(hh.projectId)).toEqual({ projectId: hh.projectId, url: receiver.url });
    await enqueueWebhook(hh.t.db, hh.projectId, { type: 'job.completed', data: job('completed') });
    expect(await svc.remove(hh.projectId)).toBe(true);
    expect(await svc.remove(hh.projectId)).toBe(false);
    expect(await svc.get(hh.projectId)).toBeNull();
    dispatch(hh.ctx);
    const [d] = await eventually(async () => {
      const l = await deliveries(hh);
      return l[0]?.status === 'cancelled' ? l : null;
    });
    expect(d?.lastError).toMatch(/no webhook/);
    expect(receiver.received).toHaveLength(0);
  });

  it("queues inside the caller's transaction: a rolled-back state change sends nothing", async () => {
    const hh = await setup();
    await hh.ctx.projects.updateSettings(hh.projectId, {
      webhook: { url: 'http://127.0.0.1:9/', secret: `whsec_${crypto.randomBytes(32).toString('base64')}` },
    });
    await hh.t.db.kysely
      .transaction()
      .execute(async (tx) => {
        await enqueueWebhook(tx, hh.projectId, { type: 'job.failed', data: job('failed') });
        throw new Error('rollback');
      })
      .catch(() => {});
    expect(await deliveries(hh)).toEqual([]);
    await hh.t.db.kysely.transaction().execute((tx) => enqueueWebhook(tx, hh.projectId, { type: 'job.completed', data: job('completed') }));
    expect((await deliveries(hh)).map((d) => [d.eventType, d.status, d.attempts])).toEqual([['job.completed', 'pending', 0]]);
  });

  it('refuses private and loopback URLs at set time unless allowed', async () => {
    const hh = await setup(fastWebhooks({ allowPrivate: false }));
    const svc = createWebhookService(hh.ctx);
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://0x7f.1/',
      'http://2130706433/',
      'http://10.1.2.3/',
      'http://[::1]/',
      'http://[::ffff:192.168.0.1]/',
      'http://169.254.169.254/latest/meta-data',
      'http://[fd00::1]/',
    ]) {
      await expect(svc.set(hh.projectId, url), url).rejects.toThrow(/url refused: .* is a (loopback|private network|link-local) address/);
    }
    await expect(svc.set(hh.projectId, 'ftp://example.com/')).rejects.toBeInstanceOf(WebhookUrlError);
    await expect(svc.set(hh.projectId, 'not a url')).rejects.toThrow(/absolute http/);
    await expect(svc.set(hh.projectId, 'https://user:pw@example.com/')).rejects.toThrow(/credentials/);
    await expect(svc.set(hh.projectId, 'https://nonexistent.invalid/')).rejects.toThrow(/could not be resolved/);
    expect(await svc.get(hh.projectId)).toBeNull();
  });

  it('refuses at delivery time when the URL now points at a private address', async () => {
    const hh = await setup(fastWebhooks({ allowPrivate: false }));
    receiver = await startReceiver([200]);
    // As if DNS changed after `webhook set`: the stored URL now reaches a loopback address.
    await hh.ctx.projects.updateSettings(hh.projectId, { webhook: { url: receiver.url, secret: `whsec_${crypto.randomBytes(32).toString('base64')}` } });
    await enqueueWebhook(hh.t.db, hh.projectId, { type: 'job.completed', data: job('completed') });
    dispatch(hh.ctx);
    const [d] = await eventually(async () => {
      const l = await deliveries(hh);
      return l[0]?.status === 'failed' ? l : null;
    });
    expect(d).toMatchObject({ attempts: 1, lastStatusCode: null });
    expect(d?.lastError).toMatch(/^refused: 127\.0\.0\.1 is a loopback address/);
    expect(receiver.received).toHaveLength(0);
  });

  it('never writes the secret to the logs', async () => {
    const hh = await setup();
    receiver = await startReceiver([500, 200]);
    const { secret } = await createWebhookService(hh.ctx).set(hh.projectId, receiver.url);
    await enqueueWebhook(hh.t.db, hh.projectId, { type: 'job.completed', data: job('completed') });
    dispatch(hh.ctx);
    await eventually(async () => (await deliveries(hh))[0]?.status === 'delivered');
    // The dispatcher logs the delivery after its row is updated: wait for the line rather than race it.
    const text = await eventually(async () => {
      const logs = h?.logs.join('') ?? '';
      return logs.includes('webhook delivered') ? logs : false;
    });
    expect(text).toContain('webhook delivered');
    expect(text).toContain('will retry');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(secret.slice(6));
    expect(text).not.toContain(secret.slice(6, 30));
    // The URL's path and query (which may carry a receiver's token) are not logged either, only its origin.
    expect(text).not.toContain('/hooks/inkwell');
  });

  it('two dispatchers on one database deliver each event exactly once', async () => {
    const hh = await setup();
    receiver = await startReceiver([200]);
    await createWebhookService(hh.ctx).set(hh.projectId, receiver.url);
    for (let i = 0; i < 12; i++) await enqueueWebhook(hh.t.db, hh.projectId, { type: 'job.completed', data: { job: { id: `job_${i}` } } });
    const other = hh.t.reopen();
    const ctx2 = createContext(hh.ctx.config, other, hh.ctx.logger);
    dispatch(hh.ctx);
    dispatch(ctx2);
    await receiver.waitFor(12);
    await eventually(async () => (await deliveries(hh)).every((d) => d.status === 'delivered'));
    await new Promise((r) => setTimeout(r, 200));
    const ids = receiver.received.map((r) => r.headers['webhook-id']);
    expect(ids).toHaveLength(12);
    expect(new Set(ids).size).toBe(12);
    expect(new Set(receiver.received.map((r) => JSON.parse(r.body).data.job.id)).size).toBe(12);
  });

  it('stop() is idempotent and waits for the attempt in flight', async () => {
    const hh = await setup(fastWebhooks({ timeoutMs: 300 }));
    receiver = await startReceiver(['hang']);
    await createWebhookService(hh.ctx).set(hh.projectId, receiver.url);
    await enqueueWebhook(hh.t.db, hh.projectId, { type: 'job.completed', data: job('completed') });
    const d = startWebhookDispatcher(hh.ctx);
    await receiver.waitFor(1);
    await d.stop();
    await d.stop();
    // The timed-out attempt was recorded before stop() returned.
    const [row] = await deliveries(hh);
    expect(row).toMatchObject({ status: 'pending', attempts: 1, lastError: expect.stringContaining('timed out') });
  });
});

describe('unknown project', () => {
  it('is a clear error', async () => {
    const t = await openTestDb('sqlite');
    try {
      const ctx = createContext(testConfig({ webhooks: fastWebhooks() }), t.db, pino({ level: 'silent' }));
      await expect(createWebhookService(ctx).set('prj_missing', 'http://127.0.0.1/')).rejects.toThrow('Project prj_missing not found');
      await enqueueWebhook(t.db, 'prj_missing', { type: 'job.completed', data: {} });
    } finally {
      await t.cleanup();
    }
  });
});
