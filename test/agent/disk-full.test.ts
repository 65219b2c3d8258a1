// A full disk under the workspace fails the turn with `storage_full` (not a crash, not a vague git_error),
// and the same turn succeeds once there is space again. The data directory is a small tmpfs filled to the
// brim (needs root, as in CI; skipped visibly elsewhere).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RunError } from '../../src/agent/execute.ts';
import { readBranchFile } from '../helpers/git.ts';
import { canMountTmpfs, mountTmpfs, unmountTmpfs } from '../helpers/tmpfs.ts';
import { type Harness, startHarness } from './harness.ts';

describe.skipIf(!canMountTmpfs && !process.env.CI)('a full disk under the workspace', () => {
  let h: Harness | null = null;
  let mounted: string | null = null;
  afterEach(async () => {
    if (mounted) unmountTmpfs(mounted);
    mounted = null;
    await h?.close();
    h = null;
  });

  it('fails the turn with storage_full; the next turn succeeds once space is back', async () => {
    h = await startHarness({
      script: [{ toolCalls: [{ name: 'write_file', args: { path: 'docs/new.md', content: 'new\n' } }] }, { text: 'Add a page' }],
    });
    expect(mountTmpfs(h.dataDir, '4m')).toBe(true);
    mounted = h.dataDir;
    // Fill it: nothing is left for the mirror's fetch.
    const filler = path.join(h.dataDir, 'filler');
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=64k'], { stdio: 'ignore' });
    } catch {
      // dd stops with ENOSPC: the point
    }
    const err = await h.execute().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RunError);
    expect((err as RunError).code).toBe('storage_full');
    expect((err as RunError).message).toMatch(/disk is full/);

    fs.rmSync(filler);
    const result = await h.execute();
    expect(result.commitSha).not.toBeNull();
    expect(readBranchFile(h.repo, 'inkwell/test1-update-intro', 'docs/new.md')).toBe('new\n');
  });
});
