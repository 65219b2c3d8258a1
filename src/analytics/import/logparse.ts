// Access-log line parsers for `inkwell analytics import` (SPEC 4.1). Pure: no I/O.
//
// parseCombinedLine: nginx / Apache "combined" format (and "common" format, which lacks referrer and user agent):
//   host ident authuser [dd/Mon/yyyy:HH:MM:SS ±hhmm] "METHOD target PROTOCOL" status bytes "referrer" "user-agent" …
// Quoted fields may contain escaped quotes (Apache \" , nginx \x22); anything after the user agent is ignored
// (nginx configs often append fields); a common-format line must end after the byte count. The timestamp becomes ISO 8601 UTC. A "-" user agent (the request had
// no User-Agent header) becomes "" so classification sees an empty header; a "-" referrer is dropped.
// Returns null for lines that are not in the format, or whose request line has no target (e.g. "-" for a
// request the server could not parse), or whose status is not 100–599.
//
// parseJsonLine: one JSON object of the ingest event shape per line. Unknown keys are ignored (log pipelines
// add their own); a numeric `timestamp` is read as epoch milliseconds (or seconds when below 1e11) and a
// numeric-string `status` as a number. A known key with another type makes the line invalid (null).
import { isAscii } from 'node:buffer';
import type { RawEvent } from '../ingest/event.ts';

export type { RawEvent };

const MONTHS: Record<string, number> = { jan: 0, feb: 1, mar: 2, apr: 3, may: 4, jun: 5, jul: 6, aug: 7, sep: 8, oct: 9, nov: 10, dec: 11 };

const QUOTED = '"((?:[^"\\\\]|\\\\.)*)"';
const COMBINED_RE = new RegExp(`^(\\S+) \\S+ \\S+ \\[([^\\]]+)\\] ${QUOTED} (\\d{3}) (?:\\d+|-)(?: ${QUOTED} ${QUOTED}(?:\\s.*)?)?\\s*$`);
const CLF_TIME_RE = /^(\d{2})\/([A-Za-z]{3})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/;

function unescapeLogString(s: string): string {
  return s.replace(/\\(x[0-9a-fA-F]{2}|.)/g, (_m, e: string) => {
    if (e.length === 3 && (e[0] === 'x' || e[0] === 'X')) return String.fromCharCode(Number.parseInt(e.slice(1), 16));
    if (e === 'n') return '\n';
    if (e === 't') return '\t';
    return e;
  });
}

/**
 * Epoch ms of a CLF time's parts (month 0-based), or null when they are not a real time: hours to 23, minutes to
 * 59, seconds to 60 (a leap second counts as :59), offset hours to 23 and minutes to 59, a calendar day.
 */
function clfMs(day: number, month: number, year: number, hh: number, mm: number, ss: number, negative: boolean, oh: number, om: number): number | null {
  if (hh > 23 || mm > 59 || ss > 60 || oh > 23 || om > 59) return null;
  const d = new Date(0);
  d.setUTCFullYear(year, month, day);
  if (d.getUTCMonth() !== month || d.getUTCDate() !== day) return null;
  const offsetMin = (negative ? -1 : 1) * (oh * 60 + om);
  return d.getTime() + ((hh * 60 + mm) * 60 + Math.min(ss, 59)) * 1000 - offsetMin * 60_000;
}

/** `10/Oct/2000:13:55:36 -0700` → ISO 8601 UTC, or null. */
export function parseClfTime(s: string): string | null {
  const m = CLF_TIME_RE.exec(s);
  if (!m) return null;
  const month = MONTHS[m[2].toLowerCase()];
  if (month === undefined) return null;
  const [day, year, hh, mm, ss, oh, om] = [m[1], m[3], m[4], m[5], m[6], m[8], m[9]].map(Number);
  const ms = clfMs(day, month, year, hh, mm, ss, m[7] === '-', oh, om);
  return ms === null ? null : new Date(ms).toISOString();
}

export function parseCombinedLine(line: string): RawEvent | null {
  const m = COMBINED_RE.exec(line.replace(/\r?\n$/, ''));
  if (!m) return null;
  const [, ip, time, request, statusText, referrer, userAgent] = m;
  const timestamp = parseClfTime(time);
  if (timestamp === null) return null;
  const req = unescapeLogString(request).split(' ');
  // "GET /path HTTP/1.1", "GET /path" (HTTP/0.9); a target may not contain spaces.
  if (req.length < 2 || req.length > 3 || !/^[A-Za-z]+$/.test(req[0]) || req[1] === '') return null;
  const status = Number(statusText);
  if (status < 100 || status > 599) return null;
  const event: RawEvent = { path: req[1], timestamp, method: req[0].toUpperCase(), status };
  if (ip !== '-') event.ip = ip;
  if (referrer !== undefined && referrer !== '-' && referrer !== '') event.referrer = unescapeLogString(referrer);
  if (userAgent !== undefined) event.userAgent = userAgent === '-' ? '' : unescapeLogString(userAgent);
  return event;
}

