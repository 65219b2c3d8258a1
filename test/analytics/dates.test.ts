import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS, dayToIso, parseDateOrDateTime, parseDateOrDateTimeGeneral, parseDateRange, utcDateMs, utcDay } from '../../src/analytics/dates.ts';

const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / DAY_MS;

describe('utcDay / dayToIso', () => {
  it('maps epoch ms to UTC day numbers', () => {
    expect(utcDay(0)).toBe(0);
    expect(utcDay(DAY_MS - 1)).toBe(0);
    expect(utcDay(DAY_MS)).toBe(1);
    expect(utcDay(-1)).toBe(-1);
    expect(dayToIso(0)).toBe('1970-01-01');
    expect(dayToIso(day('2024-02-29'))).toBe('2024-02-29');
  });

  it('round-trips', () => {
    fc.assert(
      fc.property(fc.integer({ min: -700_000, max: 2_900_000 }), (d) => {
        expect(day(dayToIso(d))).toBe(d);
        expect(parseDateRange(dayToIso(d), dayToIso(d + 1))).toEqual({ ok: true, fromDay: d, toDay: d + 1 });
      }),
    );
  });
});

describe('utcDateMs (arithmetic)', () => {
  // The reference: JavaScript's own proleptic Gregorian calendar.
  function reference(y: number, m: number, d: number): number | null {
    const date = new Date(0);
    date.setUTCFullYear(y, m - 1, d);
    return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d ? date.getTime() : null;
  }

  it('agrees with Date for every day of leap and common years, century rules included', () => {
    for (const y of [0, 1, 4, 99, 100, 400, 1582, 1900, 1970, 1999, 2000, 2024, 2025, 2100, 2400, 9999]) {
      for (let m = 1; m <= 12; m++) for (let d = 0; d <= 32; d++) expect(utcDateMs(y, m, d), `${y}-${m}-${d}`).toBe(d < 1 ? null : reference(y, m, d));
    }
  });

  it('agrees with Date on random dates (valid and invalid)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }), (y, m, d) => {
        expect(utcDateMs(y, m, d)).toBe(m < 1 || m > 12 || d < 1 ? null : reference(y, m, d));
      }),
    );
  });
});

