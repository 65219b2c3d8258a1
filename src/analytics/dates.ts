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

/** Two ASCII digits at i as a number, or -1. */
function digits2(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/**
 * The common wire form `YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z` without regular expressions (ingest parses one
 * timestamp per event). Returns undefined when the value is not in exactly that form (the general parser
 * decides then), else what the general parser returns for it.
 */
function parseUtcDateTimeFast(v: string): number | null | undefined {
  const len = v.length;
  if (len !== 20 && (len < 22 || len > 30)) return undefined;
  const last = v.charCodeAt(len - 1);
  if (last !== 90 && last !== 122) return undefined; // Z z
  const t = v.charCodeAt(10);
  if (v.charCodeAt(4) !== 45 || v.charCodeAt(7) !== 45 || (t !== 84 && t !== 116) || v.charCodeAt(13) !== 58 || v.charCodeAt(16) !== 58) return undefined;
  const y1 = digits2(v, 0);
  const y2 = digits2(v, 2);
  const mo = digits2(v, 5);
  const d = digits2(v, 8);
  const hh = digits2(v, 11);
  const mm = digits2(v, 14);
  const ss = digits2(v, 17);
  if (y1 < 0 || y2 < 0 || mo < 0 || d < 0 || hh < 0 || mm < 0 || ss < 0) return undefined;
  let frac = 0;
  if (len > 20) {
    if (v.charCodeAt(19) !== 46) return undefined; // .
    for (let i = 20; i < len - 1; i++) {
      const c = v.charCodeAt(i);
      if (c < 48 || c > 57) return undefined;
    }
    // Milliseconds (the usual case): the integer itself — equal to the general parser's expression for every
    // 3-digit value (tested exhaustively). Other lengths use that expression (identical rounding).
    frac =
      len === 24
        ? (v.charCodeAt(20) - 48) * 100 + (v.charCodeAt(21) - 48) * 10 + (v.charCodeAt(22) - 48)
        : Math.floor(Number(`0.${v.slice(20, len - 1)}`) * 1000);
  }
  const base = utcDateMs(y1 * 100 + y2, mo, d);
  if (base === null || hh > 23 || mm > 59 || ss > 59) return null;
  return base + ((hh * 60 + mm) * 60 + ss) * 1000 + frac;
}

/** Parses a date or date-time to epoch ms (UTC), or null when it is not a valid one. */
export function parseDateOrDateTime(value: string): number | null {
  const fast = parseUtcDateTimeFast(value);
  return fast === undefined ? parseDateOrDateTimeGeneral(value) : fast;
}

/** parseDateOrDateTime by the regular expressions alone (every accepted form). Exported for tests. */
export function parseDateOrDateTimeGeneral(value: string): number | null {
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