const STRING_KEYS = ['path', 'url', 'userAgent', 'ip', 'visitorId', 'accept', 'method', 'referrer'] as const;

export function parseJsonLine(line: string): RawEvent | null {
  const text = line.trim();
  if (!text.startsWith('{')) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const o = value as Record<string, unknown>;
  const event: RawEvent = {};
  for (const key of STRING_KEYS) {
    const v = o[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') return null;
    event[key] = v;
  }
  const ts = o.timestamp;
  if (typeof ts === 'string') event.timestamp = ts;
  else if (typeof ts === 'number') {
    if (!Number.isFinite(ts)) return null;
    const ms = Math.abs(ts) < 1e11 ? ts * 1000 : ts;
    const d = new Date(ms);
    if (Number.isNaN(d.getTime())) return null;
    event.timestamp = d.toISOString();
  } else if (ts !== undefined && ts !== null) return null;
  const st = o.status;
  if (typeof st === 'number') event.status = st;
  else if (typeof st === 'string' && /^\d{3}$/.test(st)) event.status = Number(st);
  else if (st !== undefined && st !== null) return null;
  return event;
}

// parseCombinedBytes: the same parse as parseCombinedLine, on the bytes of a line (line-splitter.ts), for lines of
// ASCII without a backslash — nearly every line of a real log. Invariant: for such a line it returns exactly what
// parseCombinedLine returns for its text (checked against it on generated and hostile lines in
// test/analytics/logparse.test.ts); for any other line it returns undefined and the caller decodes the line and
// uses parseCombinedLine. It makes one string per field it keeps (none of the line itself) and reuses the previous
// line's timestamp when the time field is the same; with a state made by combinedBytesState(false) (the import's) the
// event has no timestamp at all, its time being `state.ms` (the same event otherwise, keys in the same order). Why: the regex, the escapes pass, split and the Date work
// were half the import's main-thread time (bench/import.ts, npm run bench:import).
//
// How the regex reads such a line: fields are maximal runs of non-whitespace (space, tab, VT, FF: CR and LF end a
// line) each followed by exactly one space; the time is everything up to the first "]"; a quoted field ends at the
// next quote; the referrer and user agent are present only when both are, and then followed by the end of the line
// or whitespace; without them only whitespace may follow the size.

const SP = 32;
const QUOTE = 34;
const BACKSLASH = 92;
const DASH = 45;
const LBRACKET = 91;
const RBRACKET = 93;
const isWs = (c: number) => c === SP || c === 9 || c === 11 || c === 12;
const isDigit = (c: number) => c >= 48 && c <= 57;
const isLetter = (c: number) => (c | 32) >= 97 && (c | 32) <= 122;

/** What parseCombinedBytes keeps from the line before: its time field's bytes and their meaning. */
export interface CombinedBytesState {
  /** The event time of the last line parsed (epoch ms). */
  ms: number;
  /**
   * Whether events carry their `timestamp` (new Date(ms).toISOString()); false: they have none, and their time is
   * `ms` alone (prepare.ts prepareParsedInto, which makes the text only for an event it hands to prepare).
   */
  iso: boolean;
  prevTime: Buffer;
  prevTimeLength: number;
  prevIso: string;
  prevMs: number;
  /**
   * The date and offset of the last time read (`dd/Mon/yyyy` and `±hhmm`, 16 bytes) and the epoch ms of that
   * day's 00:00:00 at that offset: a time on the same day is that plus its seconds, no Date made.
   */
  prevDate: Uint8Array;
  prevDateMs: number;
  /** The buffer last searched for a backslash, where the search started, and what it found (-1: none after). */
  bsBuf: Buffer | null;
  /** The buffer last checked for bytes above 0x7f as a whole, and whether it had none. */
  asciiBuf: Buffer | null;
  asciiAll: boolean;
  bsFrom: number;
  bsPos: number;
}

/** A parser state; `iso` false: events without their `timestamp` (see CombinedBytesState.iso). */
export function combinedBytesState(iso = true): CombinedBytesState {
  return {
    ms: 0,
    iso,
    prevTime: Buffer.alloc(32),
    prevTimeLength: -1,
    prevIso: '',
    prevMs: 0,
    prevDate: new Uint8Array(16),
    prevDateMs: Number.NaN,
    bsBuf: null,
    bsFrom: 0,
    bsPos: -1,
    asciiBuf: null,
    asciiAll: false,
  };
}

/** Offsets of the digits in `dd/Mon/yyyy:HH:MM:SS +hhmm`. */
const CLF_DIGITS = [0, 1, 7, 8, 9, 10, 12, 13, 15, 16, 18, 19, 22, 23, 24, 25];

const num2 = (b: Buffer, i: number) => ((b[i] as number) - 48) * 10 + ((b[i + 1] as number) - 48);

/**
 * The CLF time in b[s, e) (26 bytes, `dd/Mon/yyyy:HH:MM:SS +hhmm`) as epoch ms, or null: clfMs of its parts, with
 * the day's start kept in `state` (prevDate, prevDateMs). For a time on the same date at the same offset as the last
 * one read it is that day's 00:00:00 at the offset plus the time of day (what clfMs computes: all integers), no
 * Date made. Checked against parseCombinedLine over runs of lines through one state (test/analytics/logparse.test.ts).
 * Why: a log's lines are seconds apart, and clfMs's Date was most of reading a time (`npm run bench:import --
 * --profile`).
 */
function clfBytesMsOnDay(b: Buffer, s: number, e: number, state: CombinedBytesState): number | null {
  if (e - s !== 26) return null;
  for (const k of CLF_DIGITS) if (!isDigit(b[s + k] as number)) return null;
  if (b[s + 2] !== 47 || b[s + 6] !== 47 || b[s + 11] !== 58 || b[s + 14] !== 58 || b[s + 17] !== 58 || b[s + 20] !== SP) return null;
  const sign = b[s + 21];
  if (sign !== 43 && sign !== DASH) return null;
  const hh = num2(b, s + 12);
  const mm = num2(b, s + 15);
  const ss = num2(b, s + 18);
  if (hh > 23 || mm > 59 || ss > 60) return null;
  const d = state.prevDate;
  let same = !Number.isNaN(state.prevDateMs);
  for (let k = 0; same && k < 11; k++) same = d[k] === b[s + k];
  for (let k = 0; same && k < 5; k++) same = d[11 + k] === b[s + 21 + k];
  if (!same) {
    if (!isLetter(b[s + 3] as number) || !isLetter(b[s + 4] as number) || !isLetter(b[s + 5] as number)) return null;
    const month = MONTHS[String.fromCharCode((b[s + 3] as number) | 32, (b[s + 4] as number) | 32, (b[s + 5] as number) | 32)];
    if (month === undefined) return null;
    const year = num2(b, s + 7) * 100 + num2(b, s + 9);
    const day = clfMs(num2(b, s), month, year, 0, 0, 0, sign === DASH, num2(b, s + 22), num2(b, s + 24));
    if (day === null) return null;
    for (let k = 0; k < 11; k++) d[k] = b[s + k] as number;
    for (let k = 0; k < 5; k++) d[11 + k] = b[s + 21 + k] as number;
    state.prevDateMs = day;
  }
  return state.prevDateMs + ((hh * 60 + mm) * 60 + Math.min(ss, 59)) * 1000;
}

/** The method in b[s, e) (letters), upper-cased; GET, HEAD and POST without making a string. */
function methodOf(b: Buffer, s: number, e: number): string {
  const n = e - s;
  if (n === 3 && b[s] === 71 && b[s + 1] === 69 && b[s + 2] === 84) return 'GET';
  if (n === 4 && b[s] === 72 && b[s + 1] === 69 && b[s + 2] === 65 && b[s + 3] === 68) return 'HEAD';
  if (n === 4 && b[s] === 80 && b[s + 1] === 79 && b[s + 2] === 83 && b[s + 3] === 84) return 'POST';
  return b.toString('latin1', s, e).toUpperCase();
}

/**
 * parseCombinedLine on the bytes b[start, end) of one line (see above): the event, null when the line is not in
 * the format, undefined when the line has a byte above 0x7f or a backslash (decode it and use parseCombinedLine).
 * Sets `state.ms` to the event's time.
 */
export function parseCombinedBytes(b: Buffer, start: number, end: number, state: CombinedBytesState): RawEvent | null | undefined {
  // The next backslash of this buffer is looked up again only once passed (a line-by-line indexOf would scan to
  // the end of the chunk for every line of a log without one).
  if (state.bsBuf !== b || start < state.bsFrom || (state.bsPos !== -1 && state.bsPos < start)) {
    state.bsBuf = b;
    state.bsFrom = start;
    state.bsPos = b.indexOf(BACKSLASH, start);
  }
  if (state.bsPos !== -1 && state.bsPos < end) return undefined;
  // Likewise one check of the whole buffer for bytes above 0x7f (a log's chunks nearly always have none), and a
  // line's own check only when it has some. (A buffer is not changed between the calls for its lines.)
  if (state.asciiBuf !== b) {
    state.asciiBuf = b;
    state.asciiAll = isAscii(b);
  }
  if (!state.asciiAll && !isAscii(b.subarray(start, end))) return undefined;
  let i = start;
  // Host, ident, user: three runs of non-whitespace, each followed by one space.
  const ipStart = i;
  let ipEnd = 0;
  for (let f = 0; f < 3; f++) {
    const t = i;
    while (i < end && !isWs(b[i] as number)) i++;
    if (i === t || i >= end || b[i] !== SP) return null;
    if (f === 0) ipEnd = i;
    i++;
  }
  if (b[i] !== LBRACKET) return null;
  const timeStart = ++i;
  while (i < end && b[i] !== RBRACKET) i++;
  if (i === timeStart || i >= end) return null;
  const timeEnd = i++;
  if (i + 1 >= end || b[i] !== SP || b[i + 1] !== QUOTE) return null;
  i += 2;
  const reqStart = i;
  while (i < end && b[i] !== QUOTE) i++;
  if (i >= end) return null;
  const reqEnd = i++;
  if (i + 4 >= end || b[i] !== SP || !isDigit(b[i + 1] as number) || !isDigit(b[i + 2] as number) || !isDigit(b[i + 3] as number) || b[i + 4] !== SP)
    return null;
  const status = ((b[i + 1] as number) - 48) * 100 + num2(b, i + 2);
  i += 5;
  if (i >= end) return null;
  if (b[i] === DASH) i++;
  else {
    const d = i;
    while (i < end && isDigit(b[i] as number)) i++;
    if (i === d) return null;
  }
  // Referrer and user agent: both, then the end or whitespace; else only whitespace may follow.
  let refStart = -1;
  let refEnd = -1;
  let uaStart = -1;
  let uaEnd = -1;
  if (i + 1 < end && b[i] === SP && b[i + 1] === QUOTE) {
    let j = i + 2;
    const rs = j;
    while (j < end && b[j] !== QUOTE) j++;
    if (j + 2 < end && b[j + 1] === SP && b[j + 2] === QUOTE) {
      const re = j;
      j += 3;
      const us = j;
      while (j < end && b[j] !== QUOTE) j++;
      if (j < end && (j + 1 === end || isWs(b[j + 1] as number))) {
        refStart = rs;
        refEnd = re;
        uaStart = us;
        uaEnd = j;
        i = end;
      }
    }
  }
  while (i < end && isWs(b[i] as number)) i++;
  if (i !== end) return null;

  // The request line: METHOD target [protocol], split on single spaces, 2 or 3 parts.
  let p1 = reqStart;
  while (p1 < reqEnd && b[p1] !== SP) p1++;
  if (p1 === reqStart || p1 >= reqEnd) return null;
  for (let k = reqStart; k < p1; k++) if (!isLetter(b[k] as number)) return null;
  let p2 = p1 + 1;
  while (p2 < reqEnd && b[p2] !== SP) p2++;
  if (p2 < reqEnd) for (let k = p2 + 1; k < reqEnd; k++) if (b[k] === SP) return null;
  if (p2 === p1 + 1) return null;
  if (status < 100 || status > 599) return null;

  let ms: number;
  const timeLength = timeEnd - timeStart;
  // Compared from the end: the seconds, which change from line to line, are the first bytes that differ.
  let sameTime = timeLength === state.prevTimeLength;
  for (let k = timeLength - 1; sameTime && k >= 0; k--) sameTime = state.prevTime[k] === b[timeStart + k];
  if (sameTime) ms = state.prevMs;
  else {
    const t = clfBytesMsOnDay(b, timeStart, timeEnd, state);
    if (t === null) return null;
    ms = t;
    b.copy(state.prevTime, 0, timeStart, timeEnd);
    state.prevTimeLength = timeLength;
    state.prevMs = ms;
    state.prevIso = '';
  }
  state.ms = ms;
  const path = b.toString('latin1', p1 + 1, p2);
  const method = methodOf(b, reqStart, p1);
  let event: RawEvent;
  if (state.iso) {
    if (state.prevIso === '') state.prevIso = new Date(ms).toISOString();
    event = { path, timestamp: state.prevIso, method, status };
  } else event = { path, method, status };
  if (!(ipEnd - ipStart === 1 && b[ipStart] === DASH)) event.ip = b.toString('latin1', ipStart, ipEnd);
  if (refStart !== -1) {
    if (refEnd > refStart && !(refEnd - refStart === 1 && b[refStart] === DASH)) event.referrer = b.toString('latin1', refStart, refEnd);
    event.userAgent = uaEnd - uaStart === 1 && b[uaStart] === DASH ? '' : b.toString('latin1', uaStart, uaEnd);
  }
  return event;
}
