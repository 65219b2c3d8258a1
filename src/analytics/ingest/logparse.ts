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

export interface RawEvent {
  path?: string;
  url?: string;
  timestamp?: string;
  userAgent?: string;
  ip?: string;
  visitorId?: string;
  accept?: string;
  status?: number;
  method?: string;
  referrer?: string;
}

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

/** `10/Oct/2000:13:55:36 -0700` → ISO 8601 UTC, or null. */
export function parseClfTime(s: string): string | null {
  const m = CLF_TIME_RE.exec(s);
  if (!m) return null;
  const month = MONTHS[m[2].toLowerCase()];
  if (month === undefined) return null;
  const [day, year, hh, mm, ss, oh, om] = [m[1], m[3], m[4], m[5], m[6], m[8], m[9]].map(Number);
  if (hh > 23 || mm > 59 || ss > 60 || oh > 23 || om > 59) return null;
  const d = new Date(0);
  d.setUTCFullYear(year, month, day);
  if (d.getUTCMonth() !== month || d.getUTCDate() !== day) return null;
  const offsetMin = (m[7] === '-' ? -1 : 1) * (oh * 60 + om);
  const ms = d.getTime() + ((hh * 60 + mm) * 60 + Math.min(ss, 59)) * 1000 - offsetMin * 60_000;
  return new Date(ms).toISOString();
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
