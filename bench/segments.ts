// Raw-event segments (src/analytics/segments): bytes per event and encode / decode throughput on the benchmark
// dataset — `npm run bench:segments -- [--events 1M] [--rounds 5] [--flush 1000]`. No service, no database: the
// codec alone, to know whether the ≤ 40 bytes per event target of issue 16 holds before a store is built on it.
//
// The dataset's events are replayed as ingest would store them: path ids, visitor ordinals and user-agent ids
// numbered in order of first appearance (as the dictionaries do), the raw path kept only when it differs from the
// normalised one, class / category / rule from Inkwell's classifier. Per (project, day):
// - live: segments of --flush events (and of a tenth of that) in arrival order, as flushes would write them;
// - compacted: those merged into one per day (mergeSegments), at the default level and at --compact-level;
// - imported: the same events as `inkwell analytics import` stores them (source import, a dedup hash of each
//   line's key computed as import.ts does, the CSV row standing for the log line), compacted.
// Sizes are measured on every --every-th day (all days by default; every event still gets its ids).
// The dictionaries the segments refer to (visitor keys, paths, user agents) are sized too, as text and zstd.
// Baselines in the same run: the CSV itself, and its rows compressed by zstd per day at the same level.
// Throughput: rounds over the first days holding at least --sample events: encode (compacted, one per day),
// decode to columns, decode to event objects; medians over rounds.
import fs from 'node:fs';
import path from 'node:path';
import { classifyParts, RULES_VERSION } from '../src/analytics/classify/classify.ts';
import { isMarkdownPath } from '../src/analytics/classify/normalize.ts';
import { lineDedupKey, lineHash, OccurrenceCounter } from '../src/analytics/import/import.ts';
import {
  DEFAULT_LEVEL,
  decodeSegment,
  encodeSegment,
  mergeSegments,
  type SegmentEvent,
  segmentColumns,
  segmentEvents,
} from '../src/analytics/segments/codec.ts';
import { zstdCompress } from '../src/analytics/segments/compress.ts';
import { dedupHash } from '../src/analytics/segments/dedup.ts';
import { genArgs, intArg, parseArgs } from './lib/args.ts';
import { ensureDataset, genOptions, parseLine, RESULTS_DIR } from './lib/dataset.ts';
import { environment, peakRssMb, writeResults } from './lib/results.ts';
import { median, round } from './lib/stats.ts';

/** Issue 16's measurement of today's layout (1M imported events: SQLite file + WAL), not measured here. */
const SQLITE_TODAY_BYTES_PER_EVENT = 296;

const args = parseArgs(process.argv.slice(2));
const rounds = intArg(args, 'rounds') ?? 5;
const flush = intArg(args, 'flush') ?? 1000;
const compactLevel = intArg(args, 'compact-level') ?? 9;
const sample = intArg(args, 'sample') ?? 300_000;
const every = intArg(args, 'every') ?? 1;
const log = (m: string) => console.log(m);
const { meta, csv } = ensureDataset(genOptions({ events: 1_000_000, ...genArgs(args) }), log);

// ---------------------------------------------------------------------------------------------------------
// Replay as ingest would store it

const pathIds = new Map<string, number>();
const visitorOrds = new Map<string, number>();
const uaIds = new Map<number, number>();
const classes = new Map<string, ReturnType<typeof classifyParts>>();
const occurrences = new OccurrenceCounter();
const idOf = <K>(m: Map<K, number>, k: K): number => {
  let id = m.get(k);
  if (id === undefined) {
    id = m.size + 1;
    m.set(k, id);
  }
  return id;
};

function toEvent(line: string): SegmentEvent {
  const e = parseLine(line);
  const ts = Date.parse(e.ts);
  const ua = meta.userAgents[e.ua] as string;
  const accept = e.acceptMd ? meta.acceptMarkdown : null;
  const md = isMarkdownPath(e.raw);
  const ck = `${e.ua}\u0000${e.acceptMd ? 1 : 0}${md ? 1 : 0}`;
  let c = classes.get(ck);
  if (c === undefined) {
    c = classifyParts(ua, accept, md);
    classes.set(ck, c);
  }
  const live: SegmentEvent = {
    ts,
    pathId: idOf(pathIds, e.path),
    rawPath: e.raw === e.path ? null : e.raw,
    visitor: idOf(visitorOrds, e.visitor),
    uaId: idOf(uaIds, e.ua),
    accept,
    method: e.method,
    status: e.status,
    referrer: null,
    cls: c.class,
    category: c.category,
    rule: c.rule,
    rulesVersion: RULES_VERSION,
    qualifying: e.q,
    source: 'api',
    dedup: null,
  };
  return live;
}

/** The event as `inkwell analytics import` would store it (the CSV row standing for the log line). */
function asImported(line: string, live: SegmentEvent): SegmentEvent {
  const hash = lineHash(line);
  const key = lineDedupKey(hash, occurrences.next(hash), new Date(live.ts).toISOString());
  return { ...live, source: 'import', dedup: dedupHash(key) };
}

