import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BACKGROUND_THREAD_LIMITS } from '../../src/lib/thread-heaps.ts';

describe('background threads take their own young generation under inkwell serve’s V8 flags', () => {
  it('a worker’s maxYoungGenerationSizeMb counts only once letThreadsSizeTheirHeaps has run; the serving thread keeps its size', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--max-semi-space-size=32', '--import', 'tsx', path.join(import.meta.dirname, 'thread-heaps-probe.ts')],
      { timeout: 60_000 },
    );
    const r = JSON.parse(stdout.trim()) as { oldMb: number; main: number; before: number; after: number; mainAfter: number };
    const young = BACKGROUND_THREAD_LIMITS.maxYoungGenerationSizeMb;
    // Before: the process-wide 32 MiB semi-spaces win over the worker's limit (a young generation of 3 × 32 MiB).
    expect(r.before - r.oldMb).toBeGreaterThanOrEqual(3 * 32);
    // After: the worker's own limit (V8 may round it up to a whole number of pages, never to the process's size).
    expect(r.after - r.oldMb).toBeLessThanOrEqual(3 * young);
    expect(r.after).toBeLessThan(r.before);
    // This thread's heap was sized when it started.
    expect(r.mainAfter).toBe(r.main);
  });
});
