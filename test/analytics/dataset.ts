// A seeded, generated analytics dataset whose expected export answers are computed here independently of
// the service: the expected class, normalised path, visitor identity and qualifying flag of every event
// come from how the generator built it (following SPEC 4.2–4.4), and the counts are Sets over the events.
import fs from 'node:fs';
import path from 'node:path';
import AjvModule from 'ajv';

/** mulberry32: small, seedable, deterministic. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const DAY_MS = 86_400_000;
export const START_MS = Date.UTC(2026, 2, 1); // 2026-03-01

export interface WireEvent {
  path?: string;
  url?: string;
  timestamp: string;
  userAgent?: string;
  ip?: string;
  visitorId?: string;
  accept?: string;
  status?: number;
  method?: string;
}

export interface Truth {
  day: number;
  /** Normalised path. */
  path: string;
  cls: 'human' | 'ai' | 'crawler';
  qualifying: boolean;
  visitor: string;
}

export interface GenEvent {
  wire: WireEvent;
  truth: Truth;
  /** The same event as a combined-format access-log line (no visitorId / Accept in that format). */
  logLine: string;
  /** What the log line alone says (identity from IP + UA, no Accept header). */
  logTruth: Truth;
  /** The event the log line describes, as it would be sent to the API. */
  logWire: WireEvent;
}

const HUMAN_UAS = [
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0',
];
const AI_UAS = [
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)',
];
const CRAWLER_UAS = [
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
];
const ASSETS = ['/assets/app.js', '/img/logo.png', '/css/site.css', '/fonts/inter.woff2'];

function pick<T>(rnd: () => number, xs: readonly T[]): T {
  return xs[Math.floor(rnd() * xs.length)] as T;
}

/** A request path for a page, in one of several spellings that normalise to `page`; also whether it is a Markdown fetch. */
function spell(rnd: () => number, page: string): { path?: string; url?: string; markdown: boolean; raw: string } {
  const r = rnd();
  const tail = page === '/' ? '' : page;
  if (r < 0.4) return { path: page, markdown: false, raw: page };
  if (r < 0.5) return { path: `${page}${page === '/' ? '' : '/'}?utm_source=x`, markdown: false, raw: `${page}${page === '/' ? '' : '/'}?utm_source=x` };
  if (r < 0.6) return { path: `${page}#section`, markdown: false, raw: `${page}#section` };
  if (r < 0.7) return { url: `https://docs.example.com${page}?ref=1`, markdown: false, raw: `${page}?ref=1` };
  if (r < 0.8 && tail) return { path: `/${tail.replace(/\//g, '//')}`, markdown: false, raw: `/${tail.replace(/\//g, '//')}` };
  if (r < 0.9 && tail) return { path: `${tail}.md`, markdown: true, raw: `${tail}.md` };
  return { path: page, markdown: false, raw: page };
}

export interface DatasetOptions {
  seed: number;
  events: number;
  days: number;
  pages?: number;
  visitors?: number;
  /** Also emit events for pages named /new/… (for "while ingesting" tests). */
  pagePrefix?: string;
}

interface Visitor {
  ip: string;
  ua: string;
  kind: 'human' | 'ai' | 'crawler';
  visitorId: string | null;
}