// ---------------------------------------------------------------------------------------------------------
// Sizes, day by day (the CSV is in time order)

const sizes = {
  measuredDays: 0,
  csv: 0,
  csvZstd: 0,
  live: 0,
  liveSmall: 0,
  liveSegments: 0,
  compacted: 0,
  compactedHigh: 0,
  imported: 0,
  importedHigh: 0,
  days: 0,
};
const columnBytes: Record<string, { raw: number; zstd: number }> = {};
const kept: SegmentEvent[][] = [];
let keptEvents = 0;
let events = 0;
let measured = 0;
let verified = 0;

function sameEvents(a: SegmentEvent[], b: SegmentEvent[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as SegmentEvent;
    const y = b[i] as SegmentEvent;
    for (const k of Object.keys(x) as (keyof SegmentEvent)[]) if (x[k] !== y[k]) return false;
  }
  return true;
}

function day(lines: string[]): void {
  if (lines.length === 0) return;
  // Every event gets its ids (numbered in order of first appearance, as the dictionaries do); sizes are
  // measured on every --every-th day.
  const live = lines.map(toEvent);
  events += live.length;
  sizes.days++;
  if ((sizes.days - 1) % every !== 0) return;
  sizes.measuredDays++;
  measured += live.length;
  const text = `${lines.join('\n')}\n`;
  sizes.csv += Buffer.byteLength(text);
  sizes.csvZstd += encodeZstd(text);
  const imported = lines.map((line, i) => asImported(line, live[i] as SegmentEvent));
  const flushes: Uint8Array[] = [];
  for (let i = 0; i < live.length; i += flush) flushes.push(encodeSegment(live.slice(i, i + flush)));
  for (const s of flushes) sizes.live += s.length;
  sizes.liveSegments += flushes.length;
  const small = Math.max(1, Math.floor(flush / 10));
  for (let i = 0; i < live.length; i += small) sizes.liveSmall += encodeSegment(live.slice(i, i + small)).length;
  const [compacted, ...more] = mergeSegments(flushes);
  if (!compacted || more.length > 0) throw new Error('a day compacted into more than one segment');
  sizes.compacted += compacted.length;
  // The rest are encoded directly: a merge of flushes is byte for byte the segment of all their events
  // (test/analytics/segments/codec.test.ts, "merge = concatenation").
  sizes.compactedHigh += encodeSegment(live, { compression: compactLevel }).length;
  const importedDay = encodeSegment(imported);
  sizes.imported += importedDay.length;
  sizes.importedHigh += encodeSegment(imported, { compression: compactLevel }).length;
  // Exactness: the compacted day decodes to its events (sorted by time; the CSV already is).
  if (!sameEvents(segmentEvents(decodeSegment(compacted)), live)) throw new Error(`day ${sizes.days}: the compacted segment does not decode to its events`);
  if (!sameEvents(segmentEvents(decodeSegment(importedDay)), imported))
    throw new Error(`day ${sizes.days}: the imported segment does not decode to its events`);
  verified += live.length;
  for (const [name, bytes] of Object.entries(segmentColumns(importedDay))) {
    columnBytes[name] ??= { raw: 0, zstd: 0 };
    const c = columnBytes[name];
    c.raw += bytes.length;
    c.zstd += encodeZstd(bytes);
  }
  if (keptEvents < sample) {
    kept.push(imported);
    keptEvents += imported.length;
  }
}

function encodeZstd(x: string | Uint8Array): number {
  return zstdCompress(typeof x === 'string' ? Buffer.from(x) : x, DEFAULT_LEVEL).length;
}

