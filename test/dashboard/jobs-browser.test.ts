// The jobs pages in real Chromium against a running server with its worker, the real agent executor, a
// scripted model server, a real bare repository and the local GitHub fake: the empty list says what to do;
// the form refuses what it can check and shows the API's refusals with their message; a job started from it
// runs, and its timeline grows live without a reload (the model is held between two steps so the page is
// seen at each); the list shows it and picks up a new job by itself; a follow-up from the box continues the
// job; its diff shows the changed lines with their stats, highlighted, follows each turn and downloads as a
// patch; archiving asks first and ends it; axe-core finds nothing serious on either page.
import fs from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { type AgentJobs, startAgentJobs } from '../helpers/agent-jobs.ts';
import { seriousA11yViolations } from '../helpers/axe.ts';
import { describeInChromium, signInWithKey, watchedPage } from '../helpers/dashboard.ts';
import { readBranchFile } from '../helpers/git.ts';
import { WAIT_LIMIT_MS, waitFor, waitForStatus } from '../helpers/jobs.ts';

/** How long a wait on the page may poll (a safety net for a starved machine, never a speed requirement). */
const WAIT = { timeout: WAIT_LIMIT_MS };

const TOKEN = `ghp_${'DashJ0bsValue'.repeat(3)}`;

/** A promise the test resolves when it has seen what it waits for (the model's next reply waits on it). */
function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

