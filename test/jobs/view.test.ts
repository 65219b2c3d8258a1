// The job object (pure): times as ISO 8601 with milliseconds (memoised), nullable fields, hidden PR link while active.
import { describe, expect, it } from 'vitest';
import type { JobViewRow } from '../../src/jobs/store.ts';
import { toJobView } from '../../src/jobs/view.ts';

const row = (over: Partial<JobViewRow> = {}): JobViewRow => ({
  id: 'job_1',
  status: 'completed',
  repository: 'https://github.com/acme/docs',
  ref: 'main',
  model: 'openai-compatible/m',
  pr_url: 'https://github.com/acme/docs/pull/7',
  created_at: Date.UTC(2026, 10, 21, 8, 0, 0, 5),
  archived_at: null,
  branch: 'inkwell/abc',
  updated_at: Date.UTC(2026, 10, 21, 8, 0, 1, 250),
  error_code: null,
  error_message: null,
  input_tokens: 12,
  output_tokens: 34,
  cost_usd: null,
  ...over,
});

describe('toJobView', () => {
  it('maps a row to the wire object', () => {
    expect(toJobView(row())).toEqual({
      id: 'job_1',
      status: 'completed',
      source: { repository: 'https://github.com/acme/docs', ref: 'main' },
      model: 'openai-compatible/m',
      prLink: 'https://github.com/acme/docs/pull/7',
      createdAt: '2026-11-21T08:00:00.005Z',
      archivedAt: null,
      branch: 'inkwell/abc',
      updatedAt: '2026-11-21T08:00:01.250Z',
      error: null,
      usage: { inputTokens: 12, outputTokens: 34 },
    });
  });

  it('shows the spend once it is known, as stored', () => {
    expect(toJobView(row({ cost_usd: 0.0123 })).usage).toEqual({ inputTokens: 12, outputTokens: 34, costUsd: 0.0123 });
    expect('costUsd' in toJobView(row()).usage).toBe(false);
  });

  it('hides the pull request while active; shows archive time and error', () => {
    expect(toJobView(row({ status: 'active' })).prLink).toBeNull();
    const v = toJobView(row({ status: 'failed', archived_at: Date.UTC(2026, 0, 1), error_code: 'agent_failed', error_message: null }));
    expect(v.archivedAt).toBe('2026-01-01T00:00:00.000Z');
    expect(v.error).toEqual({ code: 'agent_failed', message: '' });
  });

  it('formats every time exactly, across more distinct times than the memo holds', () => {
    const base = Date.UTC(2026, 5, 1);
    for (let i = 0; i < 10_000; i += 1) {
      const ms = base + i * 997;
      const v = toJobView(row({ created_at: ms, updated_at: ms + 1 }));
      expect(v.createdAt).toBe(new Date(ms).toISOString());
      expect(v.updatedAt).toBe(new Date(ms + 1).toISOString());
    }
  });
});