const t0 = performance.now();
{
  let current = '';
  let lines: string[] = [];
  let header = true;
  const fd = fs.openSync(csv, 'r');
  const buf = Buffer.alloc(1 << 22);
  let rest = '';
  for (;;) {
    const n = fs.readSync(fd, buf, 0, buf.length, null);
    if (n === 0) break;
    const chunk = rest + buf.toString('utf8', 0, n);
    const parts = chunk.split('\n');
    rest = parts.pop() as string;
    for (const line of parts) {
      if (header) {
        header = false;
        continue;
      }
      if (line === '') continue;
      const d = line.slice(0, 10);
      if (d !== current) {
        day(lines);
        lines = [];
        current = d;
        if (sizes.days % 10 === 0 && sizes.days > 0) log(`  day ${sizes.days}: ${events.toLocaleString('en')} events`);
      }
      lines.push(line);
    }
  }
  fs.closeSync(fd);
  if (rest !== '') lines.push(rest);
  day(lines);
}
if (events !== meta.counts.events) throw new Error(`read ${events} events, the dataset has ${meta.counts.events}`);
log(`sizes measured over ${sizes.days} days in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

// ---------------------------------------------------------------------------------------------------------
// Throughput

const perRound = { encode: [] as number[], decodeColumns: [] as number[], decodeEvents: [] as number[], encodeFlush: [] as number[] };
const keptSegments = kept.map((evs) => encodeSegment(evs));
for (let r = 0; r < rounds; r++) {
  let t = performance.now();
  for (const evs of kept) encodeSegment(evs);
  perRound.encode.push(keptEvents / ((performance.now() - t) / 1000));
  t = performance.now();
  for (const evs of kept) for (let i = 0; i < evs.length; i += flush) encodeSegment(evs.slice(i, i + flush));
  perRound.encodeFlush.push(keptEvents / ((performance.now() - t) / 1000));
  t = performance.now();
  for (const s of keptSegments) decodeSegment(s);
  perRound.decodeColumns.push(keptEvents / ((performance.now() - t) / 1000));
  t = performance.now();
  for (const s of keptSegments) segmentEvents(decodeSegment(s));
  perRound.decodeEvents.push(keptEvents / ((performance.now() - t) / 1000));
  log(
    `round ${r + 1}/${rounds}: encode ${Math.round(perRound.encode.at(-1) as number).toLocaleString('en')} events/s, decode ${Math.round(perRound.decodeColumns.at(-1) as number).toLocaleString('en')} events/s`,
  );
}

const perEvent = (bytes: number) => round(bytes / measured, 2);

// The dictionaries the segments refer to (not part of a segment, but of the same 40-byte budget): their text
// per event of the whole dataset, as is and as one zstd blob in id order (a lower bound for any layout that
// keeps the text).
function dictionary(keys: readonly string[]): { entries: number; textBytesPerEvent: number; zstdBytesPerEvent: number } {
  const text = Buffer.from(keys.join('\n'));
  return { entries: keys.length, textBytesPerEvent: round(text.length / events, 2), zstdBytesPerEvent: round(encodeZstd(text) / events, 2) };
}
const dictionaries = {
  visitors: dictionary([...visitorOrds.keys()].map((v) => `v:${v}`)),
  paths: dictionary([...pathIds.keys()]),
  userAgents: dictionary([...uaIds.keys()].map((k) => meta.userAgents[k] as string)),
};
const med = (xs: number[]) => Math.round(median(xs));
const result = {
  environment: environment(),
  method: {
    events,
    rounds,
    flushEvents: flush,
    level: DEFAULT_LEVEL,
    compactLevel,
    everyNthDay: every,
    measuredEvents: measured,
    throughputSampleEvents: keptEvents,
  },
  dataset: { name: meta.name, counts: meta.counts, bytes: meta.bytes },
  inkwell: {
    days: sizes.days,
    measuredDays: sizes.measuredDays,
    liveSegments: sizes.liveSegments,
    liveBytesPerEvent: perEvent(sizes.live),
    /** Flushes of a tenth of --flush events (page-view-shaped ingest commits small batches), before compaction. */
    liveSmallBytesPerEvent: perEvent(sizes.liveSmall),
    compactedBytesPerEvent: perEvent(sizes.compacted),
    compactedHighBytesPerEvent: perEvent(sizes.compactedHigh),
    importedCompactedBytesPerEvent: perEvent(sizes.imported),
    importedCompactedHighBytesPerEvent: perEvent(sizes.importedHigh),
    dedupBytesPerEvent: perEvent(sizes.imported - sizes.compacted),
    encodeEventsPerSecond: med(perRound.encode),
    encodeFlushEventsPerSecond: med(perRound.encodeFlush),
    decodeColumnsEventsPerSecond: med(perRound.decodeColumns),
    decodeEventsPerSecond: med(perRound.decodeEvents),
    verifiedEvents: verified,
    peakRssMb: peakRssMb(),
  },
  baseline: {
    csv: { bytesPerEvent: perEvent(sizes.csv) },
    csvZstd: { bytesPerEvent: perEvent(sizes.csvZstd), level: DEFAULT_LEVEL },
    sqliteToday: { bytesPerEvent: SQLITE_TODAY_BYTES_PER_EVENT, source: 'issue 16 (1M imported events, SQLite file + WAL), not this run' },
  },
  /** Imported, compacted segments: each column's bytes before compression and compressed alone (an estimate of its share). */
  dictionaries,
  columns: Object.fromEntries(Object.entries(columnBytes).map(([k, v]) => [k, { rawBytesPerEvent: perEvent(v.raw), zstdBytesPerEvent: perEvent(v.zstd) }])),
  perRound: Object.fromEntries(Object.entries(perRound).map(([k, v]) => [k, v.map((x) => Math.round(x))])),
};
const { latest } = writeResults('segments', result);
console.log(JSON.stringify({ inkwell: result.inkwell, baseline: result.baseline, dictionaries, columns: result.columns }, null, 2));
console.log(`→ ${path.relative(process.cwd(), latest)} (${path.relative(process.cwd(), RESULTS_DIR)})`);
