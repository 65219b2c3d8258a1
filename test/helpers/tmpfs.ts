// A small tmpfs for full-disk tests: mounting needs root (CI runs as root); elsewhere the tests that need it
// are skipped visibly (`describe.skipIf(!canMountTmpfs && !process.env.CI)`: in CI a missing mount fails).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Mounts a tmpfs of `size` (e.g. '3m') at `dir`; false where mounting is not allowed. */
export function mountTmpfs(dir: string, size: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Unmounts (lazily: a process may still hold a file there). */
export function unmountTmpfs(dir: string): void {
  execFileSync('umount', ['-l', dir]);
}

/** Whether this process may mount a tmpfs (checked once, with a 64 KiB probe). */
export const canMountTmpfs = (() => {
  if (process.platform !== 'linux') return false;
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'inkwell-mount-probe-'));
  const ok = mountTmpfs(probe, '64k');
  if (ok) execFileSync('umount', [probe]);
  fs.rmSync(probe, { recursive: true, force: true });
  return ok;
})();
