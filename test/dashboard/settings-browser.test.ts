// The settings page in real Chromium against a running server: keys (listed without secrets, a new one shown
// once and working, revoked and refused), the webhook (set with its secret shown once, removed) and its
// delivery log with states, attempts, retry times and last answers exactly as the API has them, and
// redelivery through the real dispatcher to a local receiver; axe-core on every state shown.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it, vi } from 'vitest';
import { testConfig } from '../../src/config.ts';
import { enqueueWebhook, startWebhookDispatcher } from '../../src/jobs/webhooks.ts';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { seriousA11yViolations } from '../helpers/axe.ts';
import { describeInChromium, signInWithKey, watchedPage } from '../helpers/dashboard.ts';

describeInChromium('dashboard settings in Chromium', (dialect, chromium) => {
  let t: TestApp;
  let s: Seeded;
  let context: BrowserContext;
  beforeAll(async () => {
    // The receiver is on 127.0.0.1 (allowed here); a failed attempt is retried a minute later.
    t = await startTestApp(dialect, { webhooks: { ...testConfig().webhooks, allowPrivate: true, pollIntervalMs: 20, retryScheduleMs: [60_000] } });
  });
  afterAll(async () => t?.close());
  beforeEach(async () => {
    s = await t.seed({ name: 'Acme Docs' });
    context = await chromium().newContext();
  });
  afterEach(async () => context?.close());

  it('shows the project as the API has it: allowed repositories, budget defaults, the code-host handle', async () => {
    const { page, problems } = await watchedPage(context);
    await signInWithKey(page, t.baseUrl, s.adminKey);
    await page.goto(`${t.baseUrl}/settings`);
    const facts = page.locator('#project-title + dl');
    await facts.waitFor();
    expect(await facts.textContent()).toContain('Other repositories jobs may usenone');
    expect(await facts.textContent()).toContain("the server's defaults");
    await t.ctx.projects.changeAllowedRepositories(s.project.id, { allow: ['https://github.com/acme/site'], disallow: [] });
    await t.ctx.projects.updateSettings(s.project.id, { budget: { maxCostUsd: 2, maxTurnMs: 600_000 }, codeHostHook: { generation: 'g', handle: 'docs-bot' } });
    await page.reload();
    await facts.waitFor();
    const text = (await facts.textContent()) as string;
    expect(text).toContain('https://github.com/acme/site');
    expect(text).toContain('per turn 600 s, spend $2');
    expect(text).toContain('@docs-bot');
    expect(await seriousA11yViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('lists the keys, creates one shown once that works, and revokes it', async () => {
    const { page, problems } = await watchedPage(context);
    await signInWithKey(page, t.baseUrl, s.adminKey);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    const rows = page.locator('#keys tbody tr');
    await rows.first().waitFor();
    const listed = (await t.request('GET', `/v1/projects/${s.project.id}/keys`, { key: s.adminKey })).body.keys;
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-key-id')))).toEqual(listed.map((k: { id: string }) => k.id));
    expect(await page.locator(`#keys tr[data-key-id="${s.adminKeyId}"]`).textContent()).toContain('(this session)');
    expect(await page.locator('#keys').textContent()).not.toContain(s.ingestKey);
    expect(await seriousA11yViolations(page)).toEqual([]);

    await page.getByLabel('Kind').selectOption('ingest');
    await page.getByLabel('Name (optional)').fill('docs site');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = (await page.getByTestId('shown-once').textContent()) as string;
    expect(shown).toMatch(/^ink_pub_[0-9A-Za-z]{32}$/);
    await expect.poll(() => rows.count()).toBe(4);
    expect(await seriousA11yViolations(page)).toEqual([]);
    const ingest = (key: string) => t.request('POST', `/v1/analytics/${s.project.id}/events`, { key, body: { events: [{ path: '/docs/' }] } });
    expect((await ingest(shown)).status).toBe(202);
    await page.getByRole('button', { name: 'Done, I saved it' }).click();
    expect(await page.content()).not.toContain(shown);

    const row = page.locator('#keys tbody tr', { hasText: 'docs site' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await expect.poll(() => row.textContent()).toContain('revoked');
    expect((await ingest(shown)).status).toBe(401);
    expect(problems).toEqual([]);
  });

  it('sets the webhook (secret shown once), shows the delivery log as the API has it, redelivers, and removes it', async () => {
    const received: string[] = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        received.push(String(req.headers['webhook-id']));
        res.writeHead(body.includes('job_ok') ? 204 : 500).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const dispatcher = startWebhookDispatcher(t.ctx);
    try {
      const { page, problems } = await watchedPage(context);
      await signInWithKey(page, t.baseUrl, s.adminKey);
      await page.goto(`${t.baseUrl}/settings`);
      await expect.poll(() => page.getByTestId('webhook-url').textContent()).toContain('No webhook');
      expect(await page.getByText('No deliveries yet').isVisible()).toBe(true);
      await page.getByLabel('URL', { exact: true }).fill(url);
      await page.getByRole('button', { name: 'Set webhook' }).click();
      expect(await page.getByTestId('shown-once').textContent()).toMatch(/^whsec_/);
      await expect.poll(() => page.getByTestId('webhook-url').textContent()).toContain(url);
      expect((await t.request('GET', `/v1/projects/${s.project.id}/webhook`, { key: s.adminKey })).body).toEqual({ webhook: { url } });

      await enqueueWebhook(t.ctx.db, s.project.id, { type: 'job.completed', data: { job: { id: 'job_ok' } } });
      await enqueueWebhook(t.ctx.db, s.project.id, { type: 'job.failed', data: { job: { id: 'job_bad' } } });
      const log = async () => (await t.request('GET', `/v1/projects/${s.project.id}/webhook/deliveries`, { key: s.adminKey })).body.deliveries;
      const settled = await vi.waitFor(
        async () => {
          const ds = await log();
          if (ds.length !== 2 || ds.some((d: { lastStatusCode: number | null }) => d.lastStatusCode === null)) throw new Error('not yet answered');
          return ds;
        },
        { timeout: 30_000, interval: 50 },
      );
      const bad = settled.find((d: { eventType: string }) => d.eventType === 'job.failed');
      const ok = settled.find((d: { eventType: string }) => d.eventType === 'job.completed');
      expect(bad).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500 });
      expect(ok).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 204 });

      await page.getByRole('button', { name: 'Refresh' }).click();
      const cells = (id: string) => page.locator(`#deliveries tr[data-delivery-id="${id}"] td`).allTextContents();
      await expect
        .poll(() => cells(bad.id))
        .toEqual([
          'job.failed',
          'pending',
          '1',
          `${bad.nextAttemptAt.slice(0, 19).replace('T', ' ')} UTC`,
          'HTTP 500',
          `${bad.createdAt.slice(0, 19).replace('T', ' ')} UTC`,
          '',
        ]);
      expect((await cells(ok.id)).slice(0, 5)).toEqual(['job.completed', 'delivered', '1', '—', 'HTTP 204']);
      expect(await seriousA11yViolations(page)).toEqual([]);

      await page.locator(`#deliveries tr[data-delivery-id="${ok.id}"]`).getByRole('button', { name: 'Redeliver' }).click();
      await vi.waitFor(() => expect(received.filter((id) => id === ok.id)).toHaveLength(2), { timeout: 30_000, interval: 50 });
      await page.getByLabel('State').selectOption('delivered');
      await expect.poll(() => page.locator('#deliveries tbody tr').count()).toBe(1);

      await page.getByRole('button', { name: 'Remove' }).click();
      await page.getByRole('button', { name: 'Yes, remove' }).click();
      await expect.poll(() => page.getByTestId('webhook-url').textContent()).toContain('No webhook');
      expect((await t.request('GET', `/v1/projects/${s.project.id}/webhook`, { key: s.adminKey })).body).toEqual({ webhook: null });
      expect(problems).toEqual([]);
    } finally {
      await dispatcher.stop();
      receiver.close();
    }
  });
});
