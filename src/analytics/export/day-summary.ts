// Day summaries: everything the exports, the series and the agents and referrers breakdowns read of one
// (project, day), derived from that day's raw-event segments (src/analytics/segments/codec.ts). Pure: no I/O.
//
// A summary holds
// - the day's visitor set (daysets.ts): the distinct (path, visitor, class) triples of its qualifying views;
// - its qualifying views per path, human and AI apart (the views export sums them);
// - its facets (src/analytics/classify/facets.ts says which events count): per (facet, name) the distinct
//   visitors (ascending), views and requests; and the day's crawler requests (the series' crawler line).
// Everything it needs is in the segments: path id, visitor ordinal, class and qualifying flag (the flags
// byte), rule, method, status and referrer; whether a path is a static asset (the agents' page views) comes
// from the path's text in the project's dictionary, which never changes, passed in as `staticAsset`.
//
// A summary is valid for exactly one version of its (project, day) (analytics_day_versions; summary-store.ts).
// It also records `maxSeq`, the highest seq among the segments it was built from: extendSummary adds the
// segments above it. That is exact only while no segment at or below maxSeq was replaced (compaction,
// reclassification) since; the caller checks it (summary-service.ts says how), because views and requests
// are counts and must never count an event twice.

import { referrerHost } from '../classify/facets.ts';
import { isQualifyingParts } from '../classify/qualify.ts';
import { ByteReader, ByteWriter } from '../segments/bytes.ts';
import type { Segment } from '../segments/codec.ts';
import { CLS_AI, CLS_CRAWLER, FACET_AGENT, FACET_REFERRER } from '../store/tables.ts';
import {
  baseFor,
  buildDaySetFromWords,
  type DaySet,
  DaySetFormatError,
  DaySetIdRangeError,
  daySetBytes,
  decodeDaySet,
  encodeDaySet,
  FLAG_AI,
  FLAG_HUMAN,
  MAX_VISITOR,
} from './daysets.ts';

/** Qualifying views per path: ids ascending, counts at the same index. */
export interface DayViews {
  pathIds: Uint32Array;
  human: Float64Array;
  ai: Float64Array;
}

/** One facet name's rows of one day. */
export interface FacetGroup {
  /** FACET_AGENT or FACET_REFERRER. */
  facet: number;
  name: string;
  /** CLS_AI or CLS_CRAWLER for agents, 0 for referrers. */
  cls: number;
  /** Distinct visitor ordinals, ascending. */
  visitors: Float64Array;
  views: number;
  requests: number;
}

export interface DaySummary {
  day: number;
  /** The (project, day) version it is valid for. */
  version: number;
  /** Highest seq of the segments it covers (-1: none). */
  maxSeq: number;
  visitors: DaySet;
  views: DayViews;
  /** Ordered by facet, then name. */
  facets: FacetGroup[];
  /** Requests of crawlers (with a rule) that day. */
  crawlerRequests: number;
}

/** A decoded segment and its seq. */
export interface SeqSegment {
  seq: number;
  segment: Segment;
}

/** Approximate bytes a decoded summary occupies (for cache bounds). */
export function summaryBytes(s: DaySummary): number {
  let n = 300 + daySetBytes(s.visitors) + s.views.pathIds.byteLength * 5;
  for (const g of s.facets) n += 100 + g.name.length * 2 + g.visitors.byteLength;
  return n;
}

/** Path ids the segments name (to resolve their static-asset answers before building). */
export function segmentPathIds(segments: readonly SeqSegment[]): Set<number> {
  const out = new Set<number>();
  for (const { segment } of segments) for (const p of segment.pathId.values) out.add(p);
  return out;
}

const groupKey = (facet: number, name: string) => `${facet}\u0000${name}`;

interface GroupAcc {
  facet: number;
  name: string;
  cls: number;
  visitors: Set<number>;
  views: number;
  requests: number;
}

const CLASS_HUMAN = 0;
const CLASS_AI = 1;
const CLASS_CRAWLER = 2;
const QUALIFYING = 0x10;

/**
 * The summary of a day's segments (any order, each event counted once). `staticAsset(pathId)` answers for
 * every path id of the segments (segmentPathIds). Throws DaySetIdRangeError when the day's qualifying
 * visitors span more than 30 bits of ordinals (daysets.ts).
 */