/** Generates events; visitor identities are stable for a seed (for combining with other datasets, use another seed). */
export function generate(opts: DatasetOptions): GenEvent[] {
  const rnd = prng(opts.seed);
  const prefix = opts.pagePrefix ?? '/docs/p';
  const pages = ['/', ...Array.from({ length: (opts.pages ?? 30) - 1 }, (_, i) => `${prefix}${i}`)];
  const visitors: Visitor[] = Array.from({ length: opts.visitors ?? 80 }, (_, i) => {
    const r = rnd();
    const kind = r < 0.6 ? 'human' : r < 0.85 ? 'ai' : 'crawler';
    const ua = pick(rnd, kind === 'human' ? HUMAN_UAS : kind === 'ai' ? AI_UAS : CRAWLER_UAS);
    return {
      ip: `10.${opts.seed % 200}.${Math.floor(i / 250)}.${i % 250}`,
      ua,
      kind,
      visitorId: rnd() < 0.2 ? `vid-${opts.seed}-${Math.floor(rnd() * 15)}` : null,
    };
  });
  const out: GenEvent[] = [];
  for (let n = 0; n < opts.events; n++) {
    // Zipf-ish page popularity.
    const page = pages[Math.min(pages.length - 1, Math.floor(pages.length * rnd() ** 2))] as string;
    const v = pick(rnd, visitors);
    const ts = START_MS + Math.floor(rnd() * opts.days * DAY_MS);
    const asset = rnd() < 0.08;
    const s = asset ? { path: pick(rnd, ASSETS), markdown: false, raw: '' } : spell(rnd, page);
    if (asset) s.raw = s.path as string;
    const acceptMd = !asset && v.kind === 'human' && rnd() < 0.05;
    const accept = acceptMd ? 'text/markdown, text/html;q=0.9' : rnd() < 0.5 ? 'text/html,application/xhtml+xml,*/*;q=0.8' : undefined;
    const mr = rnd();
    const method = mr < 0.7 ? undefined : mr < 0.9 ? 'GET' : mr < 0.95 ? 'HEAD' : 'POST';
    const sr = rnd();
    const status = sr < 0.5 ? undefined : sr < 0.8 ? 200 : sr < 0.88 ? 304 : sr < 0.94 ? 404 : sr < 0.97 ? 301 : 500;
    const markdown = s.markdown || acceptMd;
    const cls: Truth['cls'] = v.kind === 'crawler' ? 'crawler' : v.kind === 'ai' ? 'ai' : markdown ? 'ai' : 'human';
    const qualifying =
      !asset && (method === undefined || method === 'GET') && (status === undefined || (status >= 200 && status < 300) || status === 304) && cls !== 'crawler';
    const wire: WireEvent = {
      ...(s.path !== undefined ? { path: s.path } : { url: s.url as string }),
      timestamp: new Date(ts).toISOString(),
      userAgent: v.ua,
      ip: v.ip,
      ...(v.visitorId ? { visitorId: v.visitorId } : {}),
      ...(accept ? { accept } : {}),
      ...(status !== undefined ? { status } : {}),
      ...(method !== undefined ? { method } : {}),
    };
    const truthPath = asset ? (s.path as string) : page;
    const logCls: Truth['cls'] = v.kind === 'crawler' ? 'crawler' : v.kind === 'ai' ? 'ai' : s.markdown ? 'ai' : 'human';
    const secondMs = Math.floor(ts / 1000) * 1000;
    out.push({
      wire,
      truth: { day: Math.floor(ts / DAY_MS), path: truthPath, cls, qualifying, visitor: v.visitorId ? `v:${v.visitorId}` : `${v.ip}|${v.ua}` },
      logLine: combinedLine(v.ip, ts, method ?? 'GET', s.raw, status ?? 200, v.ua),
      logTruth: { day: Math.floor(ts / DAY_MS), path: truthPath, cls: logCls, qualifying, visitor: `${v.ip}|${v.ua}` },
      logWire: { path: s.raw, timestamp: new Date(secondMs).toISOString(), userAgent: v.ua, ip: v.ip, method: method ?? 'GET', status: status ?? 200 },
    });
  }
  return out;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function combinedLine(ip: string, ts: number, method: string, target: string, status: number, ua: string): string {
  const d = new Date(ts);
  const p = (n: number) => String(n).padStart(2, '0');
  const time = `${p(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
  return `${ip} - - [${time}] "${method} ${target} HTTP/1.1" ${status} 512 "-" "${ua}"`;
}

export interface ExpectedRow {
  path: string;
  human: number;
  ai: number;
  total: number;
}

export interface Expected {
  totals: { human: number; ai: number; total: number };
  rows: ExpectedRow[];
}

function sortExpected(rows: ExpectedRow[]): ExpectedRow[] {
  return rows.sort((a, b) => b.total - a.total || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function inRange(t: Truth, fromDay: number | null, toDay: number | null): boolean {
  return t.qualifying && (fromDay === null || t.day >= fromDay) && (toDay === null || t.day < toDay);
}

/** Distinct visitors per path and site-wide, by Sets over the truths (SPEC 4.4). */
export function expectedVisitors(truths: Truth[], fromDay: number | null, toDay: number | null): Expected {
  const per = new Map<string, { h: Set<string>; a: Set<string>; t: Set<string> }>();
  const site = { h: new Set<string>(), a: new Set<string>(), t: new Set<string>() };
  for (const t of truths) {
    if (!inRange(t, fromDay, toDay)) continue;
    let e = per.get(t.path);
    if (!e) {
      e = { h: new Set(), a: new Set(), t: new Set() };
      per.set(t.path, e);
    }
    (t.cls === 'human' ? e.h : e.a).add(t.visitor);
    e.t.add(t.visitor);
    (t.cls === 'human' ? site.h : site.a).add(t.visitor);
    site.t.add(t.visitor);
  }
  const rows = [...per].map(([path, e]) => ({ path, human: e.h.size, ai: e.a.size, total: e.t.size }));
  return { totals: { human: site.h.size, ai: site.a.size, total: site.t.size }, rows: sortExpected(rows) };
}

/** Qualifying view counts per path and site-wide. */
export function expectedViews(truths: Truth[], fromDay: number | null, toDay: number | null): Expected {
  const per = new Map<string, { h: number; a: number }>();
  let h = 0;
  let a = 0;
  for (const t of truths) {
    if (!inRange(t, fromDay, toDay)) continue;
    const e = per.get(t.path) ?? { h: 0, a: 0 };
    if (t.cls === 'human') {
      e.h++;
      h++;
    } else {
      e.a++;
      a++;
    }
    per.set(t.path, e);
  }
  const rows = [...per].map(([path, e]) => ({ path, human: e.h, ai: e.a, total: e.h + e.a }));
  return { totals: { human: h, ai: a, total: h + a }, rows: sortExpected(rows) };
}

const Ajv = AjvModule.default ?? AjvModule;

/** Validators for the hosted interface's response schemas (fixtures/: a copy of the reference document). */
export function hostedSchemas() {
  const doc = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, 'fixtures/hosted-analytics.openapi.json'), 'utf8'));
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addSchema(doc, 'hosted');
  const get = (name: string) => {
    const v = ajv.getSchema(`hosted#/components/schemas/${name}`);
    if (!v) throw new Error(`schema ${name} missing`);
    return (value: unknown) => {
      const ok = v(value);
      return ok ? null : ajv.errorsText(v.errors);
    };
  };
  return { visitors: get('VisitorsByPageResponse'), views: get('ViewsByPageResponse'), error: get('AnalyticsErrorResponse') };
}
