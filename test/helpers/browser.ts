// A real Chromium for tests: Debian's `chromium` package driven by playwright-core (which brings no browser
// of its own). `.ci/run` installs the package; a developer machine without it skips the browser tests with a
// message saying how to get it, while under CI=true a missing browser fails the run instead of hiding it.
import fs from 'node:fs';
import os from 'node:os';
import { type Browser, chromium, type LaunchOptions } from 'playwright-core';

/** Where Debian's package puts it; INKWELL_CHROMIUM points elsewhere (another distribution, a local build). */
export const CHROMIUM_PATH = process.env.INKWELL_CHROMIUM ?? '/usr/bin/chromium';

const INSTALL_HINT = 'apt-get install -y --no-install-recommends chromium (or set INKWELL_CHROMIUM to a Chromium binary)';

/**
 * Null when Chromium is there; otherwise why the browser tests are skipped. Throws under CI=true: CI must
 * run them, so a machine without the browser is a failed setup, not a reason to pass.
 */
export function chromiumMissing(): string | null {
  if (fs.existsSync(CHROMIUM_PATH)) return null;
  const reason = `Chromium not found at ${CHROMIUM_PATH}: ${INSTALL_HINT}`;
  if (process.env.CI === 'true') throw new Error(`${reason} (CI=true: the browser tests must run)`);
  return reason;
}

/**
 * Launches headless Chromium. `hostMap` sends every host name ending in `.test` to 127.0.0.1, so a test can
 * serve pages from distinct origins (search.test, docs.test) on local ports.
 */
export async function launchChromium(options: { hostMap?: boolean } = {}): Promise<Browser> {
  const args: string[] = [];
  // Chromium's sandbox refuses to start as root (CI and these machines run as root).
  if (os.userInfo().uid === 0) args.push('--no-sandbox');
  if (options.hostMap) args.push('--host-resolver-rules=MAP *.test 127.0.0.1');
  const launch: LaunchOptions = { executablePath: CHROMIUM_PATH, headless: true, args };
  return chromium.launch(launch);
}
