// The benchmark dataset: a deterministic generator of page-view events and a reader for the file it writes.
//
// File format (CSV, UTF-8, one header line, no field ever contains a comma, quote or newline):
//
//   ts        ISO 8601 UTC timestamp with milliseconds (2026-08-01T00:00:01.234Z); rows are in time order
//   day       its UTC calendar day, YYYY-MM-DD
//   raw       what a client sends as `path` (or, when it starts with http, as `url`): may carry a query string,
//             fragment, trailing slash, doubled slash, percent-encoding, host or a .md/.mdx suffix
//   path      the normalised path (SPEC §4.3) — known by construction, so baselines need no normaliser
//   visitor   the visitor id (a UUID string), sent as `visitorId`: every system sees the same identity
//   ua        index into meta.userAgents (the real User-Agent string sent as `userAgent`)
//   status    HTTP status of the original request
//   method    HTTP method of the original request (GET, POST, HEAD)
//   accept_md 1 when the request's Accept header prefers text/markdown (sent as `accept`), else 0
//   class     ground-truth class (SPEC §4.2): human | ai | crawler
//   q         1 when the event is a qualifying view (SPEC §4.3: GET, 2xx/304, page path, class human or ai)
//
// The meta file beside it (<name>.meta.json) records the options, the UA table, the 30-day window and counts.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { fmix32, ordinalUuid, Rng, Zipf } from './prng.ts';
import { type UaClass, USER_AGENTS } from './user-agents.ts';

export const BENCH_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DATA_DIR = path.join(BENCH_DIR, '.data');
export const RESULTS_DIR = path.join(BENCH_DIR, 'results');

export const DAY_MS = 86_400_000;
export const START_DAY = '2026-08-01';
export const ACCEPT_MARKDOWN = 'text/markdown, text/html;q=0.9, */*;q=0.8';
/** Bumped whenever the generator's output changes for the same options. */
export const GENERATOR_VERSION = 3;
export const COLUMNS = ['ts', 'day', 'raw', 'path', 'visitor', 'ua', 'status', 'method', 'accept_md', 'class', 'q'] as const;

export interface GenOptions {
  events: number;
  seed: number;
  days: number;
  paths: number;
  /** Visitor population; by default 2,000,000 scaled by events / 10,000,000 (at least 1,000). */
  visitors: number;
  /** Length of the export window, ending at the last generated day. */
  windowDays: number;
  /** The first day (UTC, YYYY-MM-DD); START_DAY by default. */
  startDay: string;
}

export const FULL_EVENTS = 10_000_000;
export const FULL_VISITORS = 2_000_000;

export function genOptions(partial: Partial<GenOptions> = {}): GenOptions {
  const events = partial.events ?? FULL_EVENTS;
  return {
    events,
    seed: partial.seed ?? 42,
    days: partial.days ?? 90,
    paths: partial.paths ?? 20_000,
    visitors: partial.visitors ?? Math.max(1_000, Math.round((FULL_VISITORS * events) / FULL_EVENTS)),
    windowDays: partial.windowDays ?? 30,
    startDay: partial.startDay ?? START_DAY,
  };
}

export interface DatasetMeta {
  version: 1;
  name: string;
  file: string;
  options: GenOptions;
  columns: readonly string[];
  startDay: string;
  /** Exclusive end day. */
  endDay: string;
  window: { dateFrom: string; dateTo: string; fromMs: number; toMs: number };
  userAgents: string[];
  uaClasses: UaClass[];
  acceptMarkdown: string;
  counts: {
    events: number;
    byClass: Record<UaClass, number>;
    qualifying: number;
    markdownFetches: number;
    staticAssets: number;
    non2xx: number;
    nonGet: number;
    withUrl: number;
    distinctVisitors: number;
    distinctPaths: number;
  };
  bytes: number;
  generatedInMs: number;
  /** When the files were written: identifies this copy of the dataset (loaded-table caches key on it). */
  generatedAt: string;
}

