// The dashboard in a test browser: one Chromium per file over a running server on each database, a page that
// records what the browser complains about, and signing in.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe } from 'vitest';
import { chromiumMissing, launchChromium } from './browser.ts';
import { type DialectName, describeEachDialect } from './db.ts';

/**
 * A suite run in Chromium (skipped with a message where it is missing, failed under CI) once per database:
 * `body` gets the dialect and the browser (launched before its tests run).
 */
export function describeInChromium(title: string, body: (dialect: DialectName, browser: () => Browser) => void): void {
  const missing = chromiumMissing();
  if (missing) console.warn(`${title}: skipped: ${missing}`);
  (missing ? describe.skip : describe)(title, () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    });
    afterAll(async () => browser?.close());
    describeEachDialect('against a running server', (dialect) => body(dialect, () => browser));
  });
}

/** A page that records what the browser complains about (CSP refusals, script errors). */
export async function watchedPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    // A 401 or 404 the dashboard asked for and handled is logged by Chromium as a failed resource; those are expected.
    if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) problems.push(`console: ${msg.text()}`);
  });
  return { page, problems };
}

export async function signInWithKey(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/signin`);
  await page.getByLabel('Admin key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/analytics$/);
}
