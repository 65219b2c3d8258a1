// The shared abortable sleep and Retry-After parser (model loop and code hosts).
import { describe, expect, it } from 'vitest';
import { parseRetryAfter, sleep } from '../../src/lib/wait.ts';

describe('sleep', () => {
  it('resolves after the time', async () => {
    await expect(sleep(1)).resolves.toBeUndefined();
    await expect(sleep(1, new AbortController().signal)).resolves.toBeUndefined();
  });

  it('rejects with the signal’s own reason, at once when already stopped and as soon as it stops', async () => {
    const reason = new Error('stopped');
    await expect(sleep(600_000, AbortSignal.abort(reason))).rejects.toBe(reason);
    const controller = new AbortController();
    const pending = sleep(600_000, controller.signal);
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  it('reads seconds and HTTP dates; null for absent or unreadable values', () => {
    expect(parseRetryAfter('30', now)).toBe(30_000);
    expect(parseRetryAfter(' 1.5 ', now)).toBe(1500);
    expect(parseRetryAfter('Sun, 01 Mar 2026 12:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Sun, 01 Mar 2026 11:00:00 GMT', now)).toBe(0);
    for (const v of [undefined, null, '', '  ', 'soon']) expect(parseRetryAfter(v, now)).toBeNull();
  });
});