export interface DatasetFiles {
  name: string;
  csv: string;
  meta: string;
}

export function datasetFiles(o: GenOptions): DatasetFiles {
  const from = o.startDay === START_DAY ? '' : `-f${o.startDay.replaceAll('-', '')}`;
  const name = `events-g${GENERATOR_VERSION}-${o.events}-s${o.seed}-v${o.visitors}-p${o.paths}-d${o.days}${from}`;
  return { name, csv: path.join(DATA_DIR, `${name}.csv`), meta: path.join(DATA_DIR, `${name}.meta.json`) };
}

export function dayString(startDay: string, offset: number): string {
  return new Date(Date.parse(`${startDay}T00:00:00.000Z`) + offset * DAY_MS).toISOString().slice(0, 10);
}

// ---------------------------------------------------------------------------------------------------------
// Paths

const WORDS =
  'install configure deploy build test debug route cache query index schema token auth login session webhook event stream queue worker job agent model prompt pipeline plugin theme layout search sitemap redirect header footer sidebar navbar markdown image video table chart metric log trace alert backup restore migrate upgrade scale cluster node region zone domain certificate proxy gateway endpoint client server request response error retry limit quota billing invoice team member role permission policy secret key vault storage bucket file folder upload download export import sync async batch cron schedule trigger action workflow branch commit merge review release version tag label issue project workspace organization account profile settings preference language locale timezone currency payment checkout cart order product catalog inventory shipping tax discount coupon analytics dashboard report widget embed sdk cli api rest graphql grpc websocket oauth saml sso mfa password email sms notification template variable environment config runtime container image registry kubernetes docker terraform helm ansible monitoring tracing profiling benchmark performance latency throughput memory cpu disk network security audit compliance privacy gdpr'.split(
    ' ',
  );
const SECTIONS = 'getting-started guides reference concepts tutorials integrations cli api sdk deployment operations security troubleshooting faq'.split(' ');
const NON_ASCII = ['café', 'über', 'naïve', '日本語', 'résumé', 'ñandú'];

export interface PathTable {
  /** Normalised paths, index = popularity rank (0 = most popular). */
  paths: string[];
  /** What a browser sends for each path (percent-encoded where not ASCII). */
  sent: string[];
}

export function buildPaths(n: number, seed: number): PathTable {
  const rng = new Rng(seed ^ 0x50415448);
  const word = () => WORDS[rng.int(WORDS.length)] as string;
  const seen = new Set<string>(['/']);
  const paths = ['/'];
  while (paths.length < n) {
    const t = rng.next();
    const section = SECTIONS[rng.int(SECTIONS.length)] as string;
    let p: string;
    if (t < 0.6) p = `/docs/${section}/${word()}-${word()}`;
    else if (t < 0.75) p = `/docs/${section}/${word()}/${word()}`;
    else if (t < 0.85) p = `/api/${word()}/${word()}-${word()}`;
    else if (t < 0.95) p = `/blog/${2020 + rng.int(7)}/${word()}-${word()}-${word()}`;
    else p = `/guides/${word()}-${word()}`;
    if (paths.length % 997 === 500) p = `${p}-${NON_ASCII[rng.int(NON_ASCII.length)]}`;
    if (seen.has(p)) continue;
    seen.add(p);
    paths.push(p);
  }
  return { paths, sent: paths.map((p) => encodeURI(p)) };
}

