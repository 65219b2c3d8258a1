// A combined-format access log (nginx / Apache "combined") written from the analytics dataset (dataset.ts), for
// the log-import benchmark: the same events in the same time order, as a web server would have logged them.
//
//   <ip> - - [dd/Mon/yyyy:HH:MM:SS +0000] "<METHOD> <raw path or URL> HTTP/1.1" <status> <bytes> "<referrer>" "<user agent>"
//
// Each dataset visitor becomes one client address (derived from its id: about 5% IPv6), so identity comes from
// address + user agent as in a real log. Referrers are added deterministically (about a third of people's page
// views: a search engine, another page of the site, GitHub; none for agents and crawlers, "-" otherwise); response
// sizes are pseudo-random. Cached in bench/.data/ next to the dataset it came from.
import fs from 'node:fs';
import path from 'node:path';
import { DATA_DIR, type DatasetMeta, readEvents } from './dataset.ts';
import { fmix32 } from './prng.ts';

const LOG_VERSION = 1;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const EXTERNAL_REFERRERS = [
  'https://www.google.com/',
  'https://www.bing.com/',
  'https://duckduckgo.com/',
  'https://github.com/acme/docs',
  'https://news.ycombinator.com/',
];

export interface AccessLog {
  file: string;
  lines: number;
  bytes: number;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

/** `[10/Oct/2026:13:55:36 +0000]` for a UTC time in ms. */
function clfTime(ms: number): string {
  const d = new Date(ms);
  return `${pad2(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())} +0000`;
}

/** The client address of a dataset visitor (a UUID): IPv4 from its first 8 hex digits, 1 in 20 IPv6. */
export function visitorAddress(visitor: string): string {
  const h = Number.parseInt(visitor.slice(0, 8), 16) >>> 0;
  const g = fmix32(h ^ 0x1b873593) >>> 0;
  if (g % 20 === 0) return `2001:db8:${(h >>> 16).toString(16)}:${(h & 0xffff).toString(16)}::${(g >>> 8) & 0xfff}`;
  return `${11 + ((h >>> 24) % 200)}.${(h >>> 16) & 255}.${(h >>> 8) & 255}.${h & 255}`;
}

/** Writes the log of a dataset (the CSV `csv` with `meta`) unless it exists; returns its file. */
export async function ensureAccessLog(meta: DatasetMeta, csv: string, log: (m: string) => void = () => {}): Promise<AccessLog> {
  const file = path.join(DATA_DIR, `access-v${LOG_VERSION}-${meta.name}.log`);
  const lines = meta.counts.events;
  if (fs.existsSync(file)) return { file, lines, bytes: fs.statSync(file).size };
  log(`writing the combined log of ${lines.toLocaleString('en')} events → ${file}`);
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w');
  let buf = '';
  let n = 0;
  const pathsSeen: string[] = [];
  for await (const e of readEvents(csv)) {
    const h = fmix32(Math.imul(n, 0x9e3779b1)) >>> 0;
    const ua = meta.userAgents[e.ua] as string;
    let referrer = '-';
    if (meta.uaClasses[e.ua] === 'human' && e.method === 'GET' && h % 3 === 0) {
      const r = (h >>> 2) % 10;
      if (r < 5) referrer = EXTERNAL_REFERRERS[r] as string;
      else if (pathsSeen.length > 0) referrer = `https://docs.example.com${pathsSeen[(h >>> 6) % pathsSeen.length]}`;
    }
    if (pathsSeen.length < 512 && !e.raw.startsWith('http')) pathsSeen.push(e.path);
    const bytes = e.status === 304 || e.method === 'HEAD' ? 0 : 200 + ((h >>> 8) % 60_000);
    buf += `${visitorAddress(e.visitor)} - - [${clfTime(Date.parse(e.ts))}] "${e.method} ${e.raw} HTTP/1.1" ${e.status} ${bytes} "${referrer}" "${ua}"\n`;
    if (buf.length > 1 << 20) {
      fs.writeSync(fd, buf);
      buf = '';
    }
    n++;
  }
  fs.writeSync(fd, buf);
  fs.closeSync(fd);
  if (n !== lines) throw new Error(`dataset has ${n} rows, meta says ${lines}`);
  fs.renameSync(tmp, file);
  return { file, lines, bytes: fs.statSync(file).size };
}
