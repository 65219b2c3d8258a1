// Strict date parsing for the export's query parameters (SPEC 4.4). Pure: no I/O.
//
// Days are UTC calendar days, as day numbers: Math.floor(ms / 86_400_000) (day 0 = 1970-01-01).
// Accepted inputs: `YYYY-MM-DD`, or an ISO 8601 / RFC 3339 date-time `YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM|±HHMM]`
// (a date-time without an offset is read as UTC), which counts by its UTC date. Anything else is an error
// naming the parameter. Calendar validity is checked (2025-02-30 is an error).

export const DAY_MS = 86_400_000;

export type DateRangeResult = { ok: true; fromDay: number | null; toDay: number | null } | { ok: false; details: { message: string; path: string }[] };

export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** 'YYYY-MM-DD' of a UTC day number. */
export function dayToIso(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?$/;

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

/**
 * Epoch ms of a valid calendar date (UTC midnight, proleptic Gregorian), or null. Pure arithmetic (days from
 * the civil date, H. Hinnant's algorithm) instead of a Date object: ingest parses one timestamp per event.
 */
export function utcDateMs(y: number, m: number, d: number): number | null {
  if (!Number.isInteger(y) || !Number.isInteger(m) || !Number.isInteger(d) || m < 1 || m > 12 || d < 1) return null;
  const monthDays = m === 2 && isLeapYear(y) ? 29 : (MONTH_DAYS[m - 1] as number);
  if (d > monthDays) return null;
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return (era * 146_097 + doe - 719_468) * DAY_MS;
}

/** Parses a date or date-time to epoch ms (UTC), or null when it is not a valid one. */
export function parseDateOrDateTime(value: string): number | null {
  const date = DATE_RE.exec(value);
  if (date) return utcDateMs(Number(date[1]), Number(date[2]), Number(date[3]));
  const dt = DATE_TIME_RE.exec(value);
  if (!dt) return null;
  const base = utcDateMs(Number(dt[1]), Number(dt[2]), Number(dt[3]));
  if (base === null) return null;
  const hh = Number(dt[4]);
  const mm = Number(dt[5]);
  const ss = dt[6] === undefined ? 0 : Number(dt[6]);
  if (hh > 23 || mm > 59 || ss > 59) return null;
  const frac = dt[7] === undefined ? 0 : Math.floor(Number(`0.${dt[7]}`) * 1000);
  let offsetMin = 0;
  const off = dt[8];
  if (off !== undefined && off.toUpperCase() !== 'Z') {
    const digits = off.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return null;
    offsetMin = (off[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  return base + ((hh * 60 + mm) * 60 + ss) * 1000 + frac - offsetMin * 60_000;
}

function parseDay(value: string | undefined, path: string, details: { message: string; path: string }[]): number | null {
  if (value === undefined) return null;
  const ms = typeof value === 'string' ? parseDateOrDateTime(value) : null;
  if (ms === null) {
    details.push({ path, message: `${path} must be a date (YYYY-MM-DD) or an ISO 8601 date-time, got ${JSON.stringify(String(value).slice(0, 64))}` });
    return null;
  }
  return utcDay(ms);
}

/**
 * Parses the export's date range: fromDay inclusive, toDay exclusive (UTC day numbers; null = unbounded).
 * dateFrom after dateTo is an error naming dateFrom; equal bounds are valid (an empty range).
 */
export function parseDateRange(dateFrom?: string, dateTo?: string): DateRangeResult {
  const details: { message: string; path: string }[] = [];
  const fromDay = parseDay(dateFrom, 'dateFrom', details);
  const toDay = parseDay(dateTo, 'dateTo', details);
  if (details.length > 0) return { ok: false, details };
  if (fromDay !== null && toDay !== null && fromDay > toDay) {
    return { ok: false, details: [{ path: 'dateFrom', message: `dateFrom (${dayToIso(fromDay)}) must not be after dateTo (${dayToIso(toDay)})` }] };
  }
  return { ok: true, fromDay, toDay };
}
