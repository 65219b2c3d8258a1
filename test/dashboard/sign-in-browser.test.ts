// Signing in to the dashboard in real Chromium against a running server: with an admin key and with the
// one-time link `inkwell dashboard` prints (run as a real process), signing out, the session ending when its
// key is revoked, a cookie-borne change refused without the CSRF token, keyboard reach, and axe-core on
// every page shown (no serious or critical violations).
import type { BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { runJson } from '../cli/run-cli.ts';
import { type Seeded, startTestApp, type TestApp } from '../helpers/app.ts';
import { seriousA11yViolations } from '../helpers/axe.ts';
import { describeInChromium, signInWithKey, watchedPage } from '../helpers/dashboard.ts';

describeInChromium('dashboard sign-in in Chromium', (dialect, chromium) => {
  let t: TestApp;
  let s: Seeded;
  let context: BrowserContext;
  beforeAll(async () => {
    t = await startTestApp(dialect);
  });
  afterAll(async () => t?.close());
  beforeEach(async () => {
    s = await t.seed({ name: 'Acme Docs' });
    context = await chromium().newContext();
  });
  afterEach(async () => context?.close());

  it('sends a signed-out visitor to sign-in, signs in with an admin key and comes back to the page asked for', async () => {
    const { page, problems } = await watchedPage(context);
    await page.goto(`${t.baseUrl}/settings`);
    await page.waitForURL(/\/signin\?next=%2Fsettings$/);
    expect(await seriousA11yViolations(page)).toEqual([]);
    // A wrong key is refused with the API's message, on the page.
    await page.getByLabel('Admin key').fill('ink_notakeyatall');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/unknown or revoked|Unauthorized/);
    await page.getByLabel('Admin key').fill(s.adminKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/settings$/);
    await expect.poll(() => page.getByTestId('project-name').textContent()).toBe('Acme Docs');
    expect(await page.locator('header').textContent()).toContain(s.project.id);
    expect(await seriousA11yViolations(page)).toEqual([]);
    // The browser holds only the session cookie: HttpOnly, SameSite=Strict; the key is nowhere in the page's storage.
    const cookies = await context.cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([['inkwell_session', true, 'Strict']]);
    expect(await page.evaluate(() => document.cookie + JSON.stringify(localStorage) + JSON.stringify(sessionStorage))).not.toContain('ink_');
    // A reload keeps the page and the session.
    await page.reload();
    await expect.poll(() => page.getByTestId('project-name').textContent()).toBe('Acme Docs');
    expect(new URL(page.url()).pathname).toBe('/settings');
    expect(problems).toEqual([]);
  });

  it('refuses a change the page makes with the cookie but without the CSRF token', async () => {
    const { page } = await watchedPage(context);
    await signInWithKey(page, t.baseUrl, s.adminKey);
    const answer = await page.evaluate(async (projectId) => {
      const res = await fetch(`/v1/projects/${projectId}/keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"kind":"admin"}',
      });
      return { status: res.status, body: await res.json() };
    }, s.project.id);
    expect(answer.status).toBe(403);
    expect(answer.body.code).toBe('csrf_token_invalid');
    const keys = await t.request('GET', `/v1/projects/${s.project.id}/keys`, { key: s.adminKey });
    expect(keys.body.keys).toHaveLength(3);
  });

  it('signs in once with the link `inkwell dashboard` prints; the token leaves the address bar; a second use is refused', async () => {
    const { link } = await runJson(['dashboard', '--project', s.project.id, '--url', t.baseUrl, '--json'], t.testDb.env);
    expect(link).toMatch(/\/signin#token=ikl_/);
    const { page, problems } = await watchedPage(context);
    await page.goto(link);
    await page.waitForURL(/\/analytics$/);
    expect(page.url()).not.toContain('token');
    await expect.poll(() => page.getByTestId('project-name').textContent()).toBe('Acme Docs');
    expect(problems).toEqual([]);
    const other = await chromium().newContext();
    try {
      const again = await other.newPage();
      await again.goto(link);
      await expect.poll(() => again.getByRole('alert').textContent()).toContain('already used');
      expect(new URL(again.url()).pathname).toBe('/signin');
      expect(await seriousA11yViolations(again)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('signs out: the next page load goes to sign-in', async () => {
    const { page } = await watchedPage(context);
    await signInWithKey(page, t.baseUrl, s.adminKey);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/signin$/);
    await page.goto(`${t.baseUrl}/analytics?range=7d`);
    await page.waitForURL(/\/signin\?next=%2Fanalytics%3Frange%3D7d$/);
    expect(await page.evaluate(async () => (await fetch('/v1/session')).status)).toBe(401);
  });

  it('ends the session when its key is revoked: the next page load, or the next API call, goes to sign-in', async () => {
    const { page } = await watchedPage(context);
    await signInWithKey(page, t.baseUrl, s.adminKey);
    // The analytics page has loaded (this project has no events yet) before the key goes.
    await page.getByTestId('no-events').waitFor();
    const revoked = await t.request('DELETE', `/v1/projects/${s.project.id}/keys/${s.adminKeyId}`, { key: s.adminKey });
    expect(revoked.status).toBe(200);
    // Without a reload: the next page's API calls are answered 401 and the dashboard goes to sign-in.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.waitForURL(/\/signin\?next=%2Fsettings$/);
    // And a page load goes there straight away.
    await page.goto(`${t.baseUrl}/analytics?range=90d`);
    await page.waitForURL(/\/signin\?next=%2Fanalytics%3Frange%3D90d$/);
    await expect.poll(() => page.getByLabel('Admin key').isVisible()).toBe(true);
  });

  it('is reachable by keyboard: skip link, navigation and sign-out take focus in order', async () => {
    const { page } = await watchedPage(context);
    await signInWithKey(page, t.baseUrl, s.adminKey);
    await expect.poll(() => page.getByTestId('project-name').isVisible()).toBe(true);
    const focused: string[] = [];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press('Tab');
      focused.push(await page.evaluate(() => `${document.activeElement?.tagName} ${document.activeElement?.textContent?.trim()}`));
    }
    expect(focused).toEqual(['A Skip to content', 'A Inkwell', 'A Analytics', 'A Jobs', 'A Settings', 'BUTTON Sign out']);
    // The focus ring is drawn (an outline wider than none).
    expect(await page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle)).toBe('solid');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/settings$/);
    expect(await seriousA11yViolations(page)).toEqual([]);
  });
});
