// `npx tsx scripts/screenshots.ts`: takes the dashboard's screenshots in docs/screenshots/ (linked from the
// README). Starts Inkwell in this process on a fresh SQLite directory, seeds a project with 30 days of mixed
// traffic through the ingest API (test/helpers/traffic.ts) and two jobs run by the real worker (the scripted model
// server, a local bare repository as https://github.com/acme/docs and the GitHub fake of the tests), signs
// Chromium in and saves each page: wide and light, and at 375 px in dark mode. Needs the dashboard built
// (npm run build) and Chromium (test/helpers/browser.ts).
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { loadConfig } from '../src/config.ts';
import { createContext, wireServices } from '../src/context.ts';
import { openFromConfig } from '../src/db/index.ts';
import { buildApp } from '../src/http/app.ts';
import { enqueueWebhook } from '../src/jobs/webhooks.ts';
import { startWorker } from '../src/jobs/worker-entry.ts';
import { createLogger } from '../src/lib/logger.ts';
import { launchChromium } from '../test/helpers/browser.ts';
import { applyEnv, createBareRepo, insteadOfEnv } from '../test/helpers/git.ts';
import { startGitHubServer } from '../test/helpers/github-server.ts';
import { startModelServer } from '../test/helpers/model-server.ts';
import { ingestTraffic, trafficEvents } from '../test/helpers/traffic.ts';

const OUT = path.resolve(import.meta.dirname, '../docs/screenshots');

const PAGES = [
  { name: 'analytics', url: '/analytics?range=30d', ready: '#pages tbody tr' },
  { name: 'settings', url: '/settings', ready: '#deliveries tbody tr' },
  { name: 'jobs', url: '/jobs', ready: '#jobs tbody tr' },
];

const GITHUB_URL = 'https://github.com/acme/docs';
const GITHUB_TOKEN = `ghp_${'Screensh0tValue'.repeat(3)}`;

/** What the scripted model does: a first job that edits a page and adds one, a second that changes nothing. */
const MODEL_SCRIPT = [
  {
    toolCalls: [
      { name: 'read_file', args: { path: 'docs/deploy.md' } },
      {
        name: 'edit_file',
        args: {
          path: 'docs/deploy.md',
          old_string: 'inkwell deploy\n```\n',
          new_string: 'inkwell deploy\n```\n\nAdd `--dry-run` to see what would change without deploying.\n',
        },
      },
      {
        name: 'write_file',
        args: { path: 'docs/cli/deploy.yml', content: 'command: deploy\nflags:\n  - name: --dry-run\n    type: boolean\n    default: false\n' },
      },
    ],
  },
  { text: 'Document the --dry-run flag of deploy\n\nThe deploy guide mentions the flag, and the CLI reference lists it.' },
  { text: 'The README already links the deploy guide: nothing to change.' },
];

/** Starts the job and waits until the worker has finished it. */
async function runJob(base: string, projectId: string, key: string, prompt: string): Promise<string> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const created = await fetch(`${base}/v2/agent/${projectId}/job`, { method: 'POST', headers, body: JSON.stringify({ prompt }) });
  if (created.status !== 201) throw new Error(`creating a job answered ${created.status}: ${await created.text()}`);
  const { id } = (await created.json()) as { id: string };
  for (;;) {
    const job = (await (await fetch(`${base}/v2/agent/${projectId}/job/${id}`, { headers })).json()) as { status: string };
    if (job.status !== 'active') return id;
    await new Promise((r) => setTimeout(r, 100));
  }
}

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
  const repo = createBareRepo({
    files: {
      'README.md': '# Acme docs\n\nSee docs/deploy.md.\n',
      'docs/deploy.md': '# Deploy\n\nRun:\n\n```sh\ninkwell deploy\n```\n',
    },
  });
  const model = await startModelServer(MODEL_SCRIPT);
  const github = await startGitHubServer({ token: GITHUB_TOKEN });
  const restoreEnv = applyEnv(insteadOfEnv({ [GITHUB_URL]: repo.dir }));
  // Private webhook URLs allowed: the example receiver is on this machine (the deliveries to it fail and stay pending).
  const config = loadConfig({
    INKWELL_DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    INKWELL_LOG_PRETTY: '0',
    INKWELL_ALLOW_PRIVATE_WEBHOOKS: 'true',
    INKWELL_MODEL: 'openai-compatible/scripted-model',
    OPENAI_COMPATIBLE_BASE_URL: model.baseUrl,
    GITHUB_API_URL: github.apiUrl,
    GITHUB_TOKEN,
  });
  const db = await openFromConfig(config);
  const ctx = createContext(config, db, createLogger(config));
  const app = await buildApp(ctx);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const worker = await startWorker(ctx, await wireServices(ctx));
  const browser = await launchChromium();
  try {
    const project = await ctx.projects.createProject({ name: 'Acme Docs', repository: GITHUB_URL, ref: 'main' });
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
    const jobId = await runJob(base, project.id, admin.key, 'Document the new --dry-run flag of the deploy command');
    await runJob(base, project.id, admin.key, 'Link the deploy guide from the README');
    PAGES.push({ name: 'job', url: `/jobs/${jobId}`, ready: 'pre.diff' });
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
    await shoot(await narrow.newPage(), base, 'job-375-dark', `/jobs/${jobId}`, 'pre.diff');
  } finally {
    await browser.close();
    await worker.stop();
    await app.close();
    await db.close();
    restoreEnv();
    await model.close();
    await github.close();
    repo.cleanup();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