describeInChromium('dashboard jobs in Chromium', (dialect, chromium) => {
  let e: AgentJobs;
  let context: BrowserContext;
  beforeAll(async () => {
    e = await startAgentJobs(dialect, {
      files: { 'README.md': '# Acme docs\n', 'docs/intro.mdx': '# Intro\n\nHello from Acme.\n' },
      token: TOKEN,
      // Streams end after half a second, so that the page reconnects (with Last-Event-ID) during every test.
      env: { INKWELL_MODEL_MAX_RETRIES: '1', INKWELL_MODEL_RETRY_BASE_MS: '5', INKWELL_SSE_MAX_LIFETIME_MS: '500' },
    });
  });
  afterAll(async () => e?.close());
  beforeEach(async () => {
    context = await chromium().newContext({ acceptDownloads: true });
  });
  afterEach(async () => context?.close());

  const api = (method: string, p: string, body?: unknown) =>
    e.t.request(method, `/v2/agent/${e.s.project.id}${p}`, { key: e.s.adminKey, ...(body ? { body } : {}) });
  /** The +/- lines of a unified diff (not the ---/+++ file headers). */
  const changedLines = (diff: string) => diff.split('\n').filter((l) => /^[+-]/.test(l) && !/^(\+\+\+|---) /.test(l));
  const shownChanges = (page: Page) => page.locator('pre.diff .line.add, pre.diff .line.del').allTextContents();
  const steps = (page: Page) => page.locator('#timeline li').evaluateAll((lis) => lis.map((li) => `${li.getAttribute('data-type')}`));
  /** Set before a wait, checked after it: the page was not reloaded meanwhile. */
  const markPage = (page: Page) => page.evaluate(() => Object.assign(window, { notReloaded: true }));
  const stillSamePage = (page: Page) => page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded === true);
  /** Records every state the live-stream indicator shows, as it changes (read with `connectionStates`). */
  const recordConnection = (page: Page) =>
    page.evaluate(() => {
      const seen: string[] = [];
      Object.assign(window, { connectionStates: seen });
      const note = () => {
        const state = document.querySelector('[data-connection]')?.getAttribute('data-connection');
        if (state && seen.at(-1) !== state) seen.push(state);
      };
      new MutationObserver(note).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-connection'] });
      note();
    });
  const connectionStates = (page: Page) => page.evaluate(() => (window as unknown as { connectionStates: string[] }).connectionStates);

  it('starts a job from the form and shows its steps live, then lists it; the list picks up new jobs by itself', async () => {
    const { page, problems } = await watchedPage(context);
    await signInWithKey(page, e.t.baseUrl, e.s.adminKey);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Jobs' }).click();
    await expect.poll(() => page.locator('.state.empty').textContent(), WAIT).toContain('No jobs yet. Start one with the form above');
    expect(await seriousA11yViolations(page)).toEqual([]);

    // What the browser checks, and what only the API refuses (shown with its message).
    await page.getByRole('button', { name: 'Start job' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('Write a prompt');
    await page.getByLabel('Prompt').fill('Reword the intro greeting');
    await page.getByLabel('Branch (optional)').fill('bad..branch');
    await page.getByRole('button', { name: 'Start job' }).click();
    await expect.poll(() => page.getByRole('alert').textContent(), WAIT).toContain('field "branch" must be a valid git branch name');
    expect((await api('GET', '/jobs')).body.jobs).toEqual([]);

    const second = gate();
    e.model.push(
      { toolCalls: [{ name: 'edit_file', args: { path: 'docs/intro.mdx', old_string: 'Hello from Acme.', new_string: 'Welcome to Acme.' } }] },
      async () => {
        await second.opened;
        return { text: 'Reword the intro greeting\n\nThe intro now welcomes readers.' };
      },
    );
    await page.getByLabel('Branch (optional)').fill('docs/intro-greeting');
    await page.getByLabel('Draft pull request').check();
    await page.getByRole('button', { name: 'Start job' }).click();
    await page.waitForURL(/\/jobs\/job_[A-Za-z0-9]+$/);
    const jobId = decodeURIComponent(page.url().split('/').pop() as string);
    await markPage(page);
    await recordConnection(page);
    const resumedFrom: string[] = [];
    page.on('request', async (r) => {
      const lastEventId = r.url().includes(`/job/${jobId}/events`) ? (await r.allHeaders())['last-event-id'] : undefined;
      if (lastEventId) resumedFrom.push(lastEventId);
    });
    // The model is held before its second reply: the edit is on the page, and nothing after it yet.
    await expect.poll(() => steps(page), WAIT).toEqual(['status', 'status', 'tool_call', 'tool_result']);
    expect(await page.locator('#timeline li[data-type="tool_call"]').textContent()).toContain('edit_file');
    expect(await page.locator('.conversation li').allTextContents()).toEqual([expect.stringContaining('Reword the intro greeting')]);
    expect(await page.getByTestId('job-status').textContent()).toContain('active');
    expect(await seriousA11yViolations(page)).toEqual([]);
    // The stream ends (its lifetime): the page says it is reconnecting, and the browser resumes after the last
    // event shown, which the timeline shows once.
    const lastSeq = await page.locator('#timeline li').last().getAttribute('data-seq');
    await expect.poll(() => resumedFrom, WAIT).toContain(lastSeq);
    await expect.poll(() => connectionStates(page), WAIT).toEqual(expect.arrayContaining(['live', 'reconnecting']));
    await expect.poll(() => page.locator('[data-connection]').getAttribute('data-connection'), WAIT).toBe('live');
    expect(await steps(page)).toEqual(['status', 'status', 'tool_call', 'tool_result']);

    second.open();
    await expect.poll(() => page.getByTestId('job-status').textContent(), WAIT).toContain('completed');
    const job = (await api('GET', `/job/${jobId}`)).body;
    expect(job).toMatchObject({ status: 'completed', branch: 'docs/intro-greeting', prLink: e.github.htmlUrl(e.github.pulls[0]!) });
    expect(e.github.pulls[0]).toMatchObject({ head: 'docs/intro-greeting', draft: true });
    // The page may read the finished job just before the stream brings the last step: wait for it.
    await expect.poll(() => steps(page), WAIT).toEqual(['status', 'status', 'tool_call', 'tool_result', 'check', 'commit', 'pull_request', 'status']);
    expect(await page.locator('#timeline li[data-type="check"]').textContent()).toContain('Docs checks passed (round 0)');
    await expect.poll(() => page.getByTestId('job-pr').getByRole('link').getAttribute('href'), WAIT).toBe(job.prLink);
    await expect
      .poll(() => page.getByTestId('job-usage').textContent(), WAIT)
      .toBe(`${job.usage.inputTokens.toLocaleString('en-US')} in / ${job.usage.outputTokens.toLocaleString('en-US')} out tokens`);
    await expect.poll(() => page.locator('.conversation li.from-agent').textContent(), WAIT).toContain('The intro now welcomes readers.');
    expect(await stillSamePage(page)).toBe(true);

    // The diff, loaded again when the turn ended: per-file stats and the changed lines as the API has them,
    // highlighted as Markdown, and the patch to download.
    const diff = (await api('GET', `/job/${jobId}/diff`)).body;
    const fileRows = () =>
      page.locator('#diff-files tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    await expect.poll(fileRows, WAIT).toEqual([['docs/intro.mdx', 'modified', '+1 −1']]);
    expect(await shownChanges(page)).toEqual(changedLines(diff.diff));
    expect(await shownChanges(page)).toEqual(['-Hello from Acme.', '+Welcome to Acme.']);
    expect(await page.getByTestId('diff-totals').textContent()).toContain('1 file changed, +1 −1');
    expect(await page.locator('pre.diff .hljs-section').first().textContent()).toBe('# Intro');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download the patch' }).click()]);
    expect(download.suggestedFilename()).toBe(`${jobId}.patch`);
    expect(fs.readFileSync(await download.path(), 'utf8')).toBe((await api('GET', `/job/${jobId}/diff?format=patch`)).text);
    expect(await seriousA11yViolations(page)).toEqual([]);

    // The list: this job, as the API has it; a job created elsewhere appears without a reload.
    await page.getByRole('link', { name: '← All jobs' }).click();
    const row = page.locator(`#jobs tr[data-job-id="${jobId}"]`);
    await expect.poll(() => row.textContent(), WAIT).toContain('completed');
    expect(await row.getByRole('link', { name: job.prLink.replace('https://', '') }).getAttribute('href')).toBe(job.prLink);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await markPage(page);
    e.model.push({ text: 'Nothing to change' });
    const other = (await api('POST', '/job', { prompt: 'Check the README' })).body;
    await expect
      .poll(() => page.locator('#jobs tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-job-id'))), WAIT)
      .toEqual([other.id, jobId]);
    expect(await stillSamePage(page)).toBe(true);
    await waitForStatus(e.t, e.s.adminKey, e.s.project.id, other.id, ['completed']);
    await page.getByRole('navigation', { name: 'Status' }).getByRole('link', { name: 'failed' }).click();
    await expect.poll(() => page.locator('.state.empty').textContent(), WAIT).toContain('No failed jobs yet');
    expect(problems).toEqual([]);
  });

  it('continues a job with a follow-up from the box, and archives it after asking', async () => {
    // Repository content is data: markup in a changed file is shown as text, never run. (In a code span, so the
    // page passes the run's docs checks: a bare <img src=x> names an image that does not exist.)
    const markup = '`<img src=x onerror="window.pwned=1">`';
    e.model.push({ toolCalls: [{ name: 'write_file', args: { path: 'docs/faq.mdx', content: `# FAQ\n\n${markup}\n` } }] }, { text: 'Add an FAQ page' });
    const created = (await api('POST', '/job', { prompt: 'Add an FAQ page' })).body;
    const first = await waitForStatus(e.t, e.s.adminKey, e.s.project.id, created.id, ['completed', 'failed']);
    expect(first.status).toBe('completed');

    const { page, problems } = await watchedPage(context);
    await signInWithKey(page, e.t.baseUrl, e.s.adminKey);
    await page.goto(`${e.t.baseUrl}/jobs/${created.id}`);
    await expect.poll(() => steps(page), WAIT).toContain('pull_request');
    await expect.poll(() => shownChanges(page), WAIT).toEqual(['+# FAQ', '+', `+${markup}`]);
    await markPage(page);
    await page.getByRole('button', { name: 'Send' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('Write a message');

    e.model.push(
      { toolCalls: [{ name: 'edit_file', args: { path: 'docs/faq.mdx', old_string: '# FAQ', new_string: '# Questions' } }] },
      { text: 'Rename the FAQ' },
    );
    await page.getByLabel('Follow-up message').fill('Call it Questions');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect
      .poll(() => page.locator('.conversation li.from-user').allTextContents(), WAIT)
      .toEqual([expect.stringContaining('Add an FAQ page'), expect.stringContaining('Call it Questions')]);
    await expect.poll(() => page.locator('#timeline li[data-type="commit"]').count(), WAIT).toBe(2);
    await expect.poll(() => page.getByTestId('job-status').textContent(), WAIT).toContain('completed');
    expect(readBranchFile(e.repo, first.branch, 'docs/faq.mdx')).toBe(`# Questions\n\n${markup}\n`);
    // The diff follows the turn without a reload.
    await expect.poll(() => shownChanges(page), WAIT).toEqual(['+# Questions', '+', `+${markup}`]);
    expect(await stillSamePage(page)).toBe(true);
    expect(await page.locator('pre.diff img').count()).toBe(0);
    expect(await page.evaluate(() => 'pwned' in window)).toBe(false);
    expect(await page.getByLabel('Follow-up message').inputValue()).toBe('');

    await page.getByRole('button', { name: 'Archive' }).click();
    expect(await page.getByText('Archive this job?').isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect((await api('GET', `/job/${created.id}`)).body.status).toBe('completed');
    await page.getByRole('button', { name: 'Archive' }).click();
    await page.getByRole('button', { name: 'Yes, archive' }).click();
    await expect.poll(() => page.getByTestId('job-status').textContent(), WAIT).toContain('archived');
    await waitFor(async () => (await api('GET', `/job/${created.id}`)).body.status === 'archived');
    expect(await page.getByLabel('Follow-up message').count()).toBe(0);
    expect(await seriousA11yViolations(page)).toEqual([]);

    // At 375 px in dark mode: nothing wider than the screen, nothing serious for axe.
    const narrow = await chromium().newContext({ viewport: { width: 375, height: 800 }, colorScheme: 'dark', storageState: await context.storageState() });
    try {
      const small = await narrow.newPage();
      for (const url of [`/jobs/${created.id}`, '/jobs']) {
        await small.goto(`${e.t.baseUrl}${url}`);
        await small
          .locator(url === '/jobs' ? '#jobs tbody tr' : '#timeline li')
          .first()
          .waitFor();
        expect(await small.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
        expect(await seriousA11yViolations(small)).toEqual([]);
      }
    } finally {
      await narrow.close();
    }
    expect(problems).toEqual([]);
  });

  it('pages through the jobs with the cursor in the URL, newest first, as the API pages them', async () => {
    // A project on a repository that does not exist: its jobs fail at once, without the model.
    const other = await e.t.seed({ name: 'Elsewhere', repository: 'file:///nonexistent/inkwell-repo' });
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) {
      const r = await e.t.request('POST', `/v2/agent/${other.project.id}/job`, { key: other.adminKey, body: { prompt: `Job ${i}` } });
      expect(r.status, r.text).toBe(201);
      ids.unshift(r.body.id);
    }
    const { page, problems } = await watchedPage(context);
    await signInWithKey(page, e.t.baseUrl, other.adminKey);
    await page.goto(`${e.t.baseUrl}/jobs`);
    const listed = () => page.locator('#jobs tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-job-id')));
    await expect.poll(listed, WAIT).toEqual(ids.slice(0, 20));
    await page.getByRole('link', { name: 'Older jobs' }).click();
    await expect.poll(listed, WAIT).toEqual(ids.slice(20));
    const first = (await e.t.request('GET', `/v2/agent/${other.project.id}/jobs`, { key: other.adminKey })).body;
    expect(new URL(page.url()).searchParams.get('cursor')).toBe(first.nextCursor);
    await page.reload();
    await expect.poll(listed, WAIT).toEqual(ids.slice(20));
    expect(await page.getByRole('link', { name: 'Older jobs' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Newest jobs' }).click();
    await expect.poll(listed, WAIT).toEqual(ids.slice(0, 20));
    // Failed ones, once the worker has found the repository missing.
    await page.getByRole('navigation', { name: 'Status' }).getByRole('link', { name: 'failed' }).click();
    const statuses = () => page.locator('#jobs tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-status')));
    await expect.poll(statuses, WAIT).toEqual(Array(20).fill('failed'));
    expect(problems).toEqual([]);
  });
});