export function buildSummary(day: number, version: number, segments: readonly SeqSegment[], staticAsset: (pathId: number) => boolean): DaySummary {
  let maxSeq = -1;
  let crawlerRequests = 0;
  // Pass 1: the visitors' range (for the day set's base), views, facets.
  let lo = Number.POSITIVE_INFINITY;
  let hi = -1;
  const views = new Map<number, [number, number]>();
  const groups = new Map<string, GroupAcc>();
  const group = (facet: number, name: string, cls: number): GroupAcc => {
    const k = groupKey(facet, name);
    let g = groups.get(k);
    if (!g) {
      g = { facet, name, cls, visitors: new Set(), views: 0, requests: 0 };
      groups.set(k, g);
    }
    return g;
  };
  for (const { seq, segment: s } of segments) {
    if (seq > maxSeq) maxSeq = seq;
    // Per dictionary entry of the segment, looked up once (not per event): referrer hosts and their groups, the
    // views counts of each path, the agent group of each rule (a rule names one class).
    const hosts = s.referrer.values.map((r) => referrerHost(r));
    const hostGroups: (GroupAcc | undefined)[] = new Array(hosts.length);
    const ruleGroups: (GroupAcc | undefined)[] = new Array(s.rule.values.length);
    const pathIndex = s.pathId.index;
    const pathValues = s.pathId.values;
    const pathViews: ([number, number] | undefined)[] = new Array(pathValues.length);
    for (let i = 0; i < s.n; i++) {
      const f = s.flags[i] as number;
      const c = f & 3;
      const v = s.visitor[i] as number;
      if (c !== CLASS_CRAWLER && (f & QUALIFYING) !== 0) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
        const pi = pathIndex[i] as number;
        let counts = pathViews[pi];
        if (counts === undefined) {
          const pid = pathValues[pi] as number;
          counts = views.get(pid);
          if (counts === undefined) {
            counts = [0, 0];
            views.set(pid, counts);
          }
          pathViews[pi] = counts;
        }
        counts[c === CLASS_HUMAN ? 0 : 1]++;
        const hi2 = s.referrer.index[i] as number;
        const host = hosts[hi2];
        if (host !== null && host !== undefined) {
          let g = hostGroups[hi2];
          if (g === undefined) {
            g = group(FACET_REFERRER, host, 0);
            hostGroups[hi2] = g;
          }
          g.visitors.add(v);
          g.views++;
          g.requests++;
        }
      }
      if (c !== CLASS_HUMAN) {
        const ri = s.rule.index[i] as number;
        const rule = s.rule.values[ri];
        if (rule !== null && rule !== undefined) {
          const method = s.method.values[s.method.index[i] as number];
          const status = s.status.values[s.status.index[i] as number];
          const view = isQualifyingParts(method, status, 'human', () => staticAsset(pathValues[pathIndex[i] as number] as number));
          let g = ruleGroups[ri];
          if (g === undefined) {
            g = group(FACET_AGENT, rule, c === CLASS_AI ? CLS_AI : CLS_CRAWLER);
            ruleGroups[ri] = g;
          }
          g.visitors.add(v);
          if (view) g.views++;
          g.requests++;
          if (c === CLASS_CRAWLER) crawlerRequests++;
        }
      }
    }
  }
  // Pass 2: the visitor words per path.
  const base = hi < 0 ? 0 : baseFor(lo, hi);
  const lists = new Map<number, number[]>();
  for (const { segment: s } of segments) {
    const pathIndex = s.pathId.index;
    const pathValues = s.pathId.values;
    const pathLists: (number[] | undefined)[] = new Array(pathValues.length);
    for (let i = 0; i < s.n; i++) {
      const f = s.flags[i] as number;
      const c = f & 3;
      if (c === CLASS_CRAWLER || (f & QUALIFYING) === 0) continue;
      const pi = pathIndex[i] as number;
      let l = pathLists[pi];
      if (l === undefined) {
        const pid = pathValues[pi] as number;
        l = lists.get(pid);
        if (l === undefined) {
          l = [];
          lists.set(pid, l);
        }
        pathLists[pi] = l;
      }
      const rel = (s.visitor[i] as number) - base;
      // Out of range (-1): rejected in finish.
      l.push(rel >= 0 && rel <= MAX_VISITOR ? rel * 4 + (c === CLASS_HUMAN ? FLAG_HUMAN : FLAG_AI) : -1);
    }
  }
  return finish(day, version, maxSeq, crawlerRequests, base, lists, views, groups);
}

/** The set's values ascending (filled by a loop: `Float64Array.from` of a Set is slower). */
function sortedOf(set: Set<number>): Float64Array {
  const out = new Float64Array(set.size);
  let i = 0;
  for (const v of set) out[i++] = v;
  return out.sort();
}