function buildAssets(seed: number): string[] {
  const rng = new Rng(seed ^ 0x41535354);
  const hex = () => rng.u32().toString(16).padStart(8, '0');
  const out = ['/favicon.ico', '/fonts/inter-var.woff2', '/assets/app.js.map'];
  for (let i = 0; i < 40; i++) out.push(`/assets/index-${hex()}.js`, `/assets/index-${hex()}.css`, `/assets/chunk-${hex()}.js.map`);
  for (let i = 0; i < 40; i++) out.push(`/img/${WORDS[i]}.png`, `/img/${WORDS[i + 40]}.svg`);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Generation

export interface GeneratedEvent {
  ts: number;
  raw: string;
  path: string;
  visitor: string;
  /** The visitor's ordinal in the population (0 ≤ ordinal < visitors): one per visitor id. */
  ordinal: number;
  ua: number;
  status: number;
  method: string;
  acceptMd: boolean;
  cls: UaClass;
  q: boolean;
}

function weightedPicker(indices: number[], rngU32: number): number {
  let total = 0;
  for (const i of indices) total += (USER_AGENTS[i] as { weight: number }).weight;
  let x = (rngU32 / 4294967296) * total;
  for (const i of indices) {
    x -= (USER_AGENTS[i] as { weight: number }).weight;
    if (x < 0) return i;
  }
  return indices[indices.length - 1] as number;
}

/** Events per day: weekends quieter, 30% growth over the period; sums exactly to `events`. */
export function dailyCounts(o: GenOptions): number[] {
  const start = Date.parse(`${o.startDay}T00:00:00.000Z`);
  const w: number[] = [];
  for (let d = 0; d < o.days; d++) {
    const dow = new Date(start + d * DAY_MS).getUTCDay();
    w.push((dow === 0 || dow === 6 ? 0.65 : 1) * (1 + (0.3 * d) / Math.max(1, o.days - 1)));
  }
  const sum = w.reduce((a, b) => a + b, 0);
  const exact = w.map((x) => (x / sum) * o.events);
  const counts = exact.map(Math.floor);
  let rest = o.events - counts.reduce((a, b) => a + b, 0);
  const order = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  for (let k = 0; rest > 0; k++, rest--) counts[(order[k % order.length] as readonly [number, number])[1]]! += 1;
  return counts;
}

interface Pool {
  cls: UaClass;
  /** First visitor ordinal of the pool. */
  offset: number;
  size: number;
  /** Events this pool's visitors generate. */
  events: number;
  /** Pareto shape of per-visitor activity (smaller = heavier tail). */
  alpha: number;
}

/**
 * The visitor ordinal of every event, in event order. Every visitor of each pool appears at least once (when
 * the pool has at least as many events as visitors); the rest of the pool's events are shared in proportion to
 * Pareto(alpha) weights — heavy-tailed activity: most visitors come once or twice, a few thousands of times —
 * and the whole sequence is shuffled, so each visitor's events spread over the period.
 */
export function visitorSequence(pools: readonly Pool[], rng: Rng): Int32Array {
  const total = pools.reduce((a, p) => a + p.events, 0);
  const seq = new Int32Array(total);
  let k = 0;
  for (const p of pools) {
    const size = Math.min(p.size, p.events);
    if (size === 0) continue;
    const weights = new Float64Array(size);
    let sum = 0;
    for (let i = 0; i < size; i++) {
      const w = (1 - rng.next()) ** (-1 / p.alpha);
      weights[i] = w;
      sum += w;
    }
    const extra = p.events - size;
    const counts = new Int32Array(size);
    let assigned = 0;
    for (let i = 0; i < size; i++) {
      counts[i] = 1 + Math.floor((extra * (weights[i] as number)) / sum);
      assigned += counts[i] as number;
    }
    for (; assigned < p.events; assigned++) (counts as Int32Array)[rng.int(size)]! += 1;
    for (let i = 0; i < size; i++) for (let c = 0; c < (counts[i] as number); c++) seq[k++] = p.offset + i;
  }
  for (let i = total - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    const t = seq[i] as number;
    seq[i] = seq[j] as number;
    seq[j] = t;
  }
  return seq;
}

/** Generates events in time order, calling `emit` for each. Pure apart from the callback. */
export function generateEvents(o: GenOptions, emit: (e: GeneratedEvent) => void): void {
  const rng = new Rng(o.seed);
  const { paths, sent } = buildPaths(o.paths, o.seed);
  const assets = buildAssets(o.seed);
  const P = paths.length;
  const humanZipf = new Zipf(P, 1.0);
  const aiZipf = new Zipf(P, 0.9);
  const crawlerZipf = new Zipf(P, 0.5);

  // Visitor pools: 80% of the population browses as a person, 19% through AI agents, 1% are crawler identities;
  // 70% / 20% / 10% of the events. Every visitor of the population appears (see visitorSequence).
  const V = o.visitors;
  const humanSize = Math.max(1, Math.floor(V * 0.8));
  const aiSize = Math.max(1, Math.floor(V * 0.19));
  const pools: Pool[] = [
    { cls: 'human', offset: 0, size: humanSize, events: 0, alpha: 1.3 },
    { cls: 'ai', offset: humanSize, size: aiSize, events: Math.floor(o.events * 0.2), alpha: 1.3 },
    { cls: 'crawler', offset: humanSize + aiSize, size: Math.max(1, V - humanSize - aiSize), events: Math.floor(o.events * 0.1), alpha: 1.1 },
  ];
  (pools[0] as Pool).events = o.events - (pools[1] as Pool).events - (pools[2] as Pool).events;
  const sequence = visitorSequence(pools, new Rng(o.seed ^ 0x56495354));
  const uaIdx: Record<UaClass, number[]> = { human: [], ai: [], crawler: [] };
  USER_AGENTS.forEach((u, i) => {
    uaIdx[u.class].push(i);
  });
  // The id is derived again per event rather than kept per visitor: an array of 20M id strings filled at random
  // ordinals is a dictionary-mode array that outgrew the 4 GB heap at 21M of 100M events.
  const uas = new Int16Array(V).fill(-1);
  const visitorOf = (ordinal: number, cls: UaClass) => {
    if (uas[ordinal] === -1) uas[ordinal] = weightedPicker(uaIdx[cls], fmix32(ordinal ^ 0x5541));
    return { id: ordinalUuid(ordinal, o.seed), ua: uas[ordinal] as number };
  };
  const classOf = (ordinal: number): UaClass => (ordinal < humanSize ? 'human' : ordinal < humanSize + aiSize ? 'ai' : 'crawler');
  let next = 0;

  const start = Date.parse(`${o.startDay}T00:00:00.000Z`);
  const counts = dailyCounts(o);
  for (let d = 0; d < o.days; d++) {
    const n = counts[d] as number;
    const times = new Float64Array(n);
    for (let i = 0; i < n; i++) times[i] = Math.floor(rng.next() * DAY_MS);
    times.sort();
    for (let i = 0; i < n; i++) {
      const ts = start + d * DAY_MS + (times[i] as number);
      const ordinal = sequence[next++] as number;
      const cls = classOf(ordinal);
      const visitor = visitorOf(ordinal, cls);
      let rank: number;
      if (cls === 'human') rank = humanZipf.sample(rng.next());
      else if (cls === 'ai') {
        rank = aiZipf.sample(rng.next());
        if (rng.next() < 0.5) rank = (rank * 7919 + 13) % P;
      } else rank = rng.next() < 0.5 ? crawlerZipf.sample(rng.next()) : rng.int(P);

      let method = 'GET';
      let status = 200;
      let asset = false;
      const k = rng.next();
      if (k < 0.03) asset = true;
      else if (k < 0.045) status = 404;
      else if (k < 0.05) status = 301;
      else if (k < 0.052) status = 500;
      else if (k < 0.062) method = 'POST';
      else if (k < 0.067) method = 'HEAD';
      else if (k < 0.087) status = 304;
      else if (k < 0.097) status = 206;

      let raw: string;
      let norm: string;
      let md = false;
      let acceptMd = false;
      if (asset) {
        norm = assets[rng.int(assets.length)] as string;
        raw = norm;
      } else {
        norm = paths[rank] as string;
        raw = sent[rank] as string;
        const mdRate = cls === 'ai' ? 0.25 : cls === 'crawler' ? 0.02 : 0.005;
        if (norm !== '/' && rng.next() < mdRate) {
          md = true;
          raw += rng.next() < 0.1 ? '.mdx' : '.md';
        } else if (rng.next() < (cls === 'ai' ? 0.1 : cls === 'human' ? 0.002 : 0)) acceptMd = true;
        const dec = rng.next();
        if (md) {
          if (dec < 0.05) raw += '?ref=llms.txt';
        } else if (dec < 0.03) raw += `?utm_source=${WORDS[rng.int(20)]}`;
        else if (dec < 0.04) raw += `?q=${WORDS[rng.int(WORDS.length)]}`;
        else if (dec < 0.06) {
          if (norm !== '/') raw += '/';
        } else if (dec < 0.07) raw += `#${WORDS[rng.int(WORDS.length)]}`;
        else if (dec < 0.075) {
          const second = raw.indexOf('/', 1);
          if (second > 0) raw = `${raw.slice(0, second)}/${raw.slice(second)}`;
        } else if (dec < 0.08) raw = raw.replace('e', '%65');
        if (rng.next() < 0.02) raw = `https://docs.example.com${raw}`;
      }
      // SPEC §4.2: Markdown fetches are ai unless the client is a named crawler (generic clients' count as ai).
      const named = cls === 'crawler' && !USER_AGENTS[visitor.ua]?.generic;
      const finalCls: UaClass = named ? 'crawler' : md || acceptMd ? 'ai' : cls;
      const ok2xx = (status >= 200 && status < 300) || status === 304;
      const q = !asset && method === 'GET' && ok2xx && finalCls !== 'crawler';
      emit({ ts, raw, path: norm, visitor: visitor.id, ordinal, ua: visitor.ua, status, method, acceptMd, cls: finalCls, q });
    }
  }
}

/** Writes the CSV and meta file (to temporary names, renamed at the end). */
export function writeDataset(o: GenOptions, onProgress?: (done: number) => void): DatasetMeta {
  fs.mkdirSync(DATA_DIR, { recursive: true });
  const files = datasetFiles(o);
  const t0 = Date.now();
  const tmp = `${files.csv}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w');
  let buf = `${COLUMNS.join(',')}\n`;
  let bytes = 0;
  const counts: DatasetMeta['counts'] = {
    events: 0,
    byClass: { human: 0, ai: 0, crawler: 0 },
    qualifying: 0,
    markdownFetches: 0,
    staticAssets: 0,
    non2xx: 0,
    nonGet: 0,
    withUrl: 0,
    distinctVisitors: 0,
    distinctPaths: 0,
  };
  // Distinct visitors by ordinal: a Set of ids cannot hold more than 2^24 entries (100M events have 20M visitors).
  const seenVisitor = new Uint8Array(o.visitors);
  const qPaths = new Set<string>();
  const assetRe = /\.(js|css|png|svg|ico|woff2|map)$/;
  generateEvents(o, (e) => {
    const iso = new Date(e.ts).toISOString();
    buf += `${iso},${iso.slice(0, 10)},${e.raw},${e.path},${e.visitor},${e.ua},${e.status},${e.method},${e.acceptMd ? 1 : 0},${e.cls},${e.q ? 1 : 0}\n`;
    counts.events++;
    counts.byClass[e.cls]++;
    if (e.q) {
      counts.qualifying++;
      qPaths.add(e.path);
    }
    if (/\.mdx?($|\?)/.test(e.raw)) counts.markdownFetches++;
    if (assetRe.test(e.path)) counts.staticAssets++;
    if (!((e.status >= 200 && e.status < 300) || e.status === 304)) counts.non2xx++;
    if (e.method !== 'GET') counts.nonGet++;
    if (e.raw.startsWith('http')) counts.withUrl++;
    if (seenVisitor[e.ordinal] === 0) {
      seenVisitor[e.ordinal] = 1;
      counts.distinctVisitors++;
    }
    if (buf.length > 1 << 20) {
      bytes += fs.writeSync(fd, buf);
      buf = '';
      onProgress?.(counts.events);
    }
  });
  bytes += fs.writeSync(fd, buf);
  fs.closeSync(fd);
  fs.renameSync(tmp, files.csv);
  counts.distinctPaths = qPaths.size;
  const fromDay = dayString(o.startDay, o.days - o.windowDays);
  const toDay = dayString(o.startDay, o.days);
  const meta: DatasetMeta = {
    version: 1,
    name: files.name,
    file: path.basename(files.csv),
    options: o,
    columns: COLUMNS,
    startDay: o.startDay,
    endDay: toDay,
    window: { dateFrom: fromDay, dateTo: toDay, fromMs: Date.parse(`${fromDay}T00:00:00.000Z`), toMs: Date.parse(`${toDay}T00:00:00.000Z`) },
    userAgents: USER_AGENTS.map((u) => u.ua),
    uaClasses: USER_AGENTS.map((u) => u.class),
    acceptMarkdown: ACCEPT_MARKDOWN,
    counts,
    bytes,
    generatedInMs: Date.now() - t0,
    generatedAt: new Date().toISOString(),
  };
  fs.writeFileSync(files.meta, `${JSON.stringify(meta, null, 2)}\n`);
  return meta;
}

/** Returns the dataset's meta, generating the files first when they are missing. */
export function ensureDataset(o: GenOptions, log: (msg: string) => void = () => {}): { meta: DatasetMeta; csv: string } {
  const files = datasetFiles(o);
  if (fs.existsSync(files.csv) && fs.existsSync(files.meta)) {
    return { meta: JSON.parse(fs.readFileSync(files.meta, 'utf8')) as DatasetMeta, csv: files.csv };
  }
  log(`generating ${o.events.toLocaleString('en')} events → ${files.csv}`);
  let next = 1_000_000;
  const meta = writeDataset(o, (n) => {
    if (n < next) return;
    log(`  ${n.toLocaleString('en')} events`);
    next += 1_000_000;
  });
  log(`generated ${meta.counts.events.toLocaleString('en')} events (${(meta.bytes / 1e6).toFixed(0)} MB) in ${(meta.generatedInMs / 1000).toFixed(1)} s`);
  return { meta, csv: files.csv };
}

// ---------------------------------------------------------------------------------------------------------
// Reading

export interface CsvEvent {
  ts: string;
  day: string;
  raw: string;
  path: string;
  visitor: string;
  ua: number;
  status: number;
  method: string;
  acceptMd: boolean;
  cls: UaClass;
  q: boolean;
}

export function parseLine(line: string): CsvEvent {
  const f = line.split(',');
  return {
    ts: f[0] as string,
    day: f[1] as string,
    raw: f[2] as string,
    path: f[3] as string,
    visitor: f[4] as string,
    ua: Number(f[5]),
    status: Number(f[6]),
    method: f[7] as string,
    acceptMd: f[8] === '1',
    cls: f[9] as UaClass,
    q: f[10] === '1',
  };
}

/** Streams the CSV's rows in file order. */
export async function* readEvents(csv: string): AsyncGenerator<CsvEvent> {
  const rl = readline.createInterface({ input: fs.createReadStream(csv, { highWaterMark: 1 << 20 }), crlfDelay: Number.POSITIVE_INFINITY });
  let header = true;
  for await (const line of rl) {
    if (header) {
      header = false;
      continue;
    }
    if (line) yield parseLine(line);
  }
}

/** The event as Inkwell's ingest API takes it (SPEC §4.1). */
export function toApiEvent(e: CsvEvent, meta: DatasetMeta): Record<string, unknown> {
  const out: Record<string, unknown> = e.raw.startsWith('http') ? { url: e.raw } : { path: e.raw };
  out.timestamp = e.ts;
  out.userAgent = meta.userAgents[e.ua];
  out.visitorId = e.visitor;
  out.status = e.status;
  out.method = e.method;
  if (e.acceptMd) out.accept = meta.acceptMarkdown;
  return out;
}
