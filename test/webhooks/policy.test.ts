import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { nextState, retryDelay, webhookPayload } from '../../src/jobs/webhook-policy.ts';

describe('webhook retry policy', () => {
  const policy = { retryScheduleMs: [5_000, 30_000, 120_000], maxAgeMs: 24 * 3_600_000 };

  it('follows the schedule and repeats its last entry', () => {
    expect([1, 2, 3, 4, 10].map((n) => retryDelay(n, policy.retryScheduleMs))).toEqual([5_000, 30_000, 120_000, 120_000, 120_000]);
    expect(() => retryDelay(1, [])).toThrow();
  });

  it('retries until the maximum age, then fails', () => {
    const created = 1_000_000;
    expect(nextState({ kind: 'retryable', statusCode: 500, error: 'HTTP 500' }, 1, created, created + 10, policy)).toEqual({
      status: 'pending',
      nextAttemptAt: created + 10 + 5_000,
    });
    const late = created + policy.maxAgeMs - 60_000;
    expect(nextState({ kind: 'retryable', statusCode: null, error: 'ECONNREFUSED' }, 12, created, late, policy)).toEqual({ status: 'failed' });
    expect(nextState({ kind: 'permanent', statusCode: null, error: 'refused' }, 1, created, created, policy)).toEqual({ status: 'failed' });
    expect(nextState({ kind: 'cancelled', error: 'gone' }, 1, created, created, policy)).toEqual({ status: 'cancelled' });
    expect(nextState({ kind: 'delivered', statusCode: 200 }, 3, created, created + 7, policy)).toEqual({ status: 'delivered', deliveredAt: created + 7 });
  });

  it('spreads the default schedule over 24 hours in about a dozen attempts', () => {
    const cfg = loadConfig({}).webhooks;
    expect(cfg.retryScheduleMs.slice(0, 3)).toEqual([5_000, 30_000, 120_000]);
    let t = 0;
    let attempts = 1;
    for (;;) {
      const s = nextState({ kind: 'retryable', statusCode: 500, error: '' }, attempts, 0, t, cfg);
      if (s.status !== 'pending') break;
      t = s.nextAttemptAt;
      attempts++;
    }
    expect(attempts).toBeGreaterThanOrEqual(10);
    expect(attempts).toBeLessThanOrEqual(16);
    expect(t).toBeLessThanOrEqual(cfg.maxAgeMs);
    expect(t).toBeGreaterThan(cfg.maxAgeMs - 4 * 3_600_000);
  });

  it('parses INKWELL_WEBHOOK_RETRY_SCHEDULE and names the variable on bad input', () => {
    expect(loadConfig({ INKWELL_WEBHOOK_RETRY_SCHEDULE: '100ms, 2s,1m' }).webhooks.retryScheduleMs).toEqual([100, 2_000, 60_000]);
    expect(() => loadConfig({ INKWELL_WEBHOOK_RETRY_SCHEDULE: '5 seconds' })).toThrow(/INKWELL_WEBHOOK_RETRY_SCHEDULE/);
  });

  it('builds the {type, timestamp, data} payload', () => {
    expect(JSON.parse(webhookPayload({ type: 'job.failed', data: { job: { id: 'j' } } }, Date.UTC(2026, 10, 21, 8)))).toEqual({
      type: 'job.failed',
      timestamp: '2026-11-21T08:00:00.000Z',
      data: { job: { id: 'j' } },
    });
  });
});
