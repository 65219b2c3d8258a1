// `npx tsx scripts/screenshots.ts`: takes the dashboard's screenshots in docs/screenshots/ (linked from the
// README). Starts Inkwell in this process on a fresh SQLite directory, seeds a project with 30 days of mixed
// traffic through the ingest API (test/helpers/traffic.ts), signs Chromium in and saves each page: wide and
// light, and at 375 px in dark mode. Needs the dashboard built (npm run build) and Chromium (test/helpers/browser.ts).
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { loadConfig } from '../src/config.ts';
import { createContext } from '../src/context.ts';
import { openFromConfig } from '../src/db/index.ts';
import { buildApp } from '../src/http/app.ts';
import { enqueueWebhook } from '../src/jobs/webhooks.ts';
import { createLogger } from '../src/lib/logger.ts';
import { launchChromium } from '../test/helpers/browser.ts';
import { ingestTraffic, trafficEvents } from '../test/helpers/traffic.ts';

const OUT = path.resolve(import.meta.dirname, '../docs/screenshots');

const PAGES = [
  { name: 'analytics', url: '/analytics?range=30d', ready: '#pages tbody tr' },
  { name: 'settings', url: '/settings', ready: '#deliveries tbody tr' },
];

async function shoot(page: Page, base: string, name: string, url: string, ready: string): Promise<void> {
  await page.goto(base + url);
  await page.locator(ready).first().waitFor();
  // No "Loading…" left anywhere on the page.
  await page.waitForFunction(() => !document.querySelector('.loading'));
  await page.screenshot({ path: path.join(OUT, `${name}.png`), fullPage: true });
  process.stdout.write(`wrote docs/screenshots/${name}.png\n`);
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'inkwell-shots-'));
  // Private webhook URLs allowed: the example receiver is on this machine (nothing is sent: no dispatcher runs).
  const config = loadConfig({ INKWELL_DATA_DIR: dataDir, LOG_LEVEL: 'warn', INKWELL_LOG_PRETTY: '0', INKWELL_ALLOW_PRIVATE_WEBHOOKS: 'true' });
  const db = await openFromConfig(config);
  const ctx = createContext(config, db, createLogger(config));
  const app = await buildApp(ctx);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium();
  try {
    const project = await ctx.projects.createProject({ name: 'Acme Docs', repository: 'https://github.com/acme/docs' });
    const admin = await ctx.projects.createKey({ projectId: project.id, kind: 'admin', name: 'screenshots' });
    await ctx.projects.createKey({ projectId: project.id, kind: 'ingest', name: 'docs site tracker' });
    await ingestTraffic(base, project.id, admin.key, trafficEvents(Date.now(), 30));
    // A webhook with two queued notifications (they stay pending).
    const hook = await fetch(`${base}/v1/projects/${project.id}/webhook`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${admin.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:8080/hooks/inkwell' }),
    });
    if (hook.status !== 200) throw new Error(`setting the webhook answered ${hook.status}: ${await hook.text()}`);
    for (const [type, job] of [
      ['job.completed', 'job_1'],
      ['job.failed', 'job_2'],
    ] as const) {
      await enqueueWebhook(db, project.id, { type, data: { job: { id: job } } });
    }
    fs.mkdirSync(OUT, { recursive: true });

    const wide = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
    const page = await wide.newPage();
    await page.goto(`${base}/signin`);
    await page.locator('#key').waitFor();
    await page.screenshot({ path: path.join(OUT, 'sign-in.png') });
    process.stdout.write('wrote docs/screenshots/sign-in.png\n');
    await page.fill('#key', admin.key);
    await page.click('button[type=submit]');
    await page.waitForURL('**/analytics');
    for (const p of PAGES) await shoot(page, base, p.name, p.url, p.ready);

    const narrow = await browser.newContext({ viewport: { width: 375, height: 800 }, colorScheme: 'dark', storageState: await wide.storageState() });
    await shoot(await narrow.newPage(), base, 'analytics-375-dark', '/analytics?range=30d', '#pages tbody tr');
  } finally {
    await browser.close();
    await app.close();
    await db.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