function finish(
  day: number,
  version: number,
  maxSeq: number,
  crawlerRequests: number,
  base: number,
  lists: Map<number, number[]>,
  views: Map<number, [number, number]>,
  groups: Map<string, GroupAcc>,
): DaySummary {
  const pathIds = [...lists.keys()].sort((a, b) => a - b);
  // One pass per path, copied by index (`Uint32Array.from` walks the array through its iterator, and `includes`
  // was a second pass); with sortedOf below, buildSummary over 90 days of 300k events took 140 ms against 228
  // (median of 9 alternating rounds in one process, loaded machine; the cold series profile had it at half).
  const words = pathIds.map((p) => {
    const l = lists.get(p) as number[];
    const w = new Uint32Array(l.length);
    for (let i = 0; i < l.length; i++) {
      const x = l[i] as number;
      if (x < 0) throw new DaySetIdRangeError(`the visitors of day ${day} span more than ${MAX_VISITOR + 1} ordinals`);
      w[i] = x;
    }
    return w;
  });
  const visitors = buildDaySetFromWords(day, version, base, pathIds, words);
  const viewIds = [...views.keys()].sort((a, b) => a - b);
  const human = new Float64Array(viewIds.length);
  const ai = new Float64Array(viewIds.length);
  viewIds.forEach((p, k) => {
    const c = views.get(p) as [number, number];
    human[k] = c[0];
    ai[k] = c[1];
  });
  const facets: FacetGroup[] = [...groups.values()]
    .sort((a, b) => a.facet - b.facet || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((g) => ({ facet: g.facet, name: g.name, cls: g.cls, visitors: sortedOf(g.visitors), views: g.views, requests: g.requests }));
  return { day, version, maxSeq, visitors, views: { pathIds: new Uint32Array(viewIds), human, ai }, facets, crawlerRequests };
}

/**
 * `a` with the events of `b` added: valid only when `b` summarises events `a` does not (segments above
 * a.maxSeq, none of a's replaced since: see the module comment). Neither is changed.
 */
export function mergeSummaries(a: DaySummary, b: DaySummary, version: number): DaySummary {
  // Visitor sets: per path, both sets' words over a common base, or-ed by the builder.
  const sa = a.visitors;
  const sb = b.visitors;
  const empty = (s: DaySet) => s.pairs.length === 0;
  const lo = empty(sa) ? sb.minVisitor : empty(sb) ? sa.minVisitor : Math.min(sa.minVisitor, sb.minVisitor);
  const hi = Math.max(sa.maxVisitor, sb.maxVisitor);
  const base = hi < 0 ? 0 : baseFor(lo, hi);
  const lists = new Map<number, number[]>();
  for (const s of [sa, sb]) {
    const shift = s.base - base;
    for (let k = 0; k < s.pathIds.length; k++) {
      const p = s.pathIds[k] as number;
      let l = lists.get(p);
      if (!l) {
        l = [];
        lists.set(p, l);
      }
      for (let i = s.starts[k] as number; i < (s.starts[k + 1] as number); i++) {
        const x = s.pairs[i] as number;
        const rel = (x >>> 2) + shift;
        l.push(rel >= 0 && rel <= MAX_VISITOR ? rel * 4 + (x & 3) : -1);
      }
    }
  }
  const views = new Map<number, [number, number]>();
  for (const v of [a.views, b.views]) {
    for (let k = 0; k < v.pathIds.length; k++) {
      const p = v.pathIds[k] as number;
      const c = views.get(p);
      if (c) {
        c[0] += v.human[k] as number;
        c[1] += v.ai[k] as number;
      } else views.set(p, [v.human[k] as number, v.ai[k] as number]);
    }
  }
  const groups = new Map<string, GroupAcc>();
  for (const g of [...a.facets, ...b.facets]) {
    const k = groupKey(g.facet, g.name);
    let e = groups.get(k);
    if (!e) {
      e = { facet: g.facet, name: g.name, cls: g.cls, visitors: new Set(), views: 0, requests: 0 };
      groups.set(k, e);
    }
    for (const v of g.visitors) e.visitors.add(v);
    e.views += g.views;
    e.requests += g.requests;
  }
  return finish(a.day, version, Math.max(a.maxSeq, b.maxSeq), a.crawlerRequests + b.crawlerRequests, base, lists, views, groups);
}

// ---- encoding ----------------------------------------------------------------------------------------
//
// Format 1: varint(1) varint(maxSeq + 1) varint(crawler requests) varint(day set bytes) day set (daysets.ts encodeDaySet)
//   varint(view paths) × (varint(path id − previous) varint(human) varint(ai))
//   varint(groups) × (byte facet, byte cls, varint(name bytes) name (UTF-8), varint(views), varint(requests),
//                     varint(visitors) × varint(visitor − previous visitor, the first from 0))
// Varints are canonical little-endian base-128 of non-negative integers below 2^53 (segments/bytes.ts).

export class SummaryFormatError extends Error {}

/** What a corrupt or foreign summary blob throws. */
export const DaySummaryFormatErrors = [SummaryFormatError, DaySetFormatError];

const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder('utf-8', { fatal: true });

export function encodeSummary(s: DaySummary): Uint8Array {
  const o = new ByteWriter(256);
  o.varint(1);
  o.varint(s.maxSeq + 1);
  o.varint(s.crawlerRequests);
  const set = encodeDaySet(s.visitors);
  o.varint(set.length);
  o.bytes(set);
  o.varint(s.views.pathIds.length);
  let prev = 0;
  for (let k = 0; k < s.views.pathIds.length; k++) {
    const p = s.views.pathIds[k] as number;
    o.varint(p - prev);
    prev = p;
    o.varint(s.views.human[k] as number);
    o.varint(s.views.ai[k] as number);
  }
  o.varint(s.facets.length);
  for (const g of s.facets) {
    o.u8(g.facet);
    o.u8(g.cls);
    const name = utf8.encode(g.name);
    o.varint(name.length);
    o.bytes(name);
    o.varint(g.views);
    o.varint(g.requests);
    o.varint(g.visitors.length);
    let pv = 0;
    for (const v of g.visitors) {
      o.varint(v - pv);
      pv = v;
    }
  }
  return o.finish();
}

/**
 * The visitor set of a summary blob alone (the visitors export of a long window: the views and facets after it
 * are neither decoded nor kept); throws as decodeSummary does for what it reads.
 */
export function decodeSummaryVisitors(day: number, version: number, data: Uint8Array): DaySet {
  return decodeDaySet(day, version, summaryVisitorBytes(data));
}

/** The bytes of a summary blob's visitor set (a day set blob, daysets.ts), not decoded. */
export function summaryVisitorBytes(data: Uint8Array): Uint8Array {
  const r = new ByteReader(data, 'summary', (m) => new SummaryFormatError(m));
  const format = r.varint();
  if (format !== 1) throw new SummaryFormatError(`unknown summary format ${format}`);
  r.varint();
  r.varint();
  const setLen = r.varint();
  if (setLen > r.remaining) throw new SummaryFormatError('summary count exceeds the blob');
  return r.take(setLen);
}

/** Decodes a summary blob; corrupt or hostile input throws SummaryFormatError (or DaySetFormatError). */
export function decodeSummary(day: number, version: number, data: Uint8Array): DaySummary {
  const r = new ByteReader(data, 'summary', (m) => new SummaryFormatError(m));
  const read = (): number => r.varint();
  const count = (): number => {
    const n = read();
    if (n > r.remaining) throw new SummaryFormatError('summary count exceeds the blob');
    return n;
  };
  const format = read();
  if (format !== 1) throw new SummaryFormatError(`unknown summary format ${format}`);
  const maxSeq = read() - 1;
  const crawlerRequests = read();
  const setLen = count();
  const visitors = decodeDaySet(day, version, r.take(setLen));
  const nViews = count();
  const pathIds = new Uint32Array(nViews);
  const human = new Float64Array(nViews);
  const ai = new Float64Array(nViews);
  let prev = 0;
  for (let k = 0; k < nViews; k++) {
    prev += read();
    if (prev > 0xffff_ffff) throw new SummaryFormatError('summary path id out of range');
    pathIds[k] = prev;
    human[k] = read();
    ai[k] = read();
  }
  const nGroups = count();
  const facets: FacetGroup[] = [];
  for (let k = 0; k < nGroups; k++) {
    const facet = r.u8();
    const cls = r.u8();
    if (facet !== FACET_AGENT && facet !== FACET_REFERRER) throw new SummaryFormatError(`unknown facet ${facet}`);
    const nameLen = count();
    const nameBytes = r.take(nameLen);
    let name: string;
    try {
      name = utf8Strict.decode(nameBytes);
    } catch {
      throw new SummaryFormatError('summary facet name is not UTF-8');
    }
    const views = read();
    const requests = read();
    const n = count();
    const vs = new Float64Array(n);
    let pv = 0;
    for (let i = 0; i < n; i++) {
      pv += read();
      if (pv > Number.MAX_SAFE_INTEGER) throw new SummaryFormatError('summary visitor out of range');
      vs[i] = pv;
    }
    facets.push({ facet, name, cls, visitors: vs, views, requests });
  }
  if (r.remaining !== 0) throw new SummaryFormatError('summary blob has trailing bytes');
  return { day, version, maxSeq, visitors, views: { pathIds, human, ai }, facets, crawlerRequests };
}