describe('parseDateOrDateTime fast path (YYYY-MM-DDTHH:MM:SS[.f]Z)', () => {
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  it('agrees with the general parser on generated UTC date-times, valid and invalid', () => {
    fc.assert(
      fc.property(
        fc.record({
          y: fc.integer({ min: 0, max: 9999 }),
          mo: fc.integer({ min: 0, max: 13 }),
          d: fc.integer({ min: 0, max: 32 }),
          h: fc.integer({ min: 0, max: 25 }),
          mi: fc.integer({ min: 0, max: 61 }),
          s: fc.integer({ min: 0, max: 61 }),
          frac: fc.option(fc.stringMatching(/^\d{0,10}$/)),
          t: fc.constantFrom('T', 't'),
          z: fc.constantFrom('Z', 'z'),
        }),
        (r) => {
          const v = `${pad(r.y, 4)}-${pad(r.mo, 2)}-${pad(r.d, 2)}${r.t}${pad(r.h, 2)}:${pad(r.mi, 2)}:${pad(r.s, 2)}${r.frac === null ? '' : `.${r.frac}`}${r.z}`;
          expect(parseDateOrDateTime(v)).toBe(parseDateOrDateTimeGeneral(v));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('agrees on every millisecond fraction and on near-misses of the form', () => {
    for (let ms = 0; ms < 1000; ms++) {
      for (const f of [pad(ms, 3), `${pad(ms, 3)}999999`, String(ms)]) {
        const v = `2026-09-30T23:59:59.${f}Z`;
        expect(parseDateOrDateTime(v)).toBe(parseDateOrDateTimeGeneral(v));
      }
    }
    for (const v of [
      '2026-09-30T23:59:59.Z',
      '2026-09-30T23:59:59.1234567890Z',
      '2026-09-30 23:59:59Z',
      '2026-09-30T23:59:5aZ',
      '+026-09-30T23:59:59Z',
      '2026-09-30T23:59:59+00:00',
    ]) {
      expect(parseDateOrDateTime(v)).toBe(parseDateOrDateTimeGeneral(v));
    }
  });
});

describe('parseDateOrDateTime', () => {
  it.each([
    ['2025-01-31', Date.UTC(2025, 0, 31)],
    ['2024-02-29', Date.UTC(2024, 1, 29)],
    ['0099-01-01', Date.parse('0099-01-01T00:00:00Z')],
    ['2025-01-31T10:20:30Z', Date.UTC(2025, 0, 31, 10, 20, 30)],
    ['2025-01-31T10:20:30.5Z', Date.UTC(2025, 0, 31, 10, 20, 30, 500)],
    ['2025-01-31T10:20:30.123456789Z', Date.UTC(2025, 0, 31, 10, 20, 30, 123)],
    ['2025-01-31T10:20Z', Date.UTC(2025, 0, 31, 10, 20)],
    ['2025-01-31T10:20:30', Date.UTC(2025, 0, 31, 10, 20, 30)],
    ['2025-01-31t10:20:30z', Date.UTC(2025, 0, 31, 10, 20, 30)],
    ['2025-01-31T01:00:00+02:00', Date.UTC(2025, 0, 30, 23)],
    ['2025-01-31T23:00:00-0200', Date.UTC(2025, 1, 1, 1)],
    ['2025-01-31T23:00:00-02', Date.UTC(2025, 1, 1, 1)],
  ])('%j', (s, ms) => {
    expect(parseDateOrDateTime(s)).toBe(ms);
  });

  it.each([
    '',
    ' 2025-01-01',
    '2025-01-01 ',
    '2025-1-01',
    '20250101',
    '2025-02-29',
    '2025-02-30',
    '2025-13-01',
    '2025-00-10',
    '2025-01-00',
    '2025-01-32',
    '2025-01-01T24:00:00Z',
    '2025-01-01T23:60:00Z',
    '2025-01-01T23:00:60Z',
    '2025-01-01T23:00:00+24:00',
    '2025-01-01T23:00:00+01:60',
    '2025-01-01T23Z',
    '2025-01-01 10:00:00Z',
    'yesterday',
    '1735689600000',
    '2025-01-01T10:00:00.Z',
  ])('%j is invalid', (s) => {
    expect(parseDateOrDateTime(s)).toBeNull();
  });
});

describe('parseDateRange', () => {
  it('absent bounds are unbounded', () => {
    expect(parseDateRange()).toEqual({ ok: true, fromDay: null, toDay: null });
    expect(parseDateRange('2025-01-01')).toEqual({ ok: true, fromDay: day('2025-01-01'), toDay: null });
    expect(parseDateRange(undefined, '2025-01-01')).toEqual({ ok: true, fromDay: null, toDay: day('2025-01-01') });
  });

  it('date-times count by their UTC date', () => {
    expect(parseDateRange('2025-01-01T23:59:59Z', '2025-01-03T00:00:00Z')).toEqual({ ok: true, fromDay: day('2025-01-01'), toDay: day('2025-01-03') });
    // 01:00 at +02:00 is still the previous UTC day
    expect(parseDateRange('2025-01-02T01:00:00+02:00')).toEqual({ ok: true, fromDay: day('2025-01-01'), toDay: null });
  });

  it('equal bounds are valid (an empty range)', () => {
    expect(parseDateRange('2025-01-01', '2025-01-01')).toEqual({ ok: true, fromDay: day('2025-01-01'), toDay: day('2025-01-01') });
    expect(parseDateRange('2025-01-01T05:00:00Z', '2025-01-01T20:00:00Z')).toEqual({ ok: true, fromDay: day('2025-01-01'), toDay: day('2025-01-01') });
  });

  it('dateFrom after dateTo is an error naming dateFrom', () => {
    const r = parseDateRange('2025-01-02', '2025-01-01');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.details).toHaveLength(1);
      expect(r.details[0].path).toBe('dateFrom');
      expect(r.details[0].message).toContain('2025-01-01');
    }
  });

  it('unparseable values are errors naming each parameter', () => {
    const r = parseDateRange('nope', '2025-02-30');
    expect(r).toEqual({
      ok: false,
      details: [
        { path: 'dateFrom', message: expect.stringContaining('dateFrom') },
        { path: 'dateTo', message: expect.stringContaining('dateTo') },
      ],
    });
    const only = parseDateRange('2025-01-01', '');
    expect(only.ok === false && only.details.map((d) => d.path)).toEqual(['dateTo']);
  });

  it('never throws and reports only the named parameters', () => {
    fc.assert(
      fc.property(fc.option(fc.string({ maxLength: 40 }), { nil: undefined }), fc.option(fc.string({ maxLength: 40 }), { nil: undefined }), (a, b) => {
        const r = parseDateRange(a, b);
        if (!r.ok) for (const d of r.details) expect(['dateFrom', 'dateTo']).toContain(d.path);
        else if (r.fromDay !== null && r.toDay !== null) expect(r.fromDay).toBeLessThanOrEqual(r.toDay);
      }),
    );
  });
});
