// The analytics page's range in the URL: presets relative to today (UTC), custom days, and bad input.
import { describe, expect, it } from 'vitest';
import { apiRange, parseRange, rangeQuery } from '../../src/dashboard/range.ts';

const NOW = Date.parse('2026-03-10T23:59:00Z');

describe('analytics range', () => {
  it('reads the presets as UTC days ending today, and the API range ends the day after', () => {
    expect(parseRange({ range: '7d' }, NOW)).toEqual({ kind: '7d', from: '2026-03-04', to: '2026-03-10' });
    expect(parseRange({ range: '90d' }, NOW)).toMatchObject({ from: '2025-12-11', to: '2026-03-10' });
    expect(parseRange({ range: 'month' }, NOW)).toMatchObject({ from: '2026-03-01', to: '2026-03-10' });
    expect(parseRange({}, NOW)).toMatchObject({ kind: '30d', from: '2026-02-09' });
    expect(parseRange({ range: 'forever' }, NOW)).toMatchObject({ kind: '30d' });
    expect(apiRange(parseRange({ range: '7d' }, NOW))).toEqual({ dateFrom: '2026-03-04', dateTo: '2026-03-11' });
  });

  it('reads custom days (last day included) and writes them back', () => {
    const r = parseRange({ from: '2024-02-28', to: '2024-02-29' }, NOW);
    expect(r).toEqual({ kind: 'custom', from: '2024-02-28', to: '2024-02-29' });
    expect(apiRange(r)).toEqual({ dateFrom: '2024-02-28', dateTo: '2024-03-01' });
    expect(rangeQuery(r)).toBe('from=2024-02-28&to=2024-02-29');
    expect(rangeQuery({ kind: 'month', from: '', to: '' })).toBe('range=month');
  });

  it('falls back to the default range, saying why, for days that are not days or in the wrong order', () => {
    for (const q of [{ from: '2026-02-30', to: '2026-03-01' }, { from: '2026-03-01' }, { from: 'x', to: '2026-03-01' }]) {
      expect(parseRange(q, NOW)).toMatchObject({ kind: '30d', problem: 'from and to must be days written YYYY-MM-DD' });
    }
    expect(parseRange({ from: '2026-03-02', to: '2026-03-01' }, NOW).problem).toContain('must not be after');
  });
});
